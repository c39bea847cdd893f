"""Sentinels shared by every table. Defined once; imported everywhere else."""

NULL_BLOCK_ID = 0
"""Physical block 0: never handed out, never freed. Padded rows and skipped
sliding-window blocks point at it, so a read through them is always legal."""

PAD_SLOT_ID = -1
"""Slot of a token that must not be written: the CUDA-graph tail, or a token
another decode-context-parallel rank owns. The KV write skips it."""

TOKEN_ALIGNMENT = 128
"""A block-table row covers a multiple of this many tokens (vLLM, 2026-07)."""

DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "fp8": 1}
