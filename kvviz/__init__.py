"""kvviz: paged KV-cache bookkeeping, simulated exactly and checked against real kernels.

The core (this package) never imports streamlit and needs no GPU.
"""
from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID  # noqa: F401

__version__ = "0.1.0"
