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
}
