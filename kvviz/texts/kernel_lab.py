"""Kernel lab page prose."""
STRINGS = {
    "title": {"en": "Kernel lab", "zh": "内核实验室", "es": "Laboratorio de kernels"},
    "intro": {"en": "Run the benchmark harness on this machine's backend: slot mapping (three designs, the "
                    "automatic pick and a torch version), the CSR repack, the KV write and the paged decode. Every output is checked against "
                    "the reference before it is timed.",
              "zh": "在本机后端上运行基准测试：槽位映射（三种设计、自动选择和一个 torch 版本）、CSR 重排、KV 写入和分页解码。"
                    "每个输出在计时之前都先与参考实现核对。",
              "es": "Ejecuta el banco de pruebas en el backend de esta máquina: mapeo de slots (tres diseños, la "
                    "elección automática y una versión en torch), el reempaquetado CSR, la escritura KV y la decodificación paginada. Cada "
                    "salida se comprueba con la referencia antes de medirla."},
    "quick": {"en": "Quick (fewer shapes)", "zh": "快速（较少形状）", "es": "Rápido (menos formas)"},
    "run": {"en": "Run the benchmark", "zh": "运行基准测试", "es": "Ejecutar el banco de pruebas"},
    "running": {"en": "Benchmarking…", "zh": "正在测试……", "es": "Midiendo…"},
    "done": {"en": "Done: {n} measurements on {dev} ({date}).", "zh": "完成：在 {dev} 上测得 {n} 项（{date}）。",
             "es": "Hecho: {n} medidas en {dev} ({date})."},
    "mismatch": {"en": "The benchmark stopped: {msg}", "zh": "基准测试已停止：{msg}", "es": "El banco se detuvo: {msg}"},
    "not_run": {"en": "Press the button to measure on {dev}.", "zh": "点击按钮在 {dev} 上测量。",
                "es": "Pulsa el botón para medir en {dev}."},
    "kernel": {"en": "Kernel", "zh": "内核", "es": "Kernel"},
    "plot": {"en": "{kernel}: time per call by shape", "zh": "{kernel}：各形状的单次调用时间",
             "es": "{kernel}: tiempo por llamada según la forma"},
    "shape": {"en": "shape", "zh": "形状", "es": "forma"},
    "floors": {"en": "Floors: an empty launch takes {e} µs; a device copy runs at {c} GB/s.",
               "zh": "下限：一次空启动耗时 {e} µs；设备内复制速度 {c} GB/s。",
               "es": "Suelos: un lanzamiento vacío tarda {e} µs; una copia en el dispositivo va a {c} GB/s."},
    "timing": {"en": "Timing", "zh": "计时方式", "es": "Medición"},
    "timing_help": {"en": "How each µs was measured. Event-timed: CUDA events around single calls, L2 flushed "
                          "(triton's do_bench); a slow Python launcher can leak host time into it. In a graph: "
                          "device time per launch inside a CUDA graph. Host hidden: the GPU is kept busy until "
                          "the launch is queued, so only device time is counted; cold flushes the L2 first, "
                          "warm leaves the inputs where the last call left them. Each is compared with an empty "
                          "launch timed the same way.",
                    "zh": "每个 µs 的测量方式。事件计时：在单次调用前后放置 CUDA 事件，并清空 L2（triton 的 "
                          "do_bench）；较慢的 Python 启动器可能把主机时间计入其中。CUDA 图内：图中每次启动的设备"
                          "时间。隐藏主机：让 GPU 保持忙碌直到启动已入队，只计设备时间；冷：先清空 L2，热：输入留在"
                          "上一次调用后的位置。每种方式都与同样计时的空启动比较。",
                    "es": "Cómo se midió cada µs. Con eventos: eventos CUDA alrededor de una llamada, con la L2 "
                          "vaciada (do_bench de triton); un lanzador Python lento puede colar tiempo del host. En "
                          "un grafo: tiempo de dispositivo por lanzamiento dentro de un grafo CUDA. Host oculto: la "
                          "GPU sigue ocupada hasta que el lanzamiento está en cola, así que solo cuenta el tiempo "
                          "del dispositivo; en frío vacía la L2 antes, en caliente deja las entradas donde las dejó "
                          "la llamada anterior. Cada una se compara con un lanzamiento vacío medido igual."},
    "timing_us": {"en": "event-timed", "zh": "事件计时", "es": "con eventos"},
    "timing_graph_us": {"en": "in a CUDA graph", "zh": "CUDA 图内", "es": "en un grafo CUDA"},
    "timing_dev_us": {"en": "host hidden, cold L2", "zh": "隐藏主机，冷 L2", "es": "host oculto, L2 fría"},
    "timing_dev_warm_us": {"en": "host hidden, warm L2", "zh": "隐藏主机，热 L2", "es": "host oculto, L2 caliente"},
    "floor_line": {"en": "empty launch {e} µs", "zh": "空启动 {e} µs", "es": "lanzamiento vacío {e} µs"},
    "goal_line": {"en": "goal: {x}× the empty launch", "zh": "目标：空启动的 {x} 倍",
                  "es": "objetivo: {x}× el lanzamiento vacío"},
    "source": {"en": "Results", "zh": "结果来源", "es": "Resultados"},
    "source_run": {"en": "Measure here ({dev})", "zh": "在本机测量（{dev}）", "es": "Medir aquí ({dev})"},
    "source_recorded": {"en": "Recorded GPU runs", "zh": "已记录的 GPU 运行", "es": "Ejecuciones GPU grabadas"},
    "source_upload": {"en": "Open a bench JSON", "zh": "打开基准 JSON", "es": "Abrir un JSON de banco"},
    "recorded": {"en": "Recorded run", "zh": "已记录的运行", "es": "Ejecución grabada"},
    "recorded_note": {"en": "Measured with `python -m kvviz bench --json` on the machine named below; figures and "
                            "commands are in BENCHMARKS.md.",
                      "zh": "在下面所列机器上用 `python -m kvviz bench --json` 测得；数字与命令见 BENCHMARKS.md。",
                      "es": "Medido con `python -m kvviz bench --json` en la máquina indicada abajo; cifras y "
                            "comandos en BENCHMARKS.md."},
    "upload": {"en": "A file written by `python -m kvviz bench --json OUT`",
               "zh": "由 `python -m kvviz bench --json OUT` 写出的文件",
               "es": "Un archivo escrito por `python -m kvviz bench --json OUT`"},
    "give_file": {"en": "Open a bench JSON to see its figures here.", "zh": "打开一个基准 JSON 以在此查看其数据。",
                  "es": "Abre un JSON de banco para ver aquí sus cifras."},
    "bad_file": {"en": "This file cannot be shown: {msg}", "zh": "无法显示此文件：{msg}",
                 "es": "No se puede mostrar este archivo: {msg}"},
    "showing_file": {"en": "Showing {name}.", "zh": "正在显示 {name}。", "es": "Se muestra {name}."},
    "floors_more": {"en": "The empty launch timed the other ways: {g} µs per launch in a CUDA graph; {d} µs with the "
                          "host hidden and a cold L2, {w} µs warm.",
                    "zh": "其他计时方式下的空启动：CUDA 图内每次 {g} µs；隐藏主机、冷 L2 为 {d} µs，热 L2 为 {w} µs。",
                    "es": "El lanzamiento vacío medido de las otras formas: {g} µs por lanzamiento en un grafo "
                          "CUDA; {d} µs con el host oculto y la L2 fría, {w} µs en caliente."},
    "goals": {"en": "Speed goals", "zh": "速度目标", "es": "Objetivos de velocidad"},
    "tl_title": {"en": "One step's metadata: one fused launch against the separate launches",
                 "zh": "一步的元数据：一次融合启动与多次单独启动对比",
                 "es": "Metadatos de un paso: un lanzamiento fusionado frente a los lanzamientos separados"},
    "tl_intro": {"en": "For one batch of the run below: every KV-cache group's slot mapping and FlashInfer's CSR "
                       "arrays, made by one fused kernel (indptr summed on the device) or by the separate kvviz "
                       "launches (one slot mapping per group for V1, a gather and one slot mapping for V2; then "
                       "the CSR repack after a host prefix sum copied over); in runs from 2026-12-04 also vLLM's own "
                       "step kernels, taken from the wheels of the newest releases (V1: v0.33.0, Model Runner V2: "
                       "v0.34.0; blue). Bars start at 0 µs; the grey bar is an empty launch timed the same way.",
                 "zh": "针对下面这次运行中的一个批次：每个 KV 缓存组的槽位映射和 FlashInfer 的 CSR 数组，由一个融合内核"
                       "（indptr 在设备上求和）生成，或由单独的 kvviz 启动生成（V1 每组一次槽位映射，V2 一次收集加一次"
                       "槽位映射；随后在主机前缀和拷贝过来之后做 CSR 重排）；2026-12-04 起的运行还包括 vLLM 自己的每步内核，"
                       "取自最新版本的 wheel（V1：v0.33.0，Model Runner V2：v0.34.0；蓝色）。条形从 0 µs 开始；灰色条是同样计时的空启动。",
                 "es": "Para un lote de la ejecución de abajo: el mapeo de slots de cada grupo de caché KV y los "
                       "arrays CSR de FlashInfer, hechos por un único kernel fusionado (indptr sumado en el "
                       "dispositivo) o por los lanzamientos separados de kvviz (un mapeo por grupo en V1; una "
                       "recogida y un mapeo en V2; después el reempaquetado CSR tras una suma prefija en el host "
                       "copiada al dispositivo); en las ejecuciones desde 2026-12-04 también los kernels por paso del "
                       "propio vLLM, tomados de los wheels de las versiones más nuevas (V1: v0.33.0, Model Runner V2: "
                       "v0.34.0; en azul). Las barras empiezan en 0 µs; la gris es un lanzamiento vacío medido igual."},
    "tl_from_recorded": {"en": "This run has no fused-step measurements; shown: the recorded run {name}.",
                         "zh": "本次运行没有融合步骤的测量；显示的是已记录的运行 {name}。",
                         "es": "Esta ejecución no tiene medidas del paso fusionado; se muestra la ejecución grabada "
                               "{name}."},
    "tl_shape": {"en": "Batch (requests × tokens each)", "zh": "批次（请求数 × 每个请求的 token 数）",
                 "es": "Lote (peticiones × tokens de cada una)"},
    "tl_groups": {"en": "KV-cache groups", "zh": "KV 缓存组数", "es": "Grupos de caché KV"},
    "tl_runner": {"en": "Model runner", "zh": "模型运行器", "es": "Ejecutor del modelo"},
    "runner_v1": {"en": "V1", "zh": "V1", "es": "V1"},
    "runner_v2": {"en": "V2 (Model Runner V2)", "zh": "V2（Model Runner V2）", "es": "V2 (Model Runner V2)"},
    "tl_fig": {"en": "{shape}, {g} group(s), {runner}: µs per step", "zh": "{shape}，{g} 个组，{runner}：每步 µs",
               "es": "{shape}, {g} grupo(s), {runner}: µs por paso"},
    "tl_fused": {"en": "fused: 1 launch", "zh": "融合：1 次启动", "es": "fusionado: 1 lanzamiento"},
    "tl_separate": {"en": "separate: {n} launches + an indptr copy", "zh": "单独：{n} 次启动 + 一次 indptr 拷贝",
                    "es": "separados: {n} lanzamientos + una copia de indptr"},
    "tl_vllm": {"en": "vLLM's own kernels: {n} launches", "zh": "vLLM 自己的内核：{n} 次启动",
                "es": "los kernels de vLLM: {n} lanzamientos"},
    "tl_bar_vllm": {"en": "{us:.2f} µs ({x}× empty, {r}× vLLM's)", "zh": "{us:.2f} µs（空启动的 {x} 倍，vLLM 的 {r} 倍）",
                    "es": "{us:.2f} µs ({x}× vacío, {r}× el de vLLM)"},
    "tl_empty": {"en": "empty launch", "zh": "空启动", "es": "lanzamiento vacío"},
    "tl_bar": {"en": "{us:.2f} µs ({x}× empty)", "zh": "{us:.2f} µs（空启动的 {x} 倍）",
               "es": "{us:.2f} µs ({x}× vacío)"},
    "tl_bar_fused": {"en": "{us:.2f} µs ({x}× empty, {r}× separate)", "zh": "{us:.2f} µs（空启动的 {x} 倍，单独的 {r} 倍）",
                     "es": "{us:.2f} µs ({x}× vacío, {r}× separados)"},
    "tl_axis": {"en": "µs per step, from 0", "zh": "每步 µs，从 0 开始", "es": "µs por paso, desde 0"},
    "goal_met": {"en": "met", "zh": "达成", "es": "cumplido"},
    "goal_not_met": {"en": "not met", "zh": "未达成", "es": "no cumplido"},
    # --- the results table: headers (the CSV and JSON keep the English keys) ---
    "col.kernel": {"en": "kernel", "zh": "内核", "es": "kernel"},
    "col.variant": {"en": "variant", "zh": "变体", "es": "variante"},
    "col.shape": {"en": "shape", "zh": "形状", "es": "forma"},
    "col.us": {"en": "µs · events", "zh": "µs · 事件", "es": "µs · eventos"},
    "col.x_empty": {"en": "× empty", "zh": "× 空启动", "es": "× vacío"},
    "col.graph_us": {"en": "µs · graph", "zh": "µs · CUDA 图", "es": "µs · grafo"},
    "col.dev_us": {"en": "µs · cold L2", "zh": "µs · 冷 L2", "es": "µs · L2 fría"},
    "col.dev_warm_us": {"en": "µs · warm L2", "zh": "µs · 热 L2", "es": "µs · L2 caliente"},
    "col.gbps": {"en": "GB/s", "zh": "GB/s", "es": "GB/s"},
    "col.picked": {"en": "auto pick", "zh": "自动选择", "es": "elegido"},
    "col.bytes": {"en": "bytes", "zh": "字节", "es": "bytes"},
    "col.x_bytes": {"en": "× bytes", "zh": "× 字节", "es": "× bytes"},
    "col.graph_x_empty": {"en": "× empty · graph", "zh": "× 空启动 · CUDA 图", "es": "× vacío · grafo"},
    "col.dev_x_empty": {"en": "× empty · cold L2", "zh": "× 空启动 · 冷 L2", "es": "× vacío · L2 fría"},
    "col.dev_warm_x_empty": {"en": "× empty · warm L2", "zh": "× 空启动 · 热 L2", "es": "× vacío · L2 caliente"},
    "col.host_us": {"en": "µs · host", "zh": "µs · 主机", "es": "µs · host"},
    "col.of_copy_bw": {"en": "share of copy GB/s", "zh": "占复制带宽", "es": "fracción de la copia"},
    "more_columns": {"en": "Show its {n} other columns", "zh": "显示其余 {n} 列", "es": "Mostrar sus otras {n} columnas"},
    "gbps_small": {"en": "GB/s “—”: the row moves under {n} bytes (a 1-token step moves 20): its time is the launch, "
                         "not the copy, so a bandwidth would mean nothing.",
                   "zh": "GB/s 为“—”：该行搬运不足 {n} 字节（1 个 token 的步只有 20 字节）：耗时是启动本身而非拷贝，"
                         "算出的带宽没有意义。",
                   "es": "GB/s “—”: la fila mueve menos de {n} bytes (un paso de 1 token mueve 20): su tiempo es el "
                         "lanzamiento, no la copia, así que un ancho de banda no diría nada."},
    "torch_note": {"en": "Why torch is slow even at 1x1 (283 µs on the H200 run of 2026-11-30): the baseline (`kernels.slot_mapping.slot_mapping_torch`) "
                         "is eager PyTorch, about two dozen small ops (`repeat_interleave`, `%`, `//`, `where`, `clamp_`, the "
                         "gather, the two writes), each its own kernel launched from Python. The GPU waits for the "
                         "host between them: the host time per call (µs · host) is as long, while the same ops in a "
                         "CUDA graph (no host launches) took 43 µs there. The Triton designs are one launch each.",
                   "zh": "为什么 torch 在 1x1 也很慢（2026-11-30 的 H200 运行中为 283 µs）：基线（`kernels.slot_mapping.slot_mapping_torch`）是 eager "
                         "PyTorch，约二十多个小算子（`repeat_interleave`、`%`、`//`、`where`、`clamp_`、gather、两次写入），每个都是"
                         "从 Python 单独启动的内核。GPU 在算子之间等待主机：每次调用的主机时间（µs · 主机）一样长，而同样"
                         "的算子放进 CUDA 图（没有主机启动）在那次运行中只需 43 µs。Triton 的各设计都只有一次启动。",
                   "es": "Por qué torch es lento incluso en 1x1 (283 µs en la ejecución H200 del 2026-11-30): la referencia (`kernels.slot_mapping.slot_mapping_torch`) "
                         "es PyTorch en modo eager, unas dos docenas de operaciones pequeñas (`repeat_interleave`, `%`, `//`, "
                         "`where`, `clamp_`, la recogida, las dos escrituras), cada una su propio kernel lanzado desde Python. "
                         "La GPU espera al host entre ellas: el tiempo de host por llamada (µs · host) es igual de largo, "
                         "mientras que las mismas operaciones en un grafo CUDA (sin lanzamientos desde el host) tardaron "
                         "43 µs allí. Los diseños Triton son un único lanzamiento cada uno."},
    "table_of": {"en": "{kernel}: the main columns; the rest below.", "zh": "{kernel}：主要的列；其余在下面。",
                 "es": "{kernel}: las columnas principales; el resto, abajo."},
    "as_recorded": {"en": "The note is the file's own text, shown as recorded.",
                    "zh": "说明是文件自带的文字，按记录原样显示（英文）。",
                    "es": "La nota es el texto del propio archivo, tal como se grabó (en inglés)."},
    "note.gpu": {"en": "Compiled on the GPU; µs are medians of CUDA-event-timed calls with a cold L2.",
                 "zh": "在 GPU 上编译运行；µs 是以 CUDA 事件计时、冷 L2 下多次调用的中位数。",
                 "es": "Compilado en la GPU; los µs son medianas de llamadas cronometradas con eventos CUDA y la L2 fría."},
    "note.cpu": {"en": "Triton interpreter on the CPU: µs are Python emulation wall times, not kernel speeds; shapes "
                       "are scaled down.",
                 "zh": "CPU 上的 Triton 解释器：µs 是 Python 模拟的实际耗时，不是内核速度；形状已缩小。",
                 "es": "Intérprete de Triton en la CPU: los µs son tiempos de emulación en Python, no velocidades de "
                       "kernel; las formas están reducidas."},
    # --- the kernels' check details (kvviz.gpu.kernel_results.detail_text; the CLI and JSON keep English) ---
    "detail.identical": {"en": "{what}: {n} entries identical", "zh": "{what}：{n} 项完全一致",
                         "es": "{what}: {n} entradas idénticas"},
    "detail.differ": {"en": "MISMATCH: {what}: {k} of {n} entries differ: {first}",
                      "zh": "不一致：{what}：{n} 项中有 {k} 项不同：{first}",
                      "es": "DISCREPANCIA: {what}: {k} de {n} entradas difieren: {first}"},
    "detail.shape": {"en": "MISMATCH: {what}: shape {got} != reference {want}",
                     "zh": "不一致：{what}：形状 {got} ≠ 参考 {want}",
                     "es": "DISCREPANCIA: {what}: forma {got} ≠ referencia {want}"},
    "detail.close": {"en": "{what} vs dense float64 attention, max |err| {err} (atol {atol}, rtol {rtol})",
                     "zh": "{what} 与稠密 float64 注意力对比，最大 |误差| {err}（atol {atol}，rtol {rtol}）",
                     "es": "{what} frente a la atención densa en float64, |error| máx. {err} (atol {atol}, rtol {rtol})"},
    "detail.sep": {"en": "; ", "zh": "；", "es": "; "},
    "detail.mismatch": {"en": "MISMATCH: {text}", "zh": "不一致：{text}", "es": "DISCREPANCIA: {text}"},
    "detail.slots_from": {"en": "slots from {design}", "zh": "槽位来自 {design}", "es": "slots de {design}"},
    "detail.slots_wrong": {"en": "the slot mapping it used ({design}) was wrong",
                           "zh": "它所用的槽位映射（{design}）是错的", "es": "el mapeo de slots que usó ({design}) era erróneo"},
    "detail.slots_outside": {"en": "{n} of its slots lie outside the cache and were not written",
                             "zh": "其中 {n} 个槽位在缓存之外，没有写入",
                             "es": "{n} de sus slots caen fuera de la caché y no se escribieron"},
    "detail.what_slots": {"en": "{n} slots", "zh": "{n} 个槽位", "es": "{n} slots"},
    "detail.what_tail": {"en": "entries past indptr[-1] left alone", "zh": "indptr[-1] 之后的项保持不变",
                         "es": "entradas tras indptr[-1] intactas"},
    "detail.what_cache": {"en": "cache bytes ({layout}, {dtype}{note})", "zh": "缓存字节（{layout}，{dtype}{note}）",
                          "es": "bytes de la caché ({layout}, {dtype}{note})"},
    "detail.quant_kernel": {"en": ", quantised in the kernel", "zh": "，在内核中量化", "es": ", cuantizado en el kernel"},
    "detail.quant_torch": {"en": ", quantised by torch first: the interpreter's e4m3 cast is inexact, its kernel "
                                 "copies the bytes",
                           "zh": "，先由 torch 量化：解释器的 e4m3 转换不精确，其内核只拷贝字节",
                           "es": ", cuantizado antes por torch: la conversión e4m3 del intérprete es inexacta, su "
                                 "kernel copia los bytes"},
    "detail.what_attn": {"en": "{r} requests x {h} heads over {t} cached tokens",
                         "zh": "{r} 个请求 × {h} 个头，覆盖 {t} 个缓存 token",
                         "es": "{r} peticiones x {h} cabezas sobre {t} tokens en caché"},
}

# the speed goals in the page's language (kvviz.views.bench_goals reads the recorded English sentences back)
STRINGS.update({
    "goals_summary": {"en": "{met} of {n} speed goals met on {dev} ({date}).",
                      "zh": "{dev} 上 {n} 个速度目标达成 {met} 个（{date}）。",
                      "es": "{met} de {n} objetivos de velocidad cumplidos en {dev} ({date})."},
    "goals_about": {"en": "The goals are the project's targets against the cost of an empty kernel launch (a few µs): "
                          "\"not met\" means slower than that target, not wrong. Every kernel's output is checked "
                          "against the reference on its own page.",
                    "zh": "这些目标是项目相对于一次空内核启动（几微秒）的开销设定的指标：“未达成”表示比该指标慢，"
                          "而不是结果错误。每个内核的输出都在各自的页面上与参考实现核对。",
                    "es": "Los objetivos son metas del proyecto frente al coste de un lanzamiento vacío (unos pocos µs): "
                          "\"no cumplido\" significa más lento que esa meta, no erróneo. La salida de cada kernel se "
                          "comprueba frente a la referencia en su propia página."},
    "goals_all": {"en": "All {n} goals, with the figures that decide them", "zh": "全部 {n} 个目标及其判定数据",
                  "es": "Los {n} objetivos, con las cifras que los deciden"},
    "goals_cpu": {"en": "Speed goals are judged only on a GPU: here the Triton interpreter runs the kernels on the CPU, "
                        "so its µs are Python emulation times, not kernel speeds. The goals below are not measured "
                        "here; the recorded GPU runs (source \"Recorded\") hold their results.",
                  "zh": "速度目标只在 GPU 上评判：这里由 Triton 解释器在 CPU 上运行内核，其 µs 是 Python 模拟的耗时，"
                        "不是内核速度。下面的目标在此未测量；已记录的 GPU 运行（来源“已记录”）里有它们的结果。",
                  "es": "Los objetivos de velocidad solo se juzgan en una GPU: aquí el intérprete de Triton ejecuta los "
                        "kernels en la CPU, así que sus µs son tiempos de emulación en Python, no velocidades de kernel. "
                        "Los objetivos de abajo no se miden aquí; las ejecuciones GPU grabadas (fuente \"Grabada\") "
                        "tienen sus resultados."},
    "goal_not_measured": {"en": "not measured here", "zh": "此处未测量", "es": "no medido aquí"},
    # goal sentences (kvviz.gpu.bench.goals writes them in English)
    "g.slot_x": {"en": "slot mapping ({d}): within {x}× an empty launch, every shape",
                 "zh": "槽位映射（{d}）：每种形状都不超过空启动的 {x} 倍",
                 "es": "mapeo de slots ({d}): como mucho {x}× un lanzamiento vacío, en todas las formas"},
    "g.slot_torch": {"en": "slot mapping ({d}): at least {x}× faster than torch indexing",
                     "zh": "槽位映射（{d}）：比 torch 索引至少快 {x} 倍",
                     "es": "mapeo de slots ({d}): al menos {x}× más rápido que la indexación de torch"},
    "g.slot_best": {"en": "slot mapping, the fastest design per shape: within {x}× an empty launch, every shape",
                    "zh": "槽位映射，每种形状取最快的设计：每种形状都不超过空启动的 {x} 倍",
                    "es": "mapeo de slots, el diseño más rápido por forma: como mucho {x}× un lanzamiento vacío, en "
                          "todas las formas"},
    "g.csr": {"en": "CSR repack: within {x}× an empty launch ({r} × {p} pages)",
              "zh": "CSR 重排：不超过空启动的 {x} 倍（{r} × {p} 页）",
              "es": "reempaquetado CSR: como mucho {x}× un lanzamiento vacío ({r} × {p} páginas)"},
    "g.kv": {"en": "KV write: at least {p}% of the device copy bandwidth at ≥ {k}K tokens",
             "zh": "KV 写入：在 ≥ {k}K 个 token 时达到设备复制带宽的 {p}% 以上",
             "es": "escritura KV: al menos el {p}% del ancho de banda de copia del dispositivo con ≥ {k}K tokens"},
    "g.fused_dev": {"en": "fused step, 1 group: at most {x}× an empty launch, host hidden, cold L2",
                    "zh": "融合步骤，1 个组：不超过空启动的 {x} 倍（隐藏主机，冷 L2）",
                    "es": "paso fusionado, 1 grupo: como mucho {x}× un lanzamiento vacío, host oculto, L2 fría"},
    "g.fused_graph": {"en": "fused step, 1 group: at most {x} µs per step in a CUDA graph",
                      "zh": "融合步骤，1 个组：在 CUDA 图中每步不超过 {x} µs",
                      "es": "paso fusionado, 1 grupo: como mucho {x} µs por paso en un grafo CUDA"},
    "g.fused_g4": {"en": "fused step: 4 groups at most {x}× 1 group, in a CUDA graph",
                   "zh": "融合步骤：4 个组不超过 1 个组的 {x} 倍（CUDA 图中）",
                   "es": "paso fusionado: 4 grupos como mucho {x}× 1 grupo, en un grafo CUDA"},
    "g.fused_sep": {"en": "fused step: at most {x}× the separate launches, in a CUDA graph",
                    "zh": "融合步骤：不超过单独启动的 {x} 倍（CUDA 图中）",
                    "es": "paso fusionado: como mucho {x}× los lanzamientos separados, en un grafo CUDA"},
    "g.fused_vllm": {"en": "fused step: at most {x}× vLLM's own step kernels, every shape, both runners, in a CUDA graph",
                     "zh": "融合步骤：不超过 vLLM 自身步骤内核的 {x} 倍（每种形状、两种运行器，CUDA 图中）",
                     "es": "paso fusionado: como mucho {x}× los kernels de paso de vLLM, en todas las formas, con "
                           "ambos runners, en un grafo CUDA"},
    "g.how_graph": {"en": ", in a CUDA graph (device time per launch)", "zh": "，CUDA 图中（每次启动的设备时间）",
                    "es": ", en un grafo CUDA (tiempo de dispositivo por lanzamiento)"},
    "g.how_cold": {"en": ", device-timed with the host hidden (cold L2)", "zh": "，隐藏主机的设备计时（冷 L2）",
                   "es": ", tiempo de dispositivo con el host oculto (L2 fría)"},
    "g.how_warm": {"en": ", device-timed with the host hidden (warm L2: inputs where the last call left them)",
                   "zh": "，隐藏主机的设备计时（热 L2：输入仍在上次调用留下的位置）",
                   "es": ", tiempo de dispositivo con el host oculto (L2 caliente: las entradas donde las dejó la "
                         "última llamada)"},
    # their figures
    "f.worst_vs": {"en": "worst {x}× at {s} ({us} µs against {f} µs)", "zh": "最差 {x} 倍，形状 {s}（{us} µs 对比 {f} µs）",
                   "es": "peor {x}× en {s} ({us} µs frente a {f} µs)"},
    "f.within": {"en": "; {n} of {m} shapes within", "zh": "；{m} 种形状中 {n} 种达标",
                 "es": "; {n} de {m} formas dentro"},
    "f.worst_best": {"en": "worst {x}× at {s}; best {b}×", "zh": "最差 {x} 倍，形状 {s}；最好 {b} 倍",
                     "es": "peor {x}× en {s}; mejor {b}×"},
    "f.worst_pick": {"en": "worst {x}× at {s} ({v}, {us} µs); fastest design per shape: {picks}",
                     "zh": "最差 {x} 倍，形状 {s}（{v}，{us} µs）；每种形状最快的设计：{picks}",
                     "es": "peor {x}× en {s} ({v}, {us} µs); diseño más rápido por forma: {picks}"},
    "f.us_x": {"en": "{us} µs = {x}×", "zh": "{us} µs = {x} 倍", "es": "{us} µs = {x}×"},
    "f.kv": {"en": "worst {p}% ({gb} GB/s, {what}) of {c} GB/s", "zh": "最差 {p}%（{gb} GB/s，{what}），复制带宽 {c} GB/s",
             "es": "peor {p}% ({gb} GB/s, {what}) de {c} GB/s"},
    "f.n_worst": {"en": "{n} of {m}; worst {w}", "zh": "{m} 个中 {n} 个达标；最差 {w}", "es": "{n} de {m}; peor {w}"},
    "f.missed": {"en": "; missed: {miss}", "zh": "；未达标：{miss}", "es": "; no cumplidos: {miss}"},
})
