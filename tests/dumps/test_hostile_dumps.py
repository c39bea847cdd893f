"""Bad dumps: one clear BadInput sentence (exit 2 in the CLI), never a traceback."""
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dump_fixtures import base_dump, base_mapping
from kvviz.dumps.format import dump_to_npz_bytes, load_dump, load_dump_bytes
from kvviz.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]


def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def good_npz() -> bytes:
    return dump_to_npz_bytes(base_dump())


def bad(data: bytes, match: str, **kw):
    with pytest.raises(BadInput, match=match):
        load_dump_bytes(data, "x", **kw)


def test_truncated_npz():
    data = good_npz()
    bad(data[: len(data) // 2], "not a readable .npz archive")


def test_corrupt_member_crc():
    data = bytearray(good_npz())
    i = data.index(b"\x93NUMPY") + 200        # inside the first array's data
    data[i] ^= 0xFF
    bad(bytes(data), "cannot be read|claims shape|truncated")


def test_pickled_object_array():
    m = {k: np.asarray(v) for k, v in base_mapping().items()}
    m["block_table"] = np.array([[1, "x"]], dtype=object)
    bad(npz(**m), "pickled Python objects")


def test_wrong_dtypes():
    m = {k: np.asarray(v) for k, v in base_mapping().items()}
    m["block_table"] = m["block_table"].astype(np.float32)
    bad(npz(**m), "'block_table' has dtype float32; integers are required")
    j = base_dump().to_json()
    j["seq_lens"] = [1.5, 2, 0]
    bad(json.dumps(j).encode(), "'seq_lens' has dtype float64")
    j = base_dump().to_json()
    j["num_blocks"] = True
    bad(json.dumps(j).encode(), "'num_blocks' must be an integer, got bool")
    j = base_dump().to_json()
    j["block_size"] = "16"
    bad(json.dumps(j).encode(), "'block_size' must be an integer, got str")
    j = base_dump().to_json()
    j["ref_cnt"] = [1] * 15 + [2 ** 40]
    bad(json.dumps(j).encode(), "'ref_cnt' has values outside the int32 range")


def test_wrong_shapes():
    j = base_dump().to_json()
    j["block_table"] = [[1, 2], [3]]
    bad(json.dumps(j).encode(), "not a rectangular array")
    j = base_dump().to_json()
    j["block_table"] = [1, 2, 3]
    bad(json.dumps(j).encode(), "must have 2 dimensions, got shape \\(3,\\)")
    j = base_dump().to_json()
    j["num_blocks_per_row"] = [3, 2]
    bad(json.dumps(j).encode(), "num_blocks_per_row has 2 entries but block_table has 4 rows")
    j = base_dump().to_json()
    j["block_table_device"] = [[0] * 5] * 4
    bad(json.dumps(j).encode(), "block_table_device has shape \\(4, 5\\)")
    j = base_dump().to_json()
    j["ref_cnt"] = [0] * 3
    bad(json.dumps(j).encode(), "ref_cnt has 3 entries; it needs one per block \\(16\\)")
    j = base_dump().to_json()
    j["query_start_loc"] = [0, 3, 2, 3]
    bad(json.dumps(j).encode(), "query_start_loc decreases")
    j = base_dump().to_json()
    j["slot_mapping"] = [12, 13]
    bad(json.dumps(j).encode(), "slot_mapping has 2 entries but query_start_loc counts 3 tokens")


def test_negative_and_huge_dimensions():
    j = base_dump().to_json()
    j["num_reqs"] = -1
    bad(json.dumps(j).encode(), "'num_reqs' must be in \\[0, 4\\], got -1")
    j = base_dump().to_json()
    j["num_reqs"] = 5
    bad(json.dumps(j).encode(), "'num_reqs' must be in \\[0, 4\\], got 5")
    j = base_dump().to_json()
    j["num_blocks_per_row"] = [3, 2, -1, 0]
    bad(json.dumps(j).encode(), "num_blocks_per_row\\[2\\] = -1 is outside \\[0, 4\\]")
    j = base_dump().to_json()
    j["block_size"] = 1 << 20
    bad(json.dumps(j).encode(), "'block_size' must be in")
    j = base_dump().to_json()
    j["block_table"] = [[]]
    bad(json.dumps(j).encode(), "needs at least one row and one column")


def test_npz_header_claims_huge_shape():
    """A tiny member whose header claims 2^40 entries is refused before anything is allocated."""
    # rewrite one member through zipfile so the archive itself stays valid
    zin = zipfile.ZipFile(io.BytesIO(good_npz()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "block_table.npy":
                fmt = np.lib.format
                f = io.BytesIO()
                fmt.write_array_header_1_0(f, {"descr": "<i4", "fortran_order": False,
                                               "shape": (1 << 40, 4)})
                raw = f.getvalue() + b"\0" * 64      # header (with magic) + 64 bytes of data
            zout.writestr(info.filename, raw)
    bad(out.getvalue(), "has shape \\(1099511627776, 4\\); the limits are")   # refused from the header


def test_size_bounds(tmp_path):
    data = good_npz()
    bad(data, "is [\\d.]+ (bytes|KiB); the limit is 100 bytes", max_bytes=100)
    js = json.dumps(base_dump().to_json()).encode()
    bad(js, " of JSON; the limit is 50 bytes", max_json_bytes=50)
    p = tmp_path / "big.npz"
    p.write_bytes(data)
    with pytest.raises(BadInput, match="big.npz is [\\d.]+ (bytes|KiB); the limit is 10 bytes"):
        load_dump(str(p), max_bytes=10)


def test_sizes_in_human_units_and_a_scenario_recognised():
    """Limits read in KiB/MiB (65.4 MiB, not 68601612); a kvviz scenario is named as one, with where
    to open it, instead of "lacks the required keys"."""
    from kvviz.errors import ScenarioNotDump, size_text

    assert [size_text(n) for n in (101, 1536, 68601612, 67108864)] == ["101 bytes", "1.5 KiB", "65.4 MiB", "64 MiB"]
    with pytest.raises(BadInput, match=r"^big\.npz is 65\.4 MiB; the limit is 64 MiB$"):
        load_dump_bytes(b"PK\x03\x04" + b"\0" * (68601612 - 4), "big.npz", max_bytes=64 << 20)
    scenario = json.dumps({"name": "s", "config": {"block_size": 4}, "requests": [{"id": "A", "prompt_len": 5}],
                           "actions": []}).encode()
    with pytest.raises(ScenarioNotDump, match=r"^s\.json: this is a kvviz scenario, not a table dump: open it on "
                                              r"the Step through page"):
        load_dump_bytes(scenario, "s.json")


def test_not_a_dump_at_all():
    bad(b"", "is empty")
    bad(b"\x93NUMPY\x01\x00", "single .npy array")
    bad(b"\xff\xfe garbage", "neither an .npz archive nor UTF-8 JSON")
    bad(b"[1, 2]", "must be a JSON object")
    bad(b'{"kvviz_dump_version": 1}', "lacks the required keys 'block_size', 'num_blocks'")
    bad(b"{" * 100000, "nested too deeply|not valid JSON")
    j = base_dump().to_json()
    j["kvviz_dump_version"] = 2
    bad(json.dumps(j).encode(), "kvviz_dump_version is 2; this kvviz reads version 1")


@pytest.mark.parametrize("content", [b"PK\x03\x04 truncated", b"{not json", b""])
def test_cli_exit_2_one_line(tmp_path, content):
    p = tmp_path / "d.npz"
    p.write_bytes(content)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "kvviz", "check", str(p)], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("kvviz check: d.npz")


def _rewrite_member(member: str, raw_fn=None, info_fn=None) -> bytes:
    """good_npz() with one member's bytes (raw_fn) or zip header fields (info_fn) replaced."""
    zin = zipfile.ZipFile(io.BytesIO(good_npz()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == member and raw_fn:
                raw = raw_fn(raw)
            zout.writestr(info.filename, raw)
    data = bytearray(out.getvalue())
    if info_fn:
        info_fn(data, member)
    return bytes(data)


def _patch_headers(data: bytearray, member: str, offset: int, value: bytes):
    """Patch a field at ``offset`` in the local and central headers of ``member``."""
    name = member.encode()
    for sig, name_at in ((b"PK\x03\x04", 30), (b"PK\x01\x02", 46)):
        i = 0
        while (i := data.find(sig, i)) >= 0:
            if data[i + name_at: i + name_at + len(name)] == name:
                o = offset if sig == b"PK\x03\x04" else offset + 2
                data[i + o: i + o + len(value)] = value
            i += 4


@pytest.mark.parametrize("case,match", [
    ("header_syntax", "array 'block_table' cannot be read \\(TokenError|array 'block_table' cannot be read"),
    ("encrypted", "cannot be read \\(RuntimeError: .*encrypted"),
    ("compression_99", "cannot be read \\(NotImplementedError"),
    ("negative_dims", "declares a negative dimension \\(-1, -4\\)"),
])
def test_hostile_archives_are_one_sentence(tmp_path, case, match):
    """Archive tricks that used to escape as tracebacks (exit 1, read as 'findings' by scripts):
    a header that is not a Python literal, the encryption flag, an unknown compression method,
    negative dimensions. Each is one BadInput naming the file, and exit 2 in the CLI."""
    def header(shape_text):
        def fn(raw):
            hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': %s, }" % shape_text
            hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
            return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 64
        return fn
    if case == "header_syntax":
        data = _rewrite_member("block_table.npy", header("(8, 32"))
    elif case == "negative_dims":
        data = _rewrite_member("block_table.npy", header("(-1, -4)"))
    elif case == "encrypted":
        data = _rewrite_member("block_table.npy", info_fn=lambda d, m: _patch_headers(d, m, 6, b"\x01\x00"))
    else:
        data = _rewrite_member("block_table.npy", info_fn=lambda d, m: _patch_headers(d, m, 8, b"\x63\x00"))
    with pytest.raises(BadInput, match="^x: .*" + match):
        load_dump_bytes(data, "x")
    p = tmp_path / "h.npz"
    p.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "kvviz", "check", str(p)], cwd=ROOT, capture_output=True, text=True,
                       env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("kvviz check: h.npz")


def test_json_integer_past_the_digit_limit():
    j = json.dumps(base_dump().to_json()).replace('"num_blocks": ', '"num_blocks": ' + "9" * 5000 + ", \"x\": ", 1)
    bad(j.encode(), "not usable JSON: Exceeds the limit")


def test_cli_never_prints_a_traceback_even_for_an_unexpected_error(monkeypatch, capsys):
    from kvviz import cli
    from kvviz.cli import check as check_cmd

    def boom(*a, **k):
        raise ZeroDivisionError("internal slip")

    monkeypatch.setattr(check_cmd, "load_dump", boom)
    monkeypatch.delenv("KVVIZ_DEBUG", raising=False)
    assert cli.main(["check", "whatever.npz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ZeroDivisionError: internal slip" in err and "KVVIZ_DEBUG" in err


def _bomb(path, key: str, shape: tuple, dtype="<i4") -> None:
    """An .npz whose member declares ``shape`` in its header but compresses to almost nothing (a
    zip bomb): zeros deflate about 1000:1."""
    import zipfile

    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open(f"{key}.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_2_0(f, header)
            chunk = bytes(1 << 20)
            n = 1
            for d in shape:
                n *= d
            left = n * np.dtype(dtype).itemsize
            while left > 0:
                f.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)


@pytest.mark.parametrize("key,shape,limit", [("block_table", (1 << 11, 1 << 11), "MAX_TABLE_ENTRIES"),
                                             ("block_table", ((1 << 20) + 1, 1), "MAX_ROWS"),
                                             ("slot_mapping", (1 << 22,), "MAX_ARRAY_ENTRIES")])
def test_zip_bomb_is_refused_from_its_header(tmp_path, monkeypatch, key, shape, limit):
    """A member's declared shape is checked against the entry limits before a byte of its data is
    read, so a small archive cannot make the reader allocate what it declares. (The entry limits
    are lowered here so the bomb stays small; the check is the same at 2^28.)"""
    import zipfile

    from kvviz.dumps import fields   # where the limits live (kvviz.dumps.format hands them on)

    if limit != "MAX_ROWS":
        monkeypatch.setattr(fields, limit, 1 << 20)
    path = tmp_path / "bomb.npz"
    _bomb(path, key, shape, "<i4" if key == "block_table" else "<i8")
    declared = zipfile.ZipFile(path).infolist()[0].file_size
    assert path.stat().st_size * 100 < declared           # it compresses ~1000:1
    reads = []
    real_read = zipfile.ZipExtFile.read
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda self, n=-1: reads.append(n) or real_read(self, n))
    with pytest.raises(BadInput, match="limit"):
        load_dump(str(path))
    assert reads and max(reads) < 4096, f"data was read: {max(reads)} bytes asked"
