"""kvviz: paged KV-cache bookkeeping, simulated exactly and checked against real kernels.

The core (this package) never imports streamlit and needs no GPU.

The repository's ``kernels/`` folder is installed as the import package ``kvviz_kernels`` (the
top-level name ``kernels`` belongs to Hugging Face's package, which vLLM depends on). In a checkout
that is not installed, ``kvviz_kernels`` is made to name that folder here, so code and tests import
``kvviz_kernels`` everywhere.
"""
import importlib.abc
import importlib.util
import sys
from pathlib import Path

from kvviz.constants import NULL_BLOCK_ID, PAD_SLOT_ID  # noqa: F401

__version__ = "0.1.0"


class _CheckoutKernels(importlib.abc.MetaPathFinder):
    """Finds ``kvviz_kernels`` in the checkout's ``kernels/`` folder. It sits last on
    ``sys.meta_path``, so an installed ``kvviz_kernels`` always wins; nothing is imported until
    something imports ``kvviz_kernels``."""

    folder = Path(__file__).resolve().parents[1] / "kernels"

    def find_spec(self, name, path=None, target=None):
        if name != "kvviz_kernels" or not (self.folder / "__init__.py").is_file():
            return None
        return importlib.util.spec_from_file_location(name, self.folder / "__init__.py",
                                                      submodule_search_locations=[str(self.folder)])


if not any(isinstance(f, _CheckoutKernels) for f in sys.meta_path):
    sys.meta_path.append(_CheckoutKernels())
