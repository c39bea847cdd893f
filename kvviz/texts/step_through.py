"""Step-through page prose."""
STRINGS = {
    "title": {"en": "Step through a scenario", "zh": "逐步执行场景", "es": "Escenario paso a paso"},
    "intro": {"en": "The engine replays a scenario step by step like vLLM V1: schedule, update the persistent batch "
                    "(remove, append, add, condense), **commit** the block table to the device, build the step's "
                    "inputs. Until the commit the device copy is stale: compare the two tables.",
              "zh": "引擎像 vLLM V1 一样逐步重放场景：调度，更新持久批次（移除、追加、添加、压缩），把块表**提交**到设备，"
                    "构建本步输入。提交之前设备副本是过期的：比较这两张表。",
              "es": "El motor reproduce un escenario paso a paso como vLLM V1: planifica, actualiza el lote persistente "
                    "(quitar, añadir bloques, añadir filas, compactar), **confirma** la tabla en el dispositivo y "
                    "construye las entradas del paso. Hasta la confirmación la copia del dispositivo está obsoleta: "
                    "compara las dos tablas."},
    "scenario": {"en": "Scenario", "zh": "场景", "es": "Escenario"},
    "custom": {"en": "Your own scenario (JSON)", "zh": "自定义场景（JSON）", "es": "Tu propio escenario (JSON)"},
    "custom_help": {"en": "Same format as `kvviz run`. Press Load; the built-in choice is ignored while a "
                          "custom scenario is loaded.",
                    "zh": "格式与 `kvviz run` 相同。点击加载；加载自定义场景后忽略内置选择。",
                    "es": "El mismo formato que `kvviz run`. Pulsa Cargar; mientras haya uno propio se ignora el "
                          "escenario predefinido."},
    "load": {"en": "Load", "zh": "加载", "es": "Cargar"},
    "unload": {"en": "Back to built-in scenarios", "zh": "返回内置场景", "es": "Volver a los predefinidos"},
    "bad_scenario": {"en": "This scenario cannot be loaded: {msg}", "zh": "无法加载该场景：{msg}",
                     "es": "No se puede cargar este escenario: {msg}"},
    "back": {"en": "Back", "zh": "上一步", "es": "Atrás"},
    "next": {"en": "Next", "zh": "下一步", "es": "Siguiente"},
    "step": {"en": "Step", "zh": "步", "es": "Paso"},
    "summary": {"en": "Step {i} of {n}: {reqs} request(s), {tok} token(s), padded to {rpad} rows and {tpad} tokens; "
                      "commit copied rows [0, {rows}) = {bytes} bytes.",
                "zh": "第 {i} 步（共 {n} 步）：{reqs} 个请求，{tok} 个 token，填充到 {rpad} 行、{tpad} 个 token；"
                      "提交复制了第 [0, {rows}) 行 = {bytes} 字节。",
                "es": "Paso {i} de {n}: {reqs} petición(es), {tok} token(s), relleno a {rpad} filas y {tpad} "
                      "tokens; la confirmación copió las filas [0, {rows}) = {bytes} bytes."},
    "colours": {"en": "Colours: in the block tables a cell's colour is the physical block id written in it (gray = block 0, "
                      "the null block); in the free queue gray = free and orange = free but still cached (a prefix-cache "
                      "hit can take it back); the ref counts' colours are named in their legend.",
                "zh": "颜色：块表中单元格的颜色是写在其中的物理块号（灰色 = 0 号块，即空块）；空闲队列中灰色 = 空闲，"
                      "橙色 = 空闲但仍在缓存中（前缀缓存命中可将其取回）；引用计数的颜色见其图例。",
                "es": "Colores: en las tablas de bloques el color de una celda es el id de bloque físico escrito en ella "
                      "(gris = bloque 0, el bloque nulo); en la cola libre gris = libre y naranja = libre pero aún en caché "
                      "(un acierto de la caché de prefijos puede recuperarlo); los colores de los contadores de "
                      "referencias se nombran en su leyenda."},
    "events": {"en": "What happened in this step", "zh": "本步发生了什么", "es": "Qué pasó en este paso"},
    "cpu": {"en": "CPU block table (after the row operations)", "zh": "CPU 块表（行操作之后）",
            "es": "Tabla de bloques en CPU (tras las operaciones de fila)"},
    "dev_before": {"en": "Device mirror before commit (red: stale rows)", "zh": "提交前的设备镜像（红色：过期行）",
                   "es": "Copia del dispositivo antes de confirmar (rojo: filas obsoletas)"},
    "dev_after": {"en": "Device mirror after commit", "zh": "提交后的设备镜像", "es": "Copia del dispositivo tras confirmar"},
    "show_after": {"en": "Show the mirror after the commit", "zh": "显示提交后的镜像",
                   "es": "Mostrar la copia tras la confirmación"},
    "stale": {"en": "Stale rows before the commit: {rows}.", "zh": "提交前的过期行：{rows}。",
              "es": "Filas obsoletas antes de confirmar: {rows}."},
    "no_stale": {"en": "No row changed: the mirror was already up to date.", "zh": "没有行发生变化：镜像本就是最新的。",
                 "es": "Ninguna fila cambió: la copia ya estaba al día."},
    "scheduled": {"en": "Scheduled this step", "zh": "本步调度", "es": "Planificado en este paso"},
    "requests": {"en": "Requests", "zh": "请求", "es": "Peticiones"},
    "free_queue": {"en": "Free queue", "zh": "空闲队列", "es": "Cola libre"},
    "refs": {"en": "Ref count per block (red: shared, orange: free but still cached)",
             "zh": "每个块的引用计数（红：共享，橙：空闲但仍在缓存）",
             "es": "Referencias por bloque (rojo: compartido, naranja: libre pero aún en caché)"},
    "link": {"en": "Link to this step:", "zh": "指向本步的链接：", "es": "Enlace a este paso:"},
    "no_link": {"en": "A custom scenario can't be shared by link: the address no longer names a scenario. "
                      "Share its JSON instead.",
                "zh": "自定义场景无法通过链接分享：地址中不再包含场景。请改为分享它的 JSON。",
                "es": "Un escenario propio no se puede compartir por enlace: la dirección ya no nombra un "
                      "escenario. Comparte su JSON."},
    "pool_when": {"en": "Pool state shown", "zh": "显示的块池状态", "es": "Estado del pool mostrado"},
    "when_after": {"en": "after this step's finishes", "zh": "本步请求结束之后", "es": "tras los finales de este paso"},
    "when_launch": {"en": "at the kernels' launch", "zh": "内核启动时", "es": "al lanzar los kernels"},
    "pool_diff": {"en": "After the kernels' launch these requests finished and released their blocks: {reqs}. "
                        "The events end with that state.",
                  "zh": "内核启动之后这些请求结束并释放了它们的块：{reqs}。事件以该状态结束。",
                  "es": "Tras lanzar los kernels estas peticiones terminaron y liberaron sus bloques: {reqs}. "
                        "Los eventos acaban en ese estado."},
    "pool_same": {"en": "No request finished after the kernels' launch: the pool is the same at launch and after.",
                  "zh": "内核启动之后没有请求结束：启动时与之后的块池相同。",
                  "es": "Ninguna petición terminó tras lanzar los kernels: el pool es el mismo al lanzar y después."},
    # --- the vLLM version and model runner (shared by every page that shows tables) ---
    "vllm": {"en": "vLLM version", "zh": "vLLM 版本", "es": "Versión de vLLM"},
    "vllm_main": {"en": "main (08-18)", "zh": "main（08-18）", "es": "main (08-18)"},
    "runner": {"en": "Model runner", "zh": "模型运行器", "es": "Ejecutor del modelo"},
    "runner_auto": {"en": "auto → {runner}", "zh": "自动 → {runner}", "es": "automático → {runner}"},
    "runner_v1": {"en": "V1: persistent batch", "zh": "V1：持久批次", "es": "V1: lote persistente"},
    "runner_v2": {"en": "V2: request states + gather", "zh": "V2：请求状态 + gather",
                  "es": "V2: estados de petición + gather"},
    "runner_help": {"en": "auto follows the vLLM version: Model Runner V2 for dense models from v0.25.0 (#44443), "
                          "for every model from v0.29.0 (#53183), V1 before. V2 first shipped, opt-in, in v0.12.0 "
                          "(#25266), so older versions offer only V1; v0.34.0 deleted V1, so it offers only V2.",
                    "zh": "自动：跟随 vLLM 版本，从 v0.25.0（#44443）起稠密模型用 Model Runner V2，从 v0.29.0（#53183）起"
                          "所有模型都用 V2，之前用 V1。V2 首次（需手动开启）出现在 v0.12.0（#25266），因此更早的版本只提供 V1；"
                          "v0.34.0 删除了 V1，因此只提供 V2。",
                    "es": "automático sigue la versión de vLLM: Model Runner V2 para modelos densos desde v0.25.0 (#44443), "
                          "para todos los modelos desde v0.29.0 (#53183), V1 antes. V2 apareció (opcional) en v0.12.0 "
                          "(#25266), así que las versiones anteriores solo ofrecen V1; v0.34.0 eliminó V1, así que "
                          "solo ofrece V2."},
    "no_v2": {"en": "vLLM {version} has only Model Runner V1 (V2 first shipped in v0.12.0, #25266): V2 is not offered.",
              "zh": "vLLM {version} 只有 Model Runner V1（V2 首次出现在 v0.12.0，#25266）：不提供 V2。",
              "es": "vLLM {version} solo tiene Model Runner V1 (V2 apareció en v0.12.0, #25266): no se ofrece V2."},
    "no_v1": {"en": "vLLM {version} has no Model Runner V1 (v0.34.0 deleted it; {last} is the last release with V1): "
                    "V1 is not offered.",
              "zh": "vLLM {version} 没有 Model Runner V1（v0.34.0 已将其删除；{last} 是最后一个带 V1 的版本）：不提供 V1。",
              "es": "vLLM {version} no tiene Model Runner V1 (v0.34.0 lo eliminó; {last} es la última versión con V1): "
                    "no se ofrece V1."},
    "v1_only_model": {"en": "This scenario has a state group or several KV-cache groups: before v0.29.0 vLLM keeps such "
                            "models on Model Runner V1, so it runs on V1 whatever the runner selector says.",
                      "zh": "该场景含状态组或多个 KV 缓存组：v0.29.0 之前 vLLM 让这类模型留在 Model Runner V1，因此无论运行器选择什么都按 V1 运行。",
                      "es": "Este escenario tiene un grupo de estado o varios grupos de caché KV: antes de v0.29.0 vLLM "
                            "mantiene esos modelos en Model Runner V1, así que se ejecuta en V1 diga lo que diga el "
                            "selector."},
    "running": {"en": "Simulating vLLM {version}, Model Runner {runner}.", "zh": "模拟 vLLM {version}，Model Runner {runner}。",
                "es": "Simulando vLLM {version}, Model Runner {runner}."},
    "custom_versions": {"en": "Loading a scenario sets the version and runner selectors from its own `vllm` and "
                              "`runner` config keys (if it has them); change a selector afterwards to override them.",
                        "zh": "加载场景时，版本与运行器选择器取自它自己的 `vllm` 与 `runner` 配置项（如果有）；"
                              "之后改动选择器即可覆盖它们。",
                        "es": "Al cargar un escenario, los selectores de versión y runner toman sus claves `vllm` y "
                              "`runner` de la config (si las tiene); cambia luego un selector para imponer otro valor."},
    # --- Model Runner V2's tables ---
    "intro_v2": {"en": "The engine replays a scenario step by step like vLLM's **Model Runner V2**: schedule; finished "
                       "requests give their request-state index back (LIFO free list, rows not cleared), new ones take "
                       "one and have their block ids **staged** on the host; **apply_staged_writes** lands them in the "
                       "request-state block table; then the scheduled requests are put in batch order and **gather** "
                       "copies each one's state row (through `idx_mapping`) into the input block table the kernels read.",
                 "zh": "引擎像 vLLM 的 **Model Runner V2** 一样逐步重放场景：调度；结束的请求归还请求状态索引（后进先出的空闲列表，"
                       "行不清空），新请求取得一个索引并在主机端**暂存**块号；**apply_staged_writes** 把它们写入请求状态块表；"
                       "然后把调度的请求按批次排序，**gather** 通过 `idx_mapping` 把各自的状态行拷进内核读取的输入块表。",
                 "es": "El motor reproduce un escenario paso a paso como el **Model Runner V2** de vLLM: planifica; las "
                       "peticiones terminadas devuelven su índice de estado (lista libre LIFO, filas sin limpiar), las "
                       "nuevas toman uno y sus ids de bloque quedan **preparados** en el host; **apply_staged_writes** "
                       "los escribe en la tabla de bloques de estado; luego las peticiones planificadas se ponen en orden "
                       "de lote y **gather** copia la fila de estado de cada una (vía `idx_mapping`) a la tabla de "
                       "bloques de entrada que leen los kernels."},
    "summary_v2": {"en": "Step {i} of {n}: {reqs} request(s), {tok} token(s), padded to {rpad} rows and {tpad} tokens; "
                         "apply_staged_writes wrote {rows} state row(s) = {bytes} bytes; gather copied {reqs} row(s) "
                         "in batch order.",
                   "zh": "第 {i} 步（共 {n} 步）：{reqs} 个请求，{tok} 个 token，填充到 {rpad} 行、{tpad} 个 token；"
                         "apply_staged_writes 写入 {rows} 个状态行 = {bytes} 字节；gather 按批次顺序拷贝了 {reqs} 行。",
                   "es": "Paso {i} de {n}: {reqs} petición(es), {tok} token(s), relleno a {rpad} filas y {tpad} tokens; "
                         "apply_staged_writes escribió {rows} fila(s) de estado = {bytes} bytes; gather copió {reqs} "
                         "fila(s) en orden de lote."},
    "state_table": {"en": "Request-state block table (rows by state index)", "zh": "请求状态块表（按状态索引排列的行）",
                    "es": "Tabla de bloques de estado (filas por índice de estado)"},
    "input_before": {"en": "Input block table before gather (batch order; red: rows the gather rewrites)",
                     "zh": "gather 之前的输入块表（批次顺序；红色：gather 将改写的行）",
                     "es": "Tabla de bloques de entrada antes de gather (orden de lote; rojo: filas que gather reescribe)"},
    "input_after": {"en": "Input block table (gathered, batch order)", "zh": "输入块表（gather 之后，批次顺序）",
                    "es": "Tabla de bloques de entrada (tras gather, orden de lote)"},
    "show_after_v2": {"en": "Input table after the gather", "zh": "显示 gather 之后的输入表",
                      "es": "Tabla de entrada tras gather"},
    "gathered_rows": {"en": "Rows the gather rewrote: {rows}.", "zh": "gather 改写的行：{rows}。",
                      "es": "Filas que gather reescribió: {rows}."},
    "no_gathered_rows": {"en": "The gather left every row as it was (same requests in the same order).",
                         "zh": "gather 没有改变任何行（相同请求、相同顺序）。",
                         "es": "gather dejó todas las filas como estaban (mismas peticiones en el mismo orden)."},
    "stale_tails": {"en": "✕ stale tails in batch row(s) {rows}: entries past the row's num_blocks that an earlier "
                          "step left. gather copies only the first num_blocks entries and clears nothing, and no kernel "
                          "reads past num_blocks: stale but harmless.",
                    "zh": "✕ 批次行 {rows} 有过期尾部：超出该行 num_blocks 的项是之前步骤留下的。gather 只拷贝前 num_blocks "
                          "项、不清除任何东西，也没有内核读取 num_blocks 之后的项：过期但无害。",
                    "es": "✕ colas obsoletas en la(s) fila(s) de lote {rows}: entradas más allá de num_blocks que dejó "
                          "un paso anterior. gather copia solo las primeras num_blocks entradas y no borra nada, y "
                          "ningún kernel lee más allá: obsoletas pero inofensivas."},
    "idx_mapping": {"en": "idx_mapping (batch position → request-state index)",
                    "zh": "idx_mapping（批次位置 → 请求状态索引）",
                    "es": "idx_mapping (posición en el lote → índice de estado)"},
    "idx_caption": {"en": "idx_mapping = {idx}: input row b is a copy of state row idx_mapping[b]. The free list is "
                          "LIFO (the highest free index goes first) and a freed state keeps its row.",
                    "zh": "idx_mapping = {idx}：输入第 b 行是状态第 idx_mapping[b] 行的副本。空闲列表后进先出（先给最大的空闲索引），"
                          "释放的状态保留它的行。",
                    "es": "idx_mapping = {idx}: la fila b de entrada es una copia de la fila de estado idx_mapping[b]. "
                          "La lista libre es LIFO (primero el índice libre más alto) y un estado liberado conserva su fila."},
    # --- the step's tables: column headers (the frames keep their English keys) ---
    "col.batch position": {"en": "batch position", "zh": "批次位置", "es": "posición en el lote"},
    "col.state index": {"en": "state index", "zh": "状态索引", "es": "índice de estado"},
    "col.request": {"en": "request", "zh": "请求", "es": "petición"},
    "col.kind": {"en": "kind", "zh": "类型", "es": "tipo"},
    "col.tokens": {"en": "tokens", "zh": "token 数", "es": "tokens"},
    "col.computed before": {"en": "computed before", "zh": "此前已计算", "es": "ya calculados"},
    "col.seq_len": {"en": "seq_len", "zh": "seq_len", "es": "seq_len"},
    "col.row": {"en": "row", "zh": "行", "es": "fila"},
    "col.state": {"en": "state", "zh": "状态", "es": "estado"},
    "col.prompt": {"en": "prompt", "zh": "提示词", "es": "prompt"},
    "col.output": {"en": "output", "zh": "输出", "es": "salida"},
    "col.computed": {"en": "computed", "zh": "已计算", "es": "calculados"},
    "col.blocks": {"en": "blocks", "zh": "块", "es": "bloques"},
    "col.parent": {"en": "parent", "zh": "父请求", "es": "padre"},
    "col.preempted": {"en": "preempted", "zh": "被抢占次数", "es": "expulsiones"},
    "col.num_blocks": {"en": "num_blocks", "zh": "num_blocks", "es": "num_blocks"},
    # vLLM's start-up capacity check (kvviz/core/capacity.py; v1/core/kv_cache_utils.py get_kv_cache_configs)
    "capacity_ok": {"en": "vLLM {v}'s start-up check passes: one request of max_model_len {mml} tokens needs {needed} "
                          "block(s), the check counts {counted} ({why}).",
                    "zh": "vLLM {v} 的启动检查通过：一个 max_model_len {mml} token 的请求需要 {needed} 个块，检查计入 "
                          "{counted} 个（{why}）。",
                    "es": "La comprobación de arranque de vLLM {v} pasa: una petición de max_model_len {mml} tokens "
                          "necesita {needed} bloque(s) y la comprobación cuenta {counted} ({why})."},
    "capacity_refused": {"en": "vLLM {v} would refuse to start with this config: one request of max_model_len {mml} "
                               "tokens needs {needed} block(s), the check counts {counted} ({why}); estimated maximum "
                               "model length {est}. kvviz replays it anyway.",
                         "zh": "vLLM {v} 会拒绝以此配置启动：一个 max_model_len {mml} token 的请求需要 {needed} 个块，"
                               "检查只计入 {counted} 个（{why}）；估计的最大模型长度为 {est}。kvviz 仍然重放它。",
                         "es": "vLLM {v} se negaría a arrancar con esta configuración: una petición de max_model_len "
                               "{mml} tokens necesita {needed} bloque(s) y la comprobación cuenta {counted} ({why}); "
                               "longitud máxima estimada {est}. kvviz la reproduce de todos modos."},
    "capacity_null": {"en": "num_blocks − 1: one block kept for the null block, from v0.29.0",
                      "zh": "num_blocks − 1：从 v0.29.0 起为空块（块 0）留出一个块",
                      "es": "num_blocks − 1: un bloque reservado para el bloque nulo, desde v0.29.0"},
    "capacity_all": {"en": "all num_blocks, the null block included, as before v0.29.0",
                     "zh": "全部 num_blocks，含空块（块 0），v0.29.0 之前如此",
                     "es": "todos los num_blocks, el bloque nulo incluido, como antes de v0.29.0"},
    "none_hash_fixed": {"en": "NONE_HASH (the first block's parent hash) = hash of the fixed seed \"vllm-none-hash\" "
                              "(v0.29.0+): a prompt hashes the same in every vLLM process.",
                        "zh": "NONE_HASH（第一个块的父哈希）= 固定种子 \"vllm-none-hash\" 的哈希（v0.29.0 起）："
                              "同一提示词在每个 vLLM 进程里哈希相同。",
                        "es": "NONE_HASH (el hash padre del primer bloque) = hash de la semilla fija \"vllm-none-hash\" "
                              "(v0.29.0+): un prompt da el mismo hash en todo proceso de vLLM."},
    "none_hash_random": {"en": "NONE_HASH (the first block's parent hash): 32 random bytes per vLLM process before "
                               "v0.29.0 (PYTHONHASHSEED unset), so hashes differ between processes; kvviz pins one draw.",
                         "zh": "NONE_HASH（第一个块的父哈希）：v0.29.0 之前每个 vLLM 进程取 32 个随机字节（未设 "
                               "PYTHONHASHSEED），不同进程的哈希不同；kvviz 固定使用其中一次取值。",
                         "es": "NONE_HASH (el hash padre del primer bloque): 32 bytes aleatorios por proceso de vLLM antes "
                               "de v0.29.0 (sin PYTHONHASHSEED), así que los hashes difieren entre procesos; kvviz fija "
                               "un sorteo."},
}
