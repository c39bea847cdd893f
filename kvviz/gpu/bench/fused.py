"""The ``fused_step`` case: one launch for a step's attention metadata (kernels/fused_step.py)
against the separate kvviz launches it replaces, at a list of shapes and 1, 2 and 4 KV-cache groups.

Variants per (shape, groups):

* ``v1 fused``     ``fused_step_v1``: every group's slot mapping + the CSR (indptr on the device);
* ``v1 separate``  ``slot_mapping`` (auto design) once per group + ``flashinfer_csr`` (host indptr,
                   pinned H2D copy, CSR kernel): G + 1 launches and a copy;
* ``v2 fused``     ``fused_step_v2``: the Model Runner V2 gather + slot mappings + CSR;
* ``v2 separate``  ``gather_block_tables`` + ``compute_slot_mappings`` + ``flashinfer_csr`` over the
                   gathered table: 3 launches and a copy;
* ``v1 vllm``      vLLM's own V1 step kernels, from the wheel of ``LAST_V1_RELEASE`` (one slot mapping
                   per group + FlashInfer's page-index copy; ``kvviz.vllm_wheel.step_kernels``);
* ``v2 vllm``      vLLM's own Model Runner V2 step kernels, from the wheel of ``NEWEST`` (gather, slot
                   mappings of every group, page-index copy). Without the wheels these rows are left
                   out and the run's notes say why;
* ``v1 fused:csr`` / ``:slot``, ``v2 fused:csr`` / ``:slot`` / ``:gather`` (``ROLE_VARIANTS``, on
                   request): the fused launch with one program role only, where a step's time goes.

Every output is checked against the numpy core (and the separate launches against the fused one)
before anything is timed; each row carries the bench's timings (CUDA events with a cold L2, a CUDA
graph, host-hidden device time cold and warm, host time) and their ratios to an empty launch timed
the same way (``x_empty``, ``graph_x_empty``, ``dev_x_empty``, ``dev_warm_x_empty``).

Groups: block sizes 16, 32, 64, 16 (the first G); the CSR is group 0's. Decode shapes (1 token a
request) get a random context of up to 4096 tokens, prefills none; 8 padding tokens and the request
count padded to a multiple of 8 (the padding rows are empty requests).
"""
from __future__ import annotations

import numpy as np

from kvviz.gpu.bench.cases import ROTATE_BYTES, check, row
from kvviz.gpu.bench.timing import graph_cols
from kvviz.gpu.device import time_us, torch_device

FUSED_SHAPES = [(1, 1), (256, 1), (1024, 1), (4096, 1), (1024, 128), (16, 8192), (1, 131072)]
FUSED_SHAPES_QUICK = [(1, 1), (1024, 1), (16, 8192), (1, 131072)]
FUSED_GROUPS = (1, 2, 4)
FUSED_GROUPS_QUICK = (1, 4)
# the interpreter: one tiny shape (its µs are Python emulation times, labelled so by the run's note)
FUSED_SHAPES_CPU = [(3, 2)]
FUSED_GROUPS_CPU = (1, 2)
FUSED_VARIANTS = ("v1 fused", "v1 separate", "v2 fused", "v2 separate", "v1 vllm", "v2 vllm")
ROLE_VARIANTS = ("v1 fused:csr", "v1 fused:slot", "v2 fused:csr", "v2 fused:slot", "v2 fused:gather")
GROUP_BLOCK_SIZES = (16, 32, 64, 16)
MAX_SETS = 8


def fused_inputs(num_reqs: int, per_req: int, n_groups: int, dev, seed: int = 0) -> dict:
    """One step's inputs on ``dev`` (both V1 and V2 views of it) and the numpy core's answers."""
    import torch
    from kvviz.core.geometry import Geometry
    from kvviz.core.step import compute_csr, compute_slot_mapping

    rng = np.random.default_rng(seed + 1000 * n_groups + num_reqs)
    bss = list(GROUP_BLOCK_SIZES[:n_groups])
    ctx = rng.integers(0, 4096, num_reqs) if per_req == 1 else np.zeros(num_reqs, np.int64)
    seq = (ctx + per_req).astype(np.int64)
    r_pad = num_reqs + (-num_reqs) % 8
    T = num_reqs * per_req
    t_pad = T + 8
    qsl = np.concatenate([[0], np.cumsum(np.full(num_reqs, per_req))]).astype(np.int32)
    pos = np.zeros(t_pad, np.int64)
    pos[:T] = (np.repeat(ctx, per_req) + np.tile(np.arange(per_req), num_reqs)).astype(np.int64)
    widths = [-(-int(seq.max()) // b) for b in bss]
    wmax = max(widths)
    # V1: committed tables, row r = request r (r_pad rows); V2: state rows in a shuffled order
    tables = np.zeros((n_groups, r_pad, wmax), np.int32)
    for g, w in enumerate(widths):
        tables[g, :num_reqs, :w] = rng.integers(1, 1 << 24, (num_reqs, w))
    idx = rng.permutation(r_pad)[:num_reqs].astype(np.int32)
    state = np.zeros_like(tables)
    state[:, idx] = tables[:, :num_reqs]
    num_blocks = np.zeros((n_groups, r_pad), np.int32)
    for g, b in enumerate(bss):
        num_blocks[g, idx] = -(-seq // b)
    want_slots = np.stack([compute_slot_mapping(qsl, pos, tables[g, :, :w], num_reqs=num_reqs, num_tokens_padded=t_pad,
                                                geometry=Geometry(b)) for g, (w, b) in enumerate(zip(widths, bss))])
    seq_pad = np.zeros(r_pad, np.int32)
    seq_pad[:num_reqs] = seq
    want_csr = compute_csr(tables[0, :, :widths[0]], seq_pad, bss[0])
    d = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev)  # noqa: E731
    i32 = lambda v: torch.tensor(v, dtype=torch.int32, device=dev)   # noqa: E731
    return dict(num_reqs=num_reqs, per_req=per_req, r_pad=r_pad, T=T, t_pad=t_pad, widths=widths, bss=bss,
                seq_host=seq_pad, qsl=d(qsl), pos=d(pos), seq=d(seq_pad), tables=d(tables), state=d(state), idx=d(idx),
                num_blocks=d(num_blocks), widths_t=i32(widths), bs_t=i32(bss), want_slots=want_slots,
                want_csr=want_csr, max_seq=int(seq.max()))


def _outputs(s: dict, dev, vllm: bool = False) -> dict:
    import torch

    G = len(s["bss"])
    out = dict(slot_mappings=torch.empty((G, s["t_pad"]), dtype=torch.int64, device=dev),
               indptr=torch.empty(s["r_pad"] + 1, dtype=torch.int32, device=dev),
               indices=torch.empty(s["r_pad"] * s["widths"][0], dtype=torch.int32, device=dev),
               last_page_len=torch.empty(s["r_pad"], dtype=torch.int32, device=dev),
               input_tables=torch.empty_like(s["state"]))
    pinned = torch.empty(s["r_pad"] + 1, dtype=torch.int32)
    out["pinned"] = pinned.pin_memory() if dev == "cuda" else pinned
    if vllm:
        from kvviz.vllm_wheel.step_kernels import vllm_buffers

        out["vllm"] = vllm_buffers(s, dev)
    return out


def _launchers(s: dict, o: dict, vllm=None) -> dict:
    """variant -> a no-argument call writing into ``o`` (the same buffers every call); the separate
    variants return the indptr tensor flashinfer_csr made."""
    from kvviz_kernels.fused_step import ROLES, fused_step_v1, fused_step_v2
    from kvviz.vllm_wheel.step_kernels import v1_step, v2_step
    from kvviz_kernels.mrv2_tables import compute_slot_mappings, gather_block_tables
    from kvviz_kernels.page_indices import flashinfer_csr
    from kvviz_kernels.slot_mapping import slot_mapping

    # block sizes as the host knows them (a model's constants): the fused launch compiles them in
    common = dict(num_reqs_padded=s["r_pad"], num_tokens_padded=s["t_pad"], widths=s["widths_t"],
                  block_sizes=list(s["bss"]), csr_group=0, max_seq_len=s["max_seq"], slot_mappings=o["slot_mappings"],
                  indptr=o["indptr"], indices=o["indices"], last_page_len=o["last_page_len"])

    def v1_fused(roles=ROLES):
        fused_step_v1(s["qsl"], s["pos"], s["seq"], s["tables"], num_reqs=s["num_reqs"], roles=roles, **common)

    def csr(table):
        return flashinfer_csr(table[: s["r_pad"], : s["widths"][0]], s["seq"], s["seq_host"], s["bss"][0],
                       indptr_buf=o["pinned"], indices_out=o["indices"], last_page_len_out=o["last_page_len"])

    def v1_separate():
        for g, (w, b) in enumerate(zip(s["widths"], s["bss"])):
            slot_mapping(s["qsl"], s["pos"], s["tables"][g, :, :w], num_reqs=s["num_reqs"], block_size=b,
                         max_query_len=s["per_req"], num_tokens_padded=s["t_pad"], out=o["slot_mappings"][g])
        return csr(s["tables"][0])[0]      # flashinfer_csr's indptr is its own H2D copy

    def v2_fused(roles=ROLES):
        fused_step_v2(s["idx"], s["qsl"], s["pos"], s["seq"], s["state"], s["num_blocks"], o["input_tables"],
                      num_reqs=s["num_reqs"], roles=roles, **common)

    def v2_separate():
        gather_block_tables(s["state"], s["num_blocks"], s["idx"], s["r_pad"], o["input_tables"],
                            widths=s["widths_t"], num_reqs=s["num_reqs"])
        compute_slot_mappings(s["state"], s["idx"], s["qsl"], s["pos"], s["bs_t"], o["slot_mappings"],
                              widths=s["widths_t"], num_reqs=s["num_reqs"], max_query_len=s["per_req"])
        return csr(o["input_tables"][0])[0]

    calls = {"v1 fused": v1_fused, "v1 separate": v1_separate, "v2 fused": v2_fused, "v2 separate": v2_separate}
    for v in ROLE_VARIANTS:
        run, role = v.split(":")
        calls[v] = (lambda f, r: lambda: f(roles=(r,)))(calls[run], role)
    if vllm is not None and vllm.has_v1:
        calls["v1 vllm"] = v1_step(vllm, s, o["vllm"])
    if vllm is not None and vllm.has_v2:
        calls["v2 vllm"] = v2_step(vllm, s, o["vllm"])
    return calls


def _check_vllm(name: str, s: dict, b: dict, fn):
    """vLLM's kernels over poisoned buffers: every group's slots, the page indices and (V2) the
    gathered rows equal the numpy core's."""
    for t in [b["slot_mappings"], b["indices"], *b["input"]]:
        t.fill_(-3)
    fn()
    check(f"{name} slot mappings", b["slot_mappings"].cpu().numpy(), s["want_slots"])
    ip, ix, _ = s["want_csr"]
    check(f"{name} indices", b["indices"][: int(ip[-1])].cpu().numpy(), ix)
    if name.startswith("fused_step[v2"):
        n, idx = s["num_reqs"], s["idx"].cpu().numpy()
        nb = s["num_blocks"].cpu().numpy()
        for g, (got, state) in enumerate(zip(b["input"], b["state"])):
            rows, st = got.cpu().numpy()[:n], state.cpu().numpy()[idx]
            cols = np.arange(st.shape[1])[None, :]
            want = np.where(cols < nb[g, idx][:, None], st, -3)
            check(f"{name} gather g{g}", rows, want)


def _check_variant(name: str, s: dict, o: dict, fn):
    """Run ``fn`` over poisoned buffers and compare every output with the numpy core (a role-only
    variant: the outputs of its role)."""
    if name.split("[")[1].startswith(("v1 vllm", "v2 vllm")):
        return _check_vllm(name, s, o["vllm"], fn)
    for k in ("slot_mappings", "indptr", "indices", "last_page_len", "input_tables"):
        o[k].fill_(-3)
    indptr = fn()
    indptr = o["indptr"] if indptr is None else indptr
    role = name.split("]")[0].split(":")[1] if ":" in name else None
    if role in (None, "slot"):
        check(f"{name} slot mappings", o["slot_mappings"].cpu().numpy(), s["want_slots"])
    ip, ix, lp = s["want_csr"]
    if role in (None, "csr"):
        check(f"{name} indptr", indptr.cpu().numpy(), ip)
        check(f"{name} indices", o["indices"][: int(ip[-1])].cpu().numpy(), ix)
        check(f"{name} last_page_len", o["last_page_len"].cpu().numpy(), lp)
    if name.startswith("fused_step[v2") and role in (None, "gather"):
        n = s["num_reqs"]
        got = o["input_tables"].cpu().numpy()
        tab = s["tables"].cpu().numpy()
        nb = s["num_blocks"].cpu().numpy()[:, s["idx"].cpu().numpy()]           # [G, n]
        cols = np.arange(tab.shape[2])
        want = np.where(cols[None, None, :] < nb[:, :, None], tab[:, :n], -3)   # the rest: untouched
        check(f"{name} gather", got[:, :n], want)
        pad = got[:, n: s["r_pad"]]
        wpad = np.where(cols[None, None, :] < np.array(s["widths"])[:, None, None], 0, -3)
        check(f"{name} padding rows", pad, np.broadcast_to(wpad, pad.shape))


def fused_bytes(s: dict) -> int:
    """The fewest bytes any version moves: positions + qsl read, every group's slots written, the
    used table entries read, the CSR written (indices twice: read and written), seq_lens read."""
    G = len(s["bss"])
    used = sum(int((-(-s["seq_host"] // b)).sum()) for b in s["bss"])
    pages = int((-(-s["seq_host"] // s["bss"][0])).sum())
    return (s["t_pad"] * 8 + (s["num_reqs"] + 1) * 4 + G * s["t_pad"] * 8 + min(used, s["T"] * G) * 4
            + 2 * pages * 4 + s["r_pad"] * 4 * 3)


def bench_fused_step(shapes, groups, floors, progress, variants=FUSED_VARIANTS, vllm="load") -> list[dict]:
    """Rows of kernel "fused_step" (variant per FUSED_VARIANTS, ROLE_VARIANTS; shape "RxT Gg").
    ``vllm``: vLLM's step kernels (``kvviz.vllm_wheel.step_kernels.StepKernels``; the caller says
    what is missing), or "load" to take them from the cached wheels here (``progress`` says what is
    missing), None for none; the variants whose kernels are missing are left out."""
    from kvviz.vllm_wheel.step_kernels import available_variants, load_step_kernels

    dev = torch_device()
    if vllm == "load":
        vllm = load_step_kernels() if any(v.endswith("vllm") for v in variants) else None
        for note in vllm.notes if vllm is not None else ():
            progress(f"fused_step: {note}")
    variants = available_variants(variants, vllm)
    rows = []
    for num_reqs, per_req in shapes:
        for n_groups in groups:
            s = fused_inputs(num_reqs, per_req, n_groups, dev)
            shape = f"{num_reqs}x{per_req} G{n_groups}"
            nbytes = fused_bytes(s)
            nsets = max(1, min(MAX_SETS, ROTATE_BYTES // max(nbytes, 1))) if dev == "cuda" else 1
            sets = [s] + [dict(s, **{k: s[k].clone() for k in ("qsl", "pos", "seq", "tables", "state", "idx",
                                                               "num_blocks")}) for _ in range(nsets - 1)]
            outs = [_outputs(x, dev, vllm is not None) for x in sets]
            calls = [_launchers(x, o, vllm) for x, o in zip(sets, outs)]
            for variant in variants:
                _check_variant(f"fused_step[{variant}] {shape}", s, outs[0], calls[0][variant])
                one = calls[0][variant]
                us = time_us(one)
                r = row("fused_step", variant, shape, us, nbytes, floors)
                r.update(graph_cols([c[variant] for c in calls], one, floors))
                rows.append(r)
                progress(f"fused_step {variant} {shape}: {us:.1f} us (graph {r.get('graph_us')})")
            del sets, outs, calls
    return rows
