"""Navigation titles and the sidebar."""
STRINGS = {
    "language": {"en": "Language", "zh": "语言", "es": "Idioma"},
    "kernel_worker": {"en": "Running the kernels in the Triton interpreter (a worker process shared by every session)…",
                      "zh": "正在 Triton 解释器中运行内核（所有会话共用的一个工作进程）…",
                      "es": "Ejecutando los kernels en el intérprete de Triton (un proceso de trabajo compartido por todas las sesiones)…"},
    "nav_home": {"en": "Home", "zh": "首页", "es": "Inicio"},
    "nav_batch": {"en": "Batch & mapping", "zh": "批次与映射", "es": "Lote y mapeo"},
    "nav_step": {"en": "Step through", "zh": "逐步执行", "es": "Paso a paso"},
    "nav_prefixes": {"en": "Shared prefixes", "zh": "共享前缀", "es": "Prefijos compartidos"},
    "nav_csr": {"en": "FlashInfer CSR", "zh": "FlashInfer CSR", "es": "CSR de FlashInfer"},
    "nav_layout": {"en": "Memory layout", "zh": "内存布局", "es": "Disposición en memoria"},
    "nav_pcie": {"en": "PCIe bytes per step", "zh": "每步 PCIe 字节", "es": "Bytes PCIe por paso"},
    "nav_kernel_lab": {"en": "Kernel lab", "zh": "内核实验室", "es": "Laboratorio de kernels"},
    "nav_demos": {"en": "Guided demos", "zh": "引导式演示", "es": "Demostraciones guiadas"},
    "nav_notations": {"en": "Six notations", "zh": "六种记法", "es": "Seis notaciones"},
    "nav_dumps": {"en": "Debug dumps", "zh": "调试转储", "es": "Volcados de depuración"},
}
