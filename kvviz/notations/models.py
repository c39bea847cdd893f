"""One batch, six ways to write it down.

Every engine answers the same question (where does token ``pos`` of request ``i`` keep
its K and V?) with a different set of arrays. ``kvviz.notations.canonical`` keeps one
*canonical* answer (a slot per token); each notation module converts it into that engine's
arrays and back, and can ask its arrays the question directly, so tests can prove they all
give the same KV address.

Notations (``NOTATIONS``), each a dataclass with ``address(i, pos)``, ``locate(i, pos)`` and
``coords(i, pos)``, one module each: ``vllm`` (block table + slot mapping), ``flashinfer``
(CSR pages), ``sglang`` (page size 1, ``req_to_token``), ``trtllm`` (K/V block offsets),
``llamacpp`` (cells tagged with positions and sequence ids: one stream of cells per sequence,
llama.cpp's default, or one unified cell array with ``kv_unified``) and ``deepinfer`` (runs of
consecutive 128-token pages).

This module is the registry (``convert``, ``to_canonical``, ``all_forms``), the notations
page's example batch, and the one import the pages and tests need: it re-exports every
notation's public names.
"""
from __future__ import annotations

from kvviz.errors import BadInput
from kvviz.notations.canonical import (CanonicalBatch, CanonicalRequest, NotRepresentable,
                                       canonical_from_block_table, canonical_from_record)
from kvviz.notations.deepinfer import DeepInferForm, from_deepinfer, page_runs, to_deepinfer
from kvviz.notations.flashinfer import FlashInferForm, from_flashinfer, to_flashinfer
from kvviz.notations.llamacpp import (LLAMA_EMPTY_POS, LLAMA_KV_UNIFIED_DEFAULT, LlamaCppForm,
                                      LlamaCppStreamsForm, from_llamacpp, to_llamacpp)
from kvviz.notations.sglang import SGLangForm, from_sglang, to_sglang
from kvviz.notations.trtllm import TrtLlmForm, from_trtllm, to_trtllm
from kvviz.notations.vllm import VllmForm, from_vllm, to_vllm

__all__ = [  # the registry, and every notation's names the pages and tests use
    "NOTATIONS", "EXAMPLE_SCENARIO", "convert", "to_canonical", "all_forms", "example_batch",
    "CanonicalBatch", "CanonicalRequest", "NotRepresentable", "canonical_from_block_table",
    "canonical_from_record", "VllmForm", "to_vllm", "from_vllm", "FlashInferForm", "to_flashinfer",
    "from_flashinfer", "SGLangForm", "to_sglang", "from_sglang", "TrtLlmForm", "to_trtllm",
    "from_trtllm", "LlamaCppForm", "LlamaCppStreamsForm", "LLAMA_EMPTY_POS",
    "LLAMA_KV_UNIFIED_DEFAULT", "to_llamacpp", "from_llamacpp",
    "DeepInferForm", "page_runs", "to_deepinfer", "from_deepinfer"]

NOTATIONS = {
    "vllm": ("vLLM", to_vllm, from_vllm),
    "flashinfer": ("FlashInfer", to_flashinfer, from_flashinfer),
    "sglang": ("SGLang", to_sglang, from_sglang),
    "trtllm": ("TensorRT-LLM", to_trtllm, from_trtllm),
    "llamacpp": ("llama.cpp", to_llamacpp, from_llamacpp),
    "deepinfer": ("DeepInfer", to_deepinfer, from_deepinfer),
}


def convert(c: CanonicalBatch, name: str, page_size: int = 16, *,
            kv_unified: bool = LLAMA_KV_UNIFIED_DEFAULT):
    """The batch in notation ``name``; ``page_size`` is the block/page size where the
    notation has a free one (vLLM, FlashInfer, TensorRT-LLM); DeepInfer's is fixed.
    ``kv_unified`` picks llama.cpp's layout (default false, as in llama.cpp: one stream of
    cells per sequence); the other notations ignore it."""
    if name not in NOTATIONS:
        raise BadInput(f"unknown notation {name!r}; choose one of {sorted(NOTATIONS)}")
    to = NOTATIONS[name][1]
    if name in ("vllm", "flashinfer", "trtllm"):
        return to(c, page_size)
    if name == "llamacpp":
        return to(c, kv_unified)
    return to(c)


def to_canonical(form) -> CanonicalBatch:
    """Any notation's form back to the canonical batch."""
    kind = {VllmForm: from_vllm, FlashInferForm: from_flashinfer, SGLangForm: from_sglang,
            TrtLlmForm: from_trtllm, LlamaCppForm: from_llamacpp, LlamaCppStreamsForm: from_llamacpp,
            DeepInferForm: from_deepinfer}
    return kind[type(form)](form)


def all_forms(c: CanonicalBatch, page_size: int = 16, *,
              kv_unified: bool = LLAMA_KV_UNIFIED_DEFAULT) -> dict:
    """Every notation of ``c``: name -> form, or name -> NotRepresentable (with its reason)."""
    out = {}
    for name in NOTATIONS:
        try:
            out[name] = convert(c, name, page_size, kv_unified=kv_unified)
        except NotRepresentable as e:
            out[name] = e
    return out


EXAMPLE_SCENARIO = {
    "name": "notations example",
    "description": "A and B share a two-page system prompt; C is unrelated. Step 1: A decodes, "
                   "B prefills after a prefix hit, C prefills.",
    "config": {"num_blocks": 8, "block_size": 128, "kernel_block_size": 16, "max_num_reqs": 4,
               "max_num_batched_tokens": 512, "max_model_len": 1024},
    "requests": [
        {"id": "A", "arrival": 0, "prompt_len": 300, "prefix_group": "sys", "prefix_len": 256,
         "max_tokens": 4},
        {"id": "B", "arrival": 1, "prompt_len": 270, "prefix_group": "sys", "prefix_len": 256,
         "max_tokens": 4},
        {"id": "C", "arrival": 1, "prompt_len": 40, "max_tokens": 4},
    ],
}


def example_batch(step: int = 1) -> CanonicalBatch:
    """The notations page's batch: 128-token manager blocks (so DeepInfer can hold it too),
    16-token kernel blocks, a shared prefix, a decode, a prefill after a hit and a fresh one."""
    from kvviz.core.engine import Engine
    from kvviz.core.scenario import parse_scenario

    sc = parse_scenario(EXAMPLE_SCENARIO)
    eng = Engine(sc)
    rec = None
    for _ in range(step + 1):
        rec = eng.step()
    return canonical_from_record(rec, sc.config)
