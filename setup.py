"""The packages of the distribution; everything else is in pyproject.toml.

The repository's ``kernels/`` folder installs as the import package ``kvviz_kernels``: the
top-level name ``kernels`` is Hugging Face's package (vLLM depends on it), and a second
``kernels`` would overwrite its ``__init__.py`` and stop vLLM from starting.
"""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["kvviz", "kvviz.*"]) + ["kvviz_kernels"],
      package_dir={"kvviz_kernels": "kernels"},
      # what the other engines' own code did with the Notations page's batch (kvviz/notations/engine_examples.py)
      package_data={"kvviz.notations": ["recorded/*.json"]})
