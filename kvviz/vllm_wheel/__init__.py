"""vLLM's own code, read at run time from a release's wheel (a zip: nothing installed, nothing of
vLLM committed): ``locate`` finds or downloads the wheel, ``extract`` lifts named functions and
Triton kernels out of it by AST, ``step_kernels`` launches a release's per-step metadata kernels
as its model runner does (the step bench times them beside kvviz's)."""
