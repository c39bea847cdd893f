"""The Captured runs page: a run recorded from a real vLLM engine, step by step."""
STRINGS = {
    "title": {"en": "Captured runs", "zh": "捕获的运行", "es": "Ejecuciones capturadas"},
    "intro": {"en": "A *captured run* is what kvviz's vLLM plugin records from a real engine: every step's block "
                    "table, slot mapping and scheduler output. Open one, read the checker's verdict, and step "
                    "through it: the rows carry their request ids.",
              "zh": "*捕获的运行*是 kvviz 的 vLLM 插件从真实引擎记录下来的内容：每一步的块表、槽位映射和调度器输出。"
                    "打开一个运行，查看检查器的结论，然后逐步浏览：每一行都标有它的请求 ID。",
              "es": "Una *ejecución capturada* es lo que el plugin de vLLM de kvviz graba de un motor real: la tabla de "
                    "bloques, el mapeo de slots y la salida del planificador de cada paso. Abre una, lee el veredicto "
                    "del verificador y recórrela paso a paso: las filas llevan el id de su petición."},
    "pick": {"en": "Run on this server", "zh": "本服务器上的运行", "es": "Ejecución de este servidor"},
    "pick_placeholder": {"en": "Pick a run", "zh": "选择一个运行", "es": "Elige una ejecución"},
    "pick_help": {"en": "The runs in the folder the operator named when starting the app (KVVIZ_RUNS_DIR).",
                  "zh": "运营者启动应用时指定的文件夹（KVVIZ_RUNS_DIR）中的运行。",
                  "es": "Las ejecuciones de la carpeta que el operador indicó al iniciar la app (KVVIZ_RUNS_DIR)."},
    "upload": {"en": "Or upload a run (.zip)", "zh": "或上传一个运行（.zip）", "es": "O sube una ejecución (.zip)"},
    "upload_help": {"en": "A zip of a captured run's folder (manifest.json, requests.json, steps/), at most {mb} MiB.",
                    "zh": "捕获运行文件夹的 zip（manifest.json、requests.json、steps/），最大 {mb} MiB。",
                    "es": "Un zip de la carpeta de una ejecución capturada (manifest.json, requests.json, steps/), "
                          "de {mb} MiB como máximo."},
    "no_dir": {"en": "This server offers no folder of runs: the operator can start the app with "
                     "`KVVIZ_RUNS_DIR=/path/to/runs`, and each subfolder holding a manifest.json is offered here.",
               "zh": "本服务器没有提供运行文件夹：运营者可以用 `KVVIZ_RUNS_DIR=/path/to/runs` 启动应用，"
                     "其中每个含 manifest.json 的子文件夹都会列在这里。",
               "es": "Este servidor no ofrece una carpeta de ejecuciones: el operador puede iniciar la app con "
                     "`KVVIZ_RUNS_DIR=/ruta/a/ejecuciones`, y cada subcarpeta con un manifest.json aparece aquí."},
    "empty_dir": {"en": "The server's folder of runs holds no run yet.",
                  "zh": "服务器的运行文件夹里还没有运行。",
                  "es": "La carpeta de ejecuciones del servidor aún no tiene ninguna."},
    "how_title": {"en": "How to open a run", "zh": "如何打开一个运行", "es": "Cómo abrir una ejecución"},
    "how": {"en": "Capture one with these three commands, then upload a zip of the folder (or ask the operator "
                  "to put the folder in the server's folder of runs):",
            "zh": "用下面三条命令捕获一个运行，然后上传该文件夹的 zip（或请运营者把文件夹放进服务器的运行文件夹）：",
            "es": "Captura una con estas tres órdenes y luego sube un zip de la carpeta (o pide al operador que "
                  "la ponga en la carpeta de ejecuciones del servidor):"},
    "none_open": {"en": "No run is open yet.", "zh": "还没有打开任何运行。", "es": "Aún no hay ninguna ejecución abierta."},
    "shows_none": {"en": "Shows a run captured from a real vLLM engine, checked under the release it names.",
                   "zh": "展示从真实 vLLM 引擎捕获的运行，按它所写的版本检查。",
                   "es": "Muestra una ejecución capturada de un motor vLLM real, verificada con la versión que nombra."},
    "open_dir": {"en": "Open: **{name}**, from the server's folder of runs.",
                 "zh": "已打开：**{name}**，来自服务器的运行文件夹。",
                 "es": "Abierta: **{name}**, de la carpeta de ejecuciones del servidor."},
    "open_upload": {"en": "Open: **{name}**, uploaded.", "zh": "已打开：**{name}**，已上传。",
                    "es": "Abierta: **{name}**, subida."},
    "bad_upload": {"en": "Refused: {msg}", "zh": "已拒绝：{msg}", "es": "Rechazada: {msg}"},
    "still_open": {"en": "Still open: {name}.", "zh": "仍然打开的是：{name}。", "es": "Sigue abierta: {name}."},
    "bad_link": {"en": "Link refused: {msg}", "zh": "链接被拒绝：{msg}", "es": "Enlace rechazado: {msg}"},
    "link_snapped": {"en": "Step {step} of the link was not captured; showing step {shown}.",
                     "zh": "链接中的第 {step} 步没有被捕获；显示第 {shown} 步。",
                     "es": "El paso {step} del enlace no se capturó; se muestra el paso {shown}."},
    "bad_run": {"en": "This run cannot be opened: {msg}", "zh": "无法打开这个运行：{msg}",
                "es": "No se puede abrir esta ejecución: {msg}"},
    # --- the manifest ---
    "engine": {"en": "Engine", "zh": "引擎", "es": "Motor"},
    "knobs": {"en": "Scheduler knobs", "zh": "调度器参数", "es": "Parámetros del planificador"},
    "col_what": {"en": "setting", "zh": "设置", "es": "ajuste"},
    "col_value": {"en": "value", "zh": "值", "es": "valor"},
    "m_release": {"en": "vLLM release", "zh": "vLLM 版本", "es": "versión de vLLM"},
    "m_runner": {"en": "model runner", "zh": "模型运行器", "es": "model runner"},
    "m_backend": {"en": "attention backend", "zh": "注意力后端", "es": "backend de atención"},
    "m_block_size": {"en": "block size (tokens)", "zh": "块大小（token）", "es": "tamaño de bloque (tokens)"},
    "m_kernel_block_size": {"en": "kernel block size", "zh": "内核块大小", "es": "tamaño de bloque del kernel"},
    "m_num_blocks": {"en": "blocks in the pool", "zh": "池中的块数", "es": "bloques del pool"},
    "m_groups": {"en": "KV-cache groups", "zh": "KV 缓存组", "es": "grupos de caché KV"},
    "m_device": {"en": "device", "zh": "设备", "es": "dispositivo"},
    "m_max_num_seqs": {"en": "max_num_seqs", "zh": "max_num_seqs", "es": "max_num_seqs"},
    "m_max_num_batched_tokens": {"en": "max_num_batched_tokens", "zh": "max_num_batched_tokens",
                                 "es": "max_num_batched_tokens"},
    "m_chunked_prefill": {"en": "chunked prefill", "zh": "分块预填充", "es": "prefill por trozos"},
    "m_prefix_caching": {"en": "prefix caching", "zh": "前缀缓存", "es": "caché de prefijos"},
    "m_policy": {"en": "scheduling policy", "zh": "调度策略", "es": "política de planificación"},
    "m_async_scheduling": {"en": "async scheduling", "zh": "异步调度", "es": "planificación asíncrona"},
    "m_max_model_len": {"en": "max model length", "zh": "最大模型长度", "es": "longitud máxima del modelo"},
    "captured": {"en": "{n} captured steps ({first} … {last}), {reqs} requests; the capture dropped {dropped} steps.",
                 "zh": "共捕获 {n} 步（{first} … {last}），{reqs} 个请求；捕获时丢弃了 {dropped} 步。",
                 "es": "{n} pasos capturados ({first} … {last}), {reqs} peticiones; la captura descartó {dropped} pasos."},
    # --- the verdict ---
    "checking": {"en": "Checking the run: step {done} of {n}…", "zh": "正在检查运行：第 {done} / {n} 步…",
                 "es": "Verificando la ejecución: paso {done} de {n}…"},
    "verdict_clean": {"en": "Clean: the checker finds nothing in any of the {n} captured steps (rules of vLLM {v}).",
                      "zh": "干净：检查器在全部 {n} 个捕获的步骤中都没有发现问题（按 vLLM {v} 的规则）。",
                      "es": "Limpia: el verificador no encuentra nada en ninguno de los {n} pasos capturados (reglas de "
                            "vLLM {v})."},
    "verdict_bad": {"en": "First wrong step: **{step}** (group {group}, row {row}, {check}). Findings at {k} of {n} "
                          "captured steps (rules of vLLM {v}).",
                    "zh": "第一个出错的步骤：**{step}**（组 {group}，行 {row}，{check}）。{n} 个捕获的步骤中有 {k} 个有发现"
                          "（按 vLLM {v} 的规则）。",
                    "es": "Primer paso erróneo: **{step}** (grupo {group}, fila {row}, {check}). Hallazgos en {k} de {n} "
                          "pasos capturados (reglas de vLLM {v})."},
    "verdict_bad_norow": {"en": "First wrong step: **{step}** (group {group}, {check}, in no single row). Findings at "
                                "{k} of {n} captured steps (rules of vLLM {v}).",
                          "zh": "第一个出错的步骤：**{step}**（组 {group}，{check}，不属于某一行）。{n} 个捕获的步骤中有 "
                                "{k} 个有发现（按 vLLM {v} 的规则）。",
                          "es": "Primer paso erróneo: **{step}** (grupo {group}, {check}, en ninguna fila concreta). "
                                "Hallazgos en {k} de {n} pasos capturados (reglas de vLLM {v})."},
    # --- stepping ---
    "back": {"en": "Previous", "zh": "上一步", "es": "Anterior"},
    "next": {"en": "Next", "zh": "下一步", "es": "Siguiente"},
    "jump": {"en": "First wrong step", "zh": "第一个出错的步骤", "es": "Primer paso erróneo"},
    "step": {"en": "Step", "zh": "步骤", "es": "Paso"},
    "step_box": {"en": "Go to step", "zh": "跳到步骤", "es": "Ir al paso"},
    "step_info": {"en": "Step {step} ({i} of {n} captured): {reqs} requests in the batch ({rpad} rows with the "
                        "CUDA-graph padding), {tok} tokens ({tpad} with padding).",
                  "zh": "第 {step} 步（捕获的第 {i} / {n} 步）：批次中有 {reqs} 个请求（含 CUDA graph 填充共 {rpad} 行），"
                        "{tok} 个 token（含填充共 {tpad} 个）。",
                  "es": "Paso {step} ({i} de {n} capturados): {reqs} peticiones en el lote ({rpad} filas con el "
                        "relleno de CUDA graph), {tok} tokens ({tpad} con relleno)."},
    "group": {"en": "KV-cache group", "zh": "KV 缓存组", "es": "Grupo de caché KV"},
    "group_option": {"en": "group {g}", "zh": "组 {g}", "es": "grupo {g}"},
    "no_dump": {"en": "The capture recorded no tables for this group at this step.",
                "zh": "捕获时没有记录这一步中这个组的表。",
                "es": "La captura no grabó las tablas de este grupo en este paso."},
    "bad_step": {"en": "This step cannot be read: {msg}", "zh": "无法读取这一步：{msg}",
                 "es": "No se puede leer este paso: {msg}"},
    # --- findings ---
    "findings": {"en": "What the checker finds at this step", "zh": "检查器在这一步的发现",
                 "es": "Lo que el verificador encuentra en este paso"},
    "findings_none": {"en": "Nothing: every check passes at this step.", "zh": "没有：这一步的所有检查都通过了。",
                      "es": "Nada: todas las verificaciones pasan en este paso."},
    "findings_some": {"en": "{k} findings at this step; wrong rows: {rows}.", "zh": "这一步有 {k} 个发现；出错的行：{rows}。",
                      "es": "{k} hallazgos en este paso; filas erróneas: {rows}."},
    "finding_line": {"en": "row {row}: {msg}", "zh": "行 {row}：{msg}", "es": "fila {row}: {msg}"},
    "no_rows": {"en": "none", "zh": "无", "es": "ninguna"},
    "col_check": {"en": "check", "zh": "检查", "es": "verificación"},
    "col_row": {"en": "row", "zh": "行", "es": "fila"},
    "col_request": {"en": "request", "zh": "请求", "es": "petición"},
    "col_index": {"en": "index", "zh": "索引", "es": "índice"},
    # --- figures ---
    "table": {"en": "Block table, rows named by request id", "zh": "块表（每行标有请求 ID）",
              "es": "Tabla de bloques, filas con el id de su petición"},
    "table_v2": {"en": "Input block table (Model Runner V2: gathered in batch order), rows named by request id",
                 "zh": "输入块表（Model Runner V2：按批次顺序收集），每行标有请求 ID",
                 "es": "Tabla de bloques de entrada (Model Runner V2: reunida en orden de lote), filas con el id de su "
                       "petición"},
    "table_caption": {"en": "Colour and number: the physical block id in each entry (grey: the null block 0). Dotted "
                            "outline: the blocks a row counts. Crimson outline: a row the checker flags. Black box: "
                            "the token you follow.",
                      "zh": "颜色和数字：每个条目中的物理块 ID（灰色：空块 0）。虚线框：该行计入的块。深红色框：检查器标出的行。"
                            "黑框：你跟踪的 token。",
                      "es": "Color y número: el id del bloque físico de cada entrada (gris: el bloque nulo 0). Contorno "
                            "punteado: los bloques que cuenta la fila. Contorno carmesí: una fila que el verificador "
                            "señala. Recuadro negro: el token que sigues."},
    "table_window": {"en": "Drawn: rows {r0} … {r1} and columns {c0} … {c1} of {rows} × {width}.",
                     "zh": "已绘制：共 {rows} × {width} 中的第 {r0} … {r1} 行、第 {c0} … {c1} 列。",
                     "es": "Dibujadas: filas {r0} … {r1} y columnas {c0} … {c1} de {rows} × {width}."},
    "flagged": {"en": "row the checker flags", "zh": "检查器标出的行", "es": "fila señalada por el verificador"},
    "slots": {"en": "Slot mapping", "zh": "槽位映射", "es": "Mapeo de slots"},
    "slots_caption": {"en": "One marker per token of this step: its slot (up) by its index (across), coloured by its "
                            "request row (the legend names each row's request). Crosses: padding (slot -1). Ring: "
                            "the token you follow, if this step wrote it.",
                      "zh": "这一步的每个 token 一个标记：纵轴是它的槽位，横轴是它的序号，颜色表示它的请求行（图例写出每行的请求）。"
                            "叉号：填充（槽位 -1）。圆环：你跟踪的 token（如果是这一步写入的）。",
                      "es": "Un marcador por token de este paso: su slot (vertical) según su índice (horizontal), "
                            "coloreado por su fila de petición (la leyenda nombra la petición de cada fila). Cruces: "
                            "relleno (slot -1). Anillo: el token que sigues, si este paso lo escribió."},
    "no_slots": {"en": "This step's dump has no slot mapping (or no query_start_loc or positions): nothing to draw.",
                 "zh": "这一步的转储没有槽位映射（或没有 query_start_loc、positions）：无法绘制。",
                 "es": "El volcado de este paso no tiene mapeo de slots (ni query_start_loc o positions): nada que "
                       "dibujar."},
    # --- follow one token ---
    "follow": {"en": "Follow one token", "zh": "跟踪一个 token", "es": "Sigue un token"},
    "follow_request": {"en": "Request", "zh": "请求", "es": "Petición"},
    "follow_position": {"en": "Token position", "zh": "token 位置", "es": "Posición del token"},
    "follow_position_help": {"en": "0 … {last}: the positions this request holds after the step.",
                             "zh": "0 … {last}：这个请求在这一步之后持有的位置。",
                             "es": "0 … {last}: las posiciones que esta petición tiene tras el paso."},
    "chain_logical": {"en": "logical block", "zh": "逻辑块", "es": "bloque lógico"},
    "chain_column": {"en": "column", "zh": "列", "es": "columna"},
    "chain_physical": {"en": "physical block", "zh": "物理块", "es": "bloque físico"},
    "chain_offset": {"en": "offset", "zh": "块内偏移", "es": "desplazamiento"},
    "chain_slot": {"en": "slot", "zh": "槽位", "es": "slot"},
    "written": {"en": "Written at this step as token {t}: the captured slot mapping says slot {s}, as the table does.",
                "zh": "在这一步作为第 {t} 个 token 写入：捕获的槽位映射给出槽位 {s}，与块表一致。",
                "es": "Escrito en este paso como token {t}: el mapeo de slots capturado dice slot {s}, igual que la "
                      "tabla."},
    "written_differs": {"en": "Written at this step as token {t}: the captured slot mapping says slot {s}, but the "
                              "table says {want}.",
                        "zh": "在这一步作为第 {t} 个 token 写入：捕获的槽位映射给出槽位 {s}，但块表给出的是 {want}。",
                        "es": "Escrito en este paso como token {t}: el mapeo de slots capturado dice slot {s}, pero la "
                              "tabla dice {want}."},
    "not_written": {"en": "Not written at this step: an earlier step wrote its KV; the table says where it is.",
                    "zh": "不是在这一步写入的：它的 KV 由更早的步骤写入；块表给出它所在的位置。",
                    "es": "No se escribió en este paso: un paso anterior escribió su KV; la tabla dice dónde está."},
    "not_counted": {"en": "The row counts {n} blocks: logical block {b} is past them, so the table holds no block for "
                          "this position (the entry shown is stale or empty).",
                    "zh": "该行计入 {n} 个块：逻辑块 {b} 超出了范围，所以块表中没有这个位置的块（显示的条目是过时的或空的）。",
                    "es": "La fila cuenta {n} bloques: el bloque lógico {b} queda fuera, así que la tabla no tiene bloque "
                          "para esta posición (la entrada mostrada es obsoleta o vacía)."},
    "null_block": {"en": "Block 0 is the null block, which vLLM never hands out: KV written through this entry lands "
                         "where no request owns it.",
                   "zh": "块 0 是空块，vLLM 从不分配它：通过这个条目写入的 KV 会落在不属于任何请求的地方。",
                   "es": "El bloque 0 es el bloque nulo, que vLLM nunca entrega: el KV escrito a través de esta entrada "
                         "cae donde ninguna petición lo posee."},
    "other_rank": {"en": "Another DCP rank stores this position.", "zh": "这个位置由另一个 DCP rank 存储。",
                   "es": "Otro rank de DCP guarda esta posición."},
    "no_requests": {"en": "No request is in this step's batch.", "zh": "这一步的批次中没有请求。",
                    "es": "No hay peticiones en el lote de este paso."},
    # --- events and rows ---
    "events": {"en": "Events at this step", "zh": "这一步的事件", "es": "Eventos de este paso"},
    "events_none": {"en": "No request arrived, was preempted, finished or was aborted at this step.",
                    "zh": "这一步没有请求到达、被抢占、完成或中止。",
                    "es": "En este paso ninguna petición llegó, fue expulsada, terminó ni se abortó."},
    "col_event": {"en": "event", "zh": "事件", "es": "evento"},
    "col_detail": {"en": "detail", "zh": "详情", "es": "detalle"},
    "ev_arrived": {"en": "arrived", "zh": "到达", "es": "llegó"},
    "ev_preempted": {"en": "preempted", "zh": "被抢占", "es": "expulsada"},
    "ev_finished": {"en": "finished", "zh": "完成", "es": "terminó"},
    "ev_aborted": {"en": "aborted", "zh": "中止", "es": "abortada"},
    "ev_sched_new": {"en": "scheduled for the first time", "zh": "首次被调度", "es": "planificada por primera vez"},
    "ev_sched_preempted": {"en": "preempted, its blocks freed", "zh": "被抢占，其块已释放",
                           "es": "expulsada, sus bloques liberados"},
    "ev_sched_finished": {"en": "finished before this step, its blocks freed", "zh": "在这一步之前完成，其块已释放",
                          "es": "terminó antes de este paso, sus bloques liberados"},
    "from_scheduler": {"en": "scheduler output", "zh": "调度器输出", "es": "salida del planificador"},
    "rows": {"en": "The step's rows", "zh": "这一步的各行", "es": "Las filas del paso"},
    "rows_caption": {"en": "Rows the checker flags are shaded. The table's blocks are what the row counts; the "
                           "scheduler's are the blocks the KV-cache manager gave the request.",
                     "zh": "检查器标出的行带有底色。块表的块是该行计入的块；调度器的块是 KV 缓存管理器分配给该请求的块。",
                     "es": "Las filas que el verificador señala van sombreadas. Los bloques de la tabla son los que cuenta "
                           "la fila; los del planificador, los que el gestor de caché KV dio a la petición."},
    "col_scheduled": {"en": "tokens now", "zh": "本步 token", "es": "tokens ahora"},
    "col_seq_len": {"en": "seq_len", "zh": "seq_len", "es": "seq_len"},
    "col_table_blocks": {"en": "table's blocks", "zh": "块表的块", "es": "bloques de la tabla"},
    "col_scheduler_blocks": {"en": "scheduler's blocks", "zh": "调度器的块", "es": "bloques del planificador"},
    "col_flags": {"en": "flagged by", "zh": "标出它的检查", "es": "señalada por"},
    # --- links ---
    "link": {"en": "Link to this step (the run, the step and the language):", "zh": "这一步的链接（运行、步骤和语言）：",
             "es": "Enlace a este paso (la ejecución, el paso y el idioma):"},
    "no_link": {"en": "An uploaded run is not in the link: a link names only runs in the server's folder. Share the "
                      "zip and the step number ({step}) instead.",
                "zh": "上传的运行不会写进链接：链接只能指向服务器文件夹中的运行。请改为分享 zip 和步骤编号（{step}）。",
                "es": "Una ejecución subida no va en el enlace: un enlace solo nombra ejecuciones de la carpeta del "
                      "servidor. Comparte el zip y el número de paso ({step})."},
}
