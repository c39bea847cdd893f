"""Step copies that never stall the engine: a CPU tensor is copied at once; a CUDA tensor by a
non-blocking copy into pinned memory, ordered on the stream, waited for on the writer's side."""
import numpy as np
import pytest

from kvviz.capture.host import KERNEL_RATIO, Pending, resolve, snapshot


def test_host_values_are_copied_at_once():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.int32)
    snap = snapshot(t[2:5])
    t[2:5] = -1
    assert isinstance(snap, np.ndarray) and snap.tolist() == [2, 3, 4]
    a = np.array([1, 2])
    s = snapshot(a)
    a[0] = 9
    assert s.tolist() == [1, 2]


def test_resolve_expands_a_v2_table_into_kernel_blocks():
    out = resolve({"block_table": np.array([[3, 5]], dtype=np.int32), KERNEL_RATIO: 2, "x": 1})
    assert out["block_table"].tolist() == [[6, 7, 10, 11]] and KERNEL_RATIO not in out and out["x"] == 1


@pytest.mark.gpu
def test_a_device_copy_holds_the_values_of_its_point_in_the_stream():
    torch = pytest.importorskip("torch")
    dev = torch.arange(1 << 20, dtype=torch.int64, device="cuda")
    snap = snapshot(dev[::2])
    assert isinstance(snap, Pending)
    dev.mul_(-1)                                   # a later kernel on the same stream
    got = resolve({"positions": snap})["positions"]
    assert np.array_equal(got, np.arange(0, 1 << 20, 2))
