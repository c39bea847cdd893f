"""The PCIe page's view of one release's step (no streamlit): the parts it copies as a table, and the
sentences that explain them (text keys of kvviz/texts/pcie.py with their fields)."""
from __future__ import annotations

import pandas as pd

from kvviz.core import step_bytes as core
from kvviz.core.versions import rules_for
from kvviz.gpu import traffic

FIRST_DEVICE_SLOTS = "v0.19.0"    # #32951: V1's slot mapping computed on the device from the committed table


def release_frame(rb: core.StepBytes) -> pd.DataFrame:
    """One line per part of the step: its name, where its bytes move (pcie | device) and how many;
    a last line with the host → device total."""
    rows = [{"part": p.name, "link": p.link, "bytes": p.nbytes} for p in rb.parts]
    rows.append({"part": "host → device total", "link": core.PCIE, "bytes": rb.pcie})
    return pd.DataFrame(rows)


def release_notes(rb: core.StepBytes, shape: traffic.StepShape) -> list[tuple[str, dict]]:
    """What the step's bytes are, as (text key, fields): V1's full-width commit (and its host-built
    slot mapping before v0.19.0), or MRV2's staged writes, counts and on-device gather; then the total."""
    n = shape.num_reqs
    if rb.runner == "v1":
        out = [("v1_commit", {"n": n, "w": shape.width, "b": rb.part("block table"), "d": shape.dirty_rows})]
        if not rules_for(rb.release).slot_mapping_from_device_table:
            out.append(("v1_slot_host", {"b": rb.part("slot mapping"), "since": FIRST_DEVICE_SLOTS}))
    else:
        writes = core.staged_entries(rules_for(rb.release), shape.rows, shape.sizes)
        out = [("v2_staged", {"k": len(writes), "e": sum(writes), "w": rb.part("staged writes"),
                              "m": shape.max_num_reqs, "c": rb.part("num_blocks"),
                              "s": rb.part("staged writes") + rb.part("num_blocks")}),
               ("v2_inputs", {"i": rb.part("idx_mapping"), "ib": rules_for(rb.release).mrv2_idx_mapping_bytes,
                              "q": rb.part("query_start_loc"), "m": shape.max_num_reqs}),
               ("v2_gather", {"g": rb.part("gather")})]
    out.append(("release_total", {"b": rb.pcie, "us": f"{traffic.model_us(rb.pcie):.1f}"}))
    return out


def whatif_note(shape: traffic.StepShape, runner: str, rb: core.StepBytes) -> tuple[str, dict] | None:
    """The line above the V1 what-ifs when the step above is not V1's: a release without V1 (the
    what-ifs follow the last V1), or MRV2 picked (its bytes are the step's, the what-ifs V1's)."""
    if not rules_for(shape.vllm).has_runner_v1:
        return "whatif_no_v1", {"version": rules_for(shape.vllm).name, "last": shape.v1_release, "b": rb.pcie}
    if runner == "v2":
        return "whatif_v2", {"version": rules_for(shape.vllm).name, "b": rb.pcie}
    return None


V2 = "Model Runner V2"    # the what-if charts' and the stacked bars' V2 series (the CSV's column name)


def has_v2(shape: traffic.StepShape) -> bool:
    """The shape's release has Model Runner V2 (v0.12.0 on)."""
    return rules_for(shape.vllm).has_runner_v2


def v2_parts(shape: traffic.StepShape) -> dict[str, int]:
    """The host → device bytes of this step under Model Runner V2, by part (what it copies over PCIe)."""
    return {p.name: p.nbytes for p in traffic.release_bytes(shape, "v2").parts if p.link == core.PCIE}


def v2_sweep(shape: traffic.StepShape, field: str, values) -> list[int]:
    """Model Runner V2's host → device bytes as ``field`` takes each of ``values``, the other sizes
    adjusted as ``traffic.sweep`` adjusts them (V1's what-ifs, drawn beside this line)."""
    return [traffic.release_bytes(traffic.swept_shape(shape, field, v), "v2").pcie for v in values]
