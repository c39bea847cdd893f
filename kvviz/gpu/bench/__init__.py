"""Benchmark of the kernels: one run, a progress callback, rows back.

* ``timing``  how a call is timed: CUDA events (``triton.testing.do_bench``, which flushes the L2
  before each call, so inputs are read cold, as in a real step), a CUDA graph (device time per
  launch), device time with the host hidden (cold or warm L2), host time; and the floors every
  row is measured against (an empty launch, the device copy bandwidth).
* ``cases``   the benchmark cases: slot mapping (every design and torch indexing), the CSR
  repack, the KV write and paged decode, each at a list of shapes; ``h2d`` the block-table
  commits (host -> device copies).
* ``goals``   the issue's speed goals, judged on the rows.
* ``run``     ``run_bench`` (what ``kvviz bench`` and the kernel lab call) and its text table.
* ``results`` recorded runs: bench JSON files read back and validated (untrusted input).

In the Triton interpreter the figures are wall-clock times of Python emulation: they say nothing
about kernel speed and are labelled so. Each row: kernel, variant, shape, µs (median), bytes
moved (the fewest any version must move), GB/s, ``x_empty`` (µs over an empty launch's µs) and
``x_bytes`` (µs over the byte floor: bytes at the measured copy bandwidth). Every kernel output
in the bench is checked against the numpy core first; a mismatch stops the bench with
KernelMismatch.
"""
