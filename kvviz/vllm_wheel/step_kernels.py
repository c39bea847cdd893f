"""vLLM's per-step attention-metadata kernels, taken from the release wheels at run time and
launched as that release's model runner launches them, so the step bench can time them beside
kvviz's fused step (``kvviz.gpu.bench.fused``: variants "v1 vllm" and "v2 vllm").

What one step launches (kernels only: the host's cumsum of page counts and the H2D copies of
``indptr`` and ``last_page_len`` that vLLM also does each step are not timed):

* V1 (``LAST_V1_RELEASE``, the newest release that still has the V1 runner): per KV-cache group
  the slot-mapping kernel of ``vllm/v1/worker/block_table.py`` (grid ``num_reqs + 1``, the last
  program padding ``[num_tokens, max_num_tokens)`` with -1), then FlashInfer's
  ``_copy_page_indices_kernel`` over the attention group's committed table (grid ``num_reqs``).
* Model Runner V2 (``NEWEST``): ``_gather_block_tables_kernel`` (grid ``groups x
  num_reqs_padded``), ``_compute_slot_mappings_kernel`` (grid ``groups x num_reqs + 1``, every group
  in one launch), then the same page-index copy over the gathered table of group 0.

Each group's table is its own ``[rows, width_g]`` int32 tensor as in vLLM (the stride is the
width), the MRV2 kernels reach them through a device array of pointers. ``max_num_tokens`` is the
step's padded token count (vLLM pads to its whole buffer, which is at least as much work).
Arguments are matched to each kernel's own parameter names: a name kvviz does not know is an
error, never a guess. Nothing of vLLM is installed or committed (``kvviz.vllm_wheel.extract``).
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field

from kvviz.vllm_wheel.extract import Extractor, WheelSource
from kvviz.vllm_wheel.locate import BadInput, find_wheel

COPY_BLOCK = 1024              # the BLOCK_SIZE both releases launch the page-index copy with
FLASHINFER = "vllm.v1.attention.backends.flashinfer"


def _params(fn) -> list[str]:
    return list(inspect.signature(getattr(fn, "fn", fn)).parameters)


def _call(kernel, grid, values: dict, what: str) -> None:
    names = _params(kernel)
    unknown = [p for p in names if p not in values]
    if unknown:
        raise RuntimeError(f"{what}: parameters unknown to kvviz: {unknown}")
    kernel[grid](**{p: values[p] for p in names})


@dataclass
class StepKernels:
    """The kernels found (None where a wheel lacks one) and where they came from."""
    v1_release: str | None = None
    v2_release: str | None = None
    v1_slots: object = None
    v1_copy: object = None
    v1_block: int = 1024
    v2_gather: object = None
    v2_slots: object = None
    v2_copy: object = None
    notes: list = field(default_factory=list)

    @property
    def has_v1(self) -> bool:
        return self.v1_slots is not None and self.v1_copy is not None

    @property
    def has_v2(self) -> bool:
        return self.v2_gather is not None and self.v2_slots is not None and self.v2_copy is not None


def _v1_from(path, release: str, out: StepKernels) -> None:
    src = WheelSource(path)
    ex = Extractor(src)
    v1 = ex.extract("vllm.v1.worker.block_table", ["_compute_slot_mapping_kernel",
                                                    "ComputeSlotMappingKernel.kernel"], tag="bench_v1")
    out.v1_slots = v1.get("ComputeSlotMappingKernel__kernel") or v1.get("_compute_slot_mapping_kernel")
    text = src.read("vllm/v1/worker/block_table.py") or ""
    if "triton_block_size = " in text:
        out.v1_block = int(text.split("triton_block_size = ")[1].split()[0])
    out.v1_copy = ex.extract(FLASHINFER, ["_copy_page_indices_kernel"], tag="bench_fi1").get(
        "_copy_page_indices_kernel")
    out.v1_release = release
    if not out.has_v1:
        out.notes.append(f"vLLM {release}: no V1 slot-mapping or page-index kernel in its wheel")


def _v2_from(path, release: str, out: StepKernels) -> None:
    ex = Extractor(WheelSource(path))
    mr = ex.extract("vllm.v1.worker.gpu.block_table", ["_gather_block_tables_kernel",
                                                        "_compute_slot_mappings_kernel"], tag="bench_v2")
    out.v2_gather = mr.get("_gather_block_tables_kernel")
    out.v2_slots = mr.get("_compute_slot_mappings_kernel")
    out.v2_copy = ex.extract(FLASHINFER, ["_copy_page_indices_kernel"], tag="bench_fi2").get(
        "_copy_page_indices_kernel")
    out.v2_release = release
    if not out.has_v2:
        out.notes.append(f"vLLM {release}: no Model Runner V2 gather, slot-mapping or page-index kernel")


def load_step_kernels(*, download: bool = False) -> StepKernels:
    """V1's kernels from ``LAST_V1_RELEASE``, MRV2's from ``NEWEST``; a release whose wheel is not
    found (and not downloaded) leaves a note instead of its kernels. Extracted once per wheel path
    and process (a server that runs the bench again reuses them)."""
    from kvviz.core.versions import LAST_V1_RELEASE, NEWEST

    out = StepKernels()
    for release, take in ((LAST_V1_RELEASE, _v1_from), (NEWEST, _v2_from)):
        try:
            path = find_wheel(release.lstrip("v"), download=download)
        except BadInput as e:
            out.notes.append(str(e))
            continue
        got = _extracted(str(path), release, take)
        fields = ("v1_release", "v1_slots", "v1_copy", "v1_block") if take is _v1_from else (
            "v2_release", "v2_gather", "v2_slots", "v2_copy")
        for name in fields:
            setattr(out, name, getattr(got, name))
        out.notes.extend(got.notes)
    return out


@functools.lru_cache(maxsize=8)
def _extracted(path: str, release: str, take) -> StepKernels:
    """One wheel's kernels (a fresh StepKernels holding only them), extracted once a process."""
    one = StepKernels()
    take(path, release, one)
    return one


def available_variants(variants, kernels: StepKernels | None) -> list[str]:
    """``variants`` less "v1 vllm" / "v2 vllm" where ``kernels`` lacks them."""
    have = {"v1 vllm": kernels is not None and kernels.has_v1, "v2 vllm": kernels is not None and kernels.has_v2}
    return [v for v in variants if have.get(v, True)]


# --- one step's launches ------------------------------------------------------------------------

def vllm_buffers(s: dict, dev) -> dict:
    """Per-group tensors of the step ``s`` (``kvviz.gpu.bench.fused.fused_inputs``) laid out as vLLM
    keeps them, and the outputs its kernels write."""
    import torch

    G = len(s["bss"])
    w = s["widths"]
    v1 = [s["tables"][g, :, : w[g]].contiguous() for g in range(G)]
    state = [s["state"][g, :, : w[g]].contiguous() for g in range(G)]
    inp = [torch.empty_like(t) for t in state]
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], dtype=torch.uint64, device=dev)  # noqa: E731
    ip = s["want_csr"][0]
    return dict(v1_tables=v1, state=state, input=inp, state_ptrs=ptrs(state), input_ptrs=ptrs(inp),
                strides=torch.tensor([t.stride(0) for t in state], dtype=torch.int64, device=dev),
                bs=torch.tensor(s["bss"], dtype=torch.int32, device=dev),
                enabled=torch.ones(G, dtype=torch.bool, device=dev),
                sharded=torch.ones(G, dtype=torch.bool, device=dev),
                reach=torch.zeros(G, dtype=torch.int32, device=dev),
                nc=torch.zeros(s["state"].shape[1], dtype=torch.int32, device=dev),
                indptr=torch.from_numpy(ip.astype("int32")).to(dev),
                slot_mappings=torch.empty((G, s["t_pad"]), dtype=torch.int64, device=dev),
                indices=torch.empty(max(int(ip[-1]), 1), dtype=torch.int32, device=dev))


def _copy_pages(kernel, b: dict, table, n: int) -> None:
    _call(kernel, (n,), {"page_indices": b["indices"], "block_table": table, "block_table_stride": table.stride(0),
                         "cu_num_blocks": b["indptr"], "BLOCK_SIZE": COPY_BLOCK}, "_copy_page_indices_kernel")


def v1_step(k: StepKernels, s: dict, b: dict):
    """A no-argument call: vLLM V1's step kernels over the step ``s`` into the buffers ``b``."""
    n, T, t_pad = s["num_reqs"], s["T"], s["t_pad"]

    def step():
        for g, table in enumerate(b["v1_tables"]):
            bs = s["bss"][g]
            _call(k.v1_slots, (n + 1,), {
                "num_tokens": T, "max_num_tokens": t_pad, "query_start_loc_ptr": s["qsl"], "positions_ptr": s["pos"],
                "block_table_ptr": table, "block_table_stride": table.stride(0),
                "slot_mapping_ptr": b["slot_mappings"][g], "block_size": bs, "KV_CACHE_BLOCK_SIZE": bs,
                "BLOCKS_PER_KV_BLOCK": 1, "TOTAL_CP_WORLD_SIZE": 1, "TOTAL_CP_RANK": 0,
                "CP_KV_CACHE_INTERLEAVE_SIZE": 1, "PAD_ID": -1, "BLOCK_SIZE": k.v1_block}, "V1 slot mapping")
        _copy_pages(k.v1_copy, b, b["v1_tables"][0], n)
    return step


def v2_step(k: StepKernels, s: dict, b: dict):
    """A no-argument call: Model Runner V2's step kernels (gather, slot mappings, page copy)."""
    n, G = s["num_reqs"], len(s["bss"])
    gather = {"batch_idx_to_req_idx": s["idx"], "src_block_table_ptrs": b["state_ptrs"],
              "dst_block_table_ptrs": b["input_ptrs"], "block_table_strides": b["strides"],
              "num_blocks_ptr": s["num_blocks"], "num_blocks_stride": s["num_blocks"].stride(0), "num_reqs": n,
              "num_computed_tokens_ptr": b["nc"], "sliding_window_reach_ptr": b["reach"],
              "block_sizes_ptr": b["bs"], "MASK_SLIDING_WINDOW": False, "BLOCK_SIZE": 1024}
    slots = {"max_num_tokens": s["t_pad"], "idx_mapping": s["idx"], "query_start_loc": s["qsl"], "pos": s["pos"],
             "block_table_ptrs": b["state_ptrs"], "block_table_strides": b["strides"], "block_sizes": b["bs"],
             "slot_mapping_enabled": b["enabled"], "dcp_sharded": b["sharded"],
             "slot_mappings_ptr": b["slot_mappings"], "slot_mappings_stride": b["slot_mappings"].stride(0),
             "cp_rank": 0, "CP_SIZE": 1, "CP_INTERLEAVE": 1, "PAD_ID": -1, "TRITON_BLOCK_SIZE": 1024}

    def step():
        _call(k.v2_gather, (G, s["r_pad"]), gather, "_gather_block_tables_kernel")
        _call(k.v2_slots, (G, n + 1), slots, "_compute_slot_mappings_kernel")
        _copy_pages(k.v2_copy, b, b["input"][0], n)
    return step
