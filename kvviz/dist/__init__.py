"""Decode context parallelism (DCP) on real ranks: ``python -m kvviz dcp``.

* ``plan.py``    what every rank stores (numpy only, no torch): the batch checked against the world
                 size and interleave, each rank's tables (the same block ids on every rank, its own
                 slot mapping with -1 for the other ranks' tokens, its local ``seq_lens``) and the
                 bounds that are refused before a process starts;
* ``merge.py``   the log-sum-exp merge of partial attention outputs and its plain references;
* ``rank.py``    one rank's work: Triton slot mapping and KV write into its own cache, partial
                 decode attention with its LSE, the all-gather / all-reduce, the checks on rank 0;
* ``launch.py``  starting (or joining, under torchrun) the process group and taking it down when a
                 rank fails.

Nothing here imports streamlit; torch is imported lazily (``plan`` never imports it).
"""
