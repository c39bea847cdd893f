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
    "nav_runs": {"en": "Captured runs", "zh": "捕获的运行", "es": "Ejecuciones capturadas"},
    # --- the caption every page carries: what release and runner it shows (ui.shows) ---
    "shows": {"en": "Shows {what}", "zh": "展示 {what}", "es": "Muestra {what}"},
    "run": {"en": "vLLM {version} · Model Runner {runner}", "zh": "vLLM {version} · Model Runner {runner}",
            "es": "vLLM {version} · Model Runner {runner}"},
    "run_backend": {"en": "vLLM {version} · the {backend} attention backend's cache (the same under either model runner)",
                    "zh": "vLLM {version} · {backend} 注意力后端的缓存（两种模型运行器下相同）",
                    "es": "vLLM {version} · la caché del backend de atención {backend} (la misma con cualquier model "
                          "runner)"},
    "shows_home": {"en": "kvviz knows vLLM {oldest} … {newest} (the newest release it knows is {newest}) and main "
                         "at {main}.",
                   "zh": "kvviz 了解 vLLM {oldest} … {newest}（它所知的最新版本是 {newest}）以及 {main} 的 main。",
                   "es": "kvviz conoce vLLM {oldest} … {newest} (la versión más nueva que conoce es {newest}) y main "
                         "en {main}."},
    "shows_kernel_lab": {"en": "Shows kvviz's own Triton kernels, timed on this machine or read from a recorded bench file; "
                               "no vLLM release is picked here. The step timeline also shows vLLM's own per-step "
                               "kernels (V1 from v0.33.0, Model Runner V2 from v0.34.0) where the run timed them.",
                         "zh": "展示 kvviz 自己的 Triton 内核，在本机或录制的运行中计时；本页不选择 vLLM 版本。"
                               "若该次运行测了 vLLM 自己的每步内核（V1 取自 v0.33.0，Model Runner V2 取自 v0.34.0），"
                               "步骤时间线也会显示它们。",
                         "es": "Muestra los kernels Triton propios de kvviz, medidos en esta máquina o en una ejecución "
                               "grabada; aquí no se elige versión de vLLM. La línea de tiempo del paso muestra también "
                               "los kernels por paso del propio vLLM (V1 de v0.33.0, Model Runner V2 de v0.34.0) cuando "
                               "la ejecución los midió."},
    "shows_notations": {"en": "Shows one batch in six engines' notations; no vLLM release is picked on this page.",
                        "zh": "展示同一批次在六种引擎记法中的样子；本页不选择 vLLM 版本。",
                        "es": "Muestra un lote en las notaciones de seis motores; en esta página no se elige versión de "
                              "vLLM."},
    "shows_dumps": {"en": "Shows the dumps you give, each checked under the vLLM release it names (else main).",
                    "zh": "展示你提供的转储，每个按它所写的 vLLM 版本检查（否则按 main）。",
                    "es": "Muestra los volcados que des, cada uno verificado con la versión de vLLM que nombra (si no, "
                          "main)."},
    # --- every vLLM version picker (ui.version_select) ---
    "newest": {"en": "{version} (newest)", "zh": "{version}（最新）", "es": "{version} (la más nueva)"},
    "picker_help": {"en": "Newest first: the newest release kvviz knows is {newest} (oldest {oldest}); main is vLLM's "
                          "main at {main}, between v0.27.1 and v0.28.0. Type the start of a version to filter: "
                          "v0.3 finds v0.30.0 … v0.34.0.",
                    "zh": "最新的在前：kvviz 所知的最新版本是 {newest}（最早 {oldest}）；main 是 vLLM 在 {main} 的 main，"
                          "位于 v0.27.1 与 v0.28.0 之间。输入版本号开头即可筛选：v0.3 找到 v0.30.0 … v0.34.0。",
                    "es": "La más nueva primero: la versión más nueva que kvviz conoce es {newest} (la más antigua "
                          "{oldest}); main es el main de vLLM en {main}, entre v0.27.1 y v0.28.0. Escribe el comienzo "
                          "de una versión para filtrar: v0.3 encuentra v0.30.0 … v0.34.0."},
    # the kernel backend (ui.device_text)
    "device_cpu": {"en": "CPU, Triton interpreter", "zh": "CPU，Triton 解释器", "es": "CPU, intérprete de Triton"},
    "device_gpu": {"en": "{device} (compiled Triton)", "zh": "{device}（编译后的 Triton）", "es": "{device} (Triton compilado)"},
}
