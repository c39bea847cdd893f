"""Prose of the demos page, part two: each figure's own sentence (what it shows this step, read from
the run, and what its colour encodes), the release picker and its messages, and the presenter's
figure strip. Merged into ``kvviz.texts.demos.STRINGS`` (look them up as ``t("demos", key)``)."""

STRINGS = {
    # --- the release picker ---------------------------------------------------------------------
    "ui.release": {"en": "vLLM release", "zh": "vLLM 版本", "es": "Versión de vLLM"},
    "ui.release_help": {
        "en": "The demo is played by kvviz's model of this release: its figures and the engine's events follow it.",
        "zh": "演示由 kvviz 对该版本的模型来播放：图和引擎事件都随它变化。",
        "es": "La demostración la reproduce el modelo de kvviz de esta versión: sus figuras y los eventos del motor la siguen.",
    },
    "ui.no_v1": {
        "en": "This demo cannot happen on vLLM {release}: it shows the V1 model runner, and {release} no longer has it (V1 ships up to {last}).",
        "zh": "这个演示在 vLLM {release} 上不可能发生：它展示的是 V1 模型运行器，而 {release} 已经没有它了（V1 一直带到 {last}）。",
        "es": "Esta demostración no puede ocurrir en vLLM {release}: muestra el model runner V1, y {release} ya no lo tiene (V1 llega hasta {last}).",
    },
    "ui.no_v2": {
        "en": "This demo cannot happen on vLLM {release}: it shows Model Runner V2, which first shipped in {first}.",
        "zh": "这个演示在 vLLM {release} 上不可能发生：它展示的是 Model Runner V2，而 V2 从 {first} 才开始提供。",
        "es": "Esta demostración no puede ocurrir en vLLM {release}: muestra Model Runner V2, que llegó por primera vez en {first}.",
    },
    "ui.show_on": {"en": "Show it on vLLM {release}", "zh": "改用 vLLM {release} 展示", "es": "Mostrarla en vLLM {release}"},
    "ui.differs": {
        "en": "The text of this step was written for vLLM {ref}; on {release} this step differs in: {what}. The figures are {release}'s.",
        "zh": "本步的文字是为 vLLM {ref} 写的；在 {release} 上这一步有所不同：{what}。图是 {release} 的。",
        "es": "El texto de este paso se escribió para vLLM {ref}; en {release} este paso difiere en: {what}. Las figuras son las de {release}.",
    },
    "aspect.runner": {"en": "the model runner", "zh": "模型运行器", "es": "el model runner"},
    "aspect.batch": {"en": "the scheduled batch", "zh": "调度的批次", "es": "el lote planificado"},
    "aspect.blocks": {"en": "the blocks each request owns", "zh": "每个请求拥有的块", "es": "los bloques de cada petición"},
    "aspect.tables": {"en": "the block tables", "zh": "块表", "es": "las tablas de bloques"},
    "aspect.slots": {"en": "the slot mapping", "zh": "槽映射", "es": "el slot mapping"},
    "aspect.pool": {"en": "the block pool", "zh": "块池", "es": "el pool de bloques"},
    "ui.aspect_sep": {"en": ", ", "zh": "、", "es": ", "},

    # --- presenter mode -----------------------------------------------------------------------------
    "ui.story": {"en": "The step", "zh": "本步", "es": "El paso"},
    "ui.figures": {"en": "Figures of this step", "zh": "本步的图", "es": "Figuras de este paso"},
    "ui.keys": {
        "en": "Keys: → / PageDown / space = next figure, then next step; ← / PageUp = back.",
        "zh": "按键：→ / PageDown / 空格 = 下一张图，然后下一步；← / PageUp = 后退。",
        "es": "Teclas: → / AvPág / espacio = figura siguiente y luego paso siguiente; ← / RePág = atrás.",
    },
    "ui.band_top": {"en": "top band", "zh": "上排", "es": "banda de arriba"},
    "ui.band_bottom": {"en": "bottom band", "zh": "下排", "es": "banda de abajo"},
    "ui.place_sep": {"en": ", ", "zh": "、", "es": ", "},
    "ui.place": {"en": " ({where})", "zh": "（{where}）", "es": " ({where})"},
    "ui.screen_of": {"en": "{k} / {n}", "zh": "{k} / {n}", "es": "{k} / {n}"},

    # --- chart titles (readable, not identifiers) ----------------------------------------------------
    "fig.ref_title": {"en": "Reference count of each block", "zh": "每个块的引用计数",
                      "es": "Contador de referencias de cada bloque"},
    "fig.slot_title": {"en": "Where each token's K/V is written (slot mapping)", "zh": "每个 token 的 K/V 写到哪里（槽映射）",
                       "es": "Dónde se escribe el K/V de cada token (slot mapping)"},
    "fig.csr_title": {"en": "FlashInfer's page lists, seq_lens = {v}", "zh": "FlashInfer 的页列表，seq_lens = {v}",
                      "es": "Listas de páginas de FlashInfer, seq_lens = {v}"},

    # --- each figure's own sentence ------------------------------------------------------------------
    "note.none": {"en": "no request", "zh": "没有请求", "es": "ninguna petición"},
    "note.nothing": {"en": "none", "zh": "无", "es": "ninguno"},
    "note.table_cpu": {
        "en": "The CPU block table, the truth the commit copies to the device, row by row: {rows}.",
        "zh": "CPU 块表，即提交拷到设备上的权威副本，逐行：{rows}。",
        "es": "La tabla de bloques en CPU, la verdad que el commit copia al dispositivo, fila a fila: {rows}.",
    },
    "note.table_mirror": {
        "en": "The device mirror, what the kernel reads in its first {n} row(s): {rows}.",
        "zh": "设备镜像，内核读它的前 {n} 行：{rows}。",
        "es": "El espejo en el dispositivo, lo que lee el kernel en sus primeras {n} fila(s): {rows}.",
    },
    "note.table_state": {
        "en": "Model Runner V2's request-state rows, one per request for its whole life, by state index: {rows}.",
        "zh": "Model Runner V2 的请求状态行，每个请求一生占一行，按状态索引：{rows}。",
        "es": "Las filas de estado de Model Runner V2, una por petición durante toda su vida, por índice de estado: {rows}.",
    },
    "note.table_input": {
        "en": "The input block table gathered for this step, by batch position: {rows}.",
        "zh": "本步 gather 所得的输入块表，按批次位置：{rows}。",
        "es": "La tabla de entrada reunida para este paso, por posición en el lote: {rows}.",
    },
    "note.table_attn": {
        "en": "What attention reads: the first {n} row(s), the padded rows pointing at block 0, the null block.",
        "zh": "注意力读取的表：前 {n} 行，补齐行指向块 0（null block）。",
        "es": "Lo que lee la atención: las primeras {n} fila(s), con las filas de relleno apuntando al bloque 0, el bloque nulo.",
    },
    "note.stale": {"en": "Red outline: row(s) {rows}.", "zh": "红框：第 {rows} 行。", "es": "Borde rojo: fila(s) {rows}."},
    "note.colour_table": {
        "en": "Colour: each cell's block id (scale at the right); the dotted outline is the part of a row that is read.",
        "zh": "颜色：每格的块号（右侧色标）；虚线框是一行中会被读的部分。",
        "es": "Color: el id de bloque de cada celda (escala a la derecha); el borde punteado es la parte leída de una fila.",
    },
    "note.ref": {
        "en": "Blocks in use: {used}; shared by two or more (ref count > 1): {shared}; hashed (★, found by the prefix cache): {hashed}.",
        "zh": "在用的块：{used}；被两个以上共享（引用计数 > 1）：{shared}；带哈希（★，前缀缓存能找到）：{hashed}。",
        "es": "Bloques en uso: {used}; compartidos por dos o más (contador > 1): {shared}; con hash (★, los encuentra la caché de prefijos): {hashed}.",
    },
    "note.colour_ref": {"en": "Colour: the block's state (legend).", "zh": "颜色：块的状态（见图例）。",
                        "es": "Color: el estado del bloque (leyenda)."},
    "note.queue": {
        "en": "The free queue, front (allocated next) to back: {front}.",
        "zh": "空闲队列，从队首（下一个分配）到队尾：{front}。",
        "es": "La cola libre, del frente (se asigna primero) al final: {front}.",
    },
    "note.colour_queue": {
        "en": "Colour: orange = the block still holds a prefix-cache hash, grey = it holds none.",
        "zh": "颜色：橙色 = 块仍带前缀缓存哈希，灰色 = 没有。",
        "es": "Color: naranja = el bloque aún guarda un hash de la caché de prefijos, gris = no guarda ninguno.",
    },
    "note.slots": {
        "en": "{n} token(s) this step: {pairs}.",
        "zh": "本步 {n} 个 token：{pairs}。",
        "es": "{n} token(s) en este paso: {pairs}.",
    },
    "note.slot_pair": {"en": "{req} position {pos} → slot {slot}", "zh": "{req} 位置 {pos} → 槽 {slot}",
                       "es": "{req} posición {pos} → slot {slot}"},
    "note.colour_slots": {
        "en": "Colour: the request (legend); × = a token with slot -1, which writes nothing.",
        "zh": "颜色：所属请求（见图例）；× = 槽号为 -1 的 token，什么都不写。",
        "es": "Color: la petición (leyenda); × = un token con slot -1, que no escribe nada.",
    },
    "note.csr": {
        "en": "indptr = {indptr}, indices = {indices}, last_page_len = {lpl}.",
        "zh": "indptr = {indptr}，indices = {indices}，last_page_len = {lpl}。",
        "es": "indptr = {indptr}, indices = {indices}, last_page_len = {lpl}.",
    },
    "note.colour_csr": {"en": "Colour: the request each entry belongs to.", "zh": "颜色：每一项所属的请求。",
                        "es": "Color: la petición a la que pertenece cada entrada."},
    "note.traffic": {
        "en": "Block-table copies alone, 256 requests at 50 steps/s: {a} with a 32K context, {b} with 1M.",
        "zh": "仅块表拷贝，256 个请求、每秒 50 步：32K 上下文 {a}，1M 上下文 {b}。",
        "es": "Solo las copias de la tabla de bloques, 256 peticiones a 50 pasos/s: {a} con un contexto de 32K, {b} con 1M.",
    },
    "note.colour_traffic": {"en": "Colour: blue = 32K context, red = 1M context.", "zh": "颜色：蓝 = 32K 上下文，红 = 1M 上下文。",
                            "es": "Color: azul = contexto de 32K, rojo = contexto de 1M."},
    "note.bytes": {
        "en": "The commit copied {b} at this step, the same whole rows at every step.",
        "zh": "本步提交拷了 {b}，每一步都拷同样的整行。",
        "es": "El commit copió {b} en este paso, las mismas filas enteras en cada paso.",
    },
    "note.colour_bytes": {"en": "Colour: red = this step, blue = the other steps.", "zh": "颜色：红 = 本步，蓝 = 其他步。",
                          "es": "Color: rojo = este paso, azul = los demás pasos."},
}
