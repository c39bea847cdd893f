"""Shared-prefixes page prose."""
STRINGS = {
    "title": {"en": "Shared prefixes", "zh": "共享前缀", "es": "Prefijos compartidos"},
    "intro": {"en": "Requests that start with the same tokens can point at the **same physical blocks**. Each full "
                    "block gets a hash chained from the previous one, H(parent hash, its tokens); a new request looks "
                    "its hashes up and reuses every block found (a **cache hit**), raising its ref count. A block "
                    "goes back to the free queue at ref count 0 but keeps its hash until it is handed out again "
                    "(then it is **evicted** from the cache).",
              "zh": "以相同 token 开头的请求可以指向**相同的物理块**。每个完整块都有一个从前一块链接而来的哈希 "
                    "H(父哈希, 本块 token)；新请求查找自己的哈希，复用找到的每个块（**缓存命中**），并增加其引用计数。"
                    "引用计数为 0 的块回到空闲队列，但保留哈希，直到再次被分配（这时它被**驱逐**出缓存）。",
              "es": "Las peticiones que empiezan con los mismos tokens pueden apuntar a los **mismos bloques físicos**. "
                    "Cada bloque lleno recibe un hash encadenado con el anterior, H(hash padre, sus tokens); una "
                    "petición nueva busca sus hashes y reutiliza cada bloque encontrado (un **acierto**), subiendo su "
                    "contador de referencias. Un bloque vuelve a la cola libre con 0 referencias pero conserva su hash "
                    "hasta que se asigna de nuevo (entonces se **desaloja** de la caché)."},
    "why_title": {"en": "Why only full blocks are shared", "zh": "为什么只共享完整块",
                  "es": "Por qué solo se comparten bloques llenos"},
    "why": {"en": "A block's hash covers exactly its tokens and everything before them. A partial last block is "
                  "still being written: the next token lands in it, so its content (and hash) is not final, and "
                  "two requests that diverge would write different tokens into one shared slot. So the partial "
                  "block is never cached; at a **fork** the child shares the parent's full blocks and gets a "
                  "private **copy** of the partial one (copy-on-write).",
            "zh": "块的哈希恰好覆盖它的 token 以及之前的全部内容。未满的最后一块仍在写入：下一个 token 会落在其中，"
                  "所以它的内容（和哈希）尚未确定，两个分叉的请求会往同一个共享槽位写入不同的 token。因此未满块从不缓存；"
                  "**分叉**时子请求共享父请求的完整块，并得到未满块的一份私有**副本**（写时复制）。",
            "es": "El hash de un bloque cubre exactamente sus tokens y todo lo anterior. Un último bloque parcial aún "
                  "se está escribiendo: el siguiente token cae en él, así que su contenido (y su hash) no es "
                  "definitivo, y dos peticiones que divergen escribirían tokens distintos en el mismo slot. Por eso "
                  "el bloque parcial nunca se guarda en caché; en una **bifurcación** el hijo comparte los bloques "
                  "llenos del padre y recibe una **copia** privada del parcial (copia en escritura)."},
    "example": {"en": "Example: a prompt of {n} tokens with blocks of {b}: blocks {full} are full and hashed; the "
                      "last {rest} token(s) sit in a partial block that is not.",
                "zh": "例：{n} 个 token 的提示词、块大小 {b}：块 {full} 是完整的并有哈希；最后 {rest} 个 token 位于未满的块中，没有哈希。",
                "es": "Ejemplo: un prompt de {n} tokens con bloques de {b}: los bloques {full} están llenos y tienen "
                      "hash; los últimos {rest} token(s) están en un bloque parcial que no lo tiene."},
    "sharing": {"en": "Which rows share which physical blocks (number = block id, colour = ref count)",
                "zh": "哪些行共享哪些物理块（数字 = 块号，颜色 = 引用计数）",
                "es": "Qué filas comparten qué bloques físicos (número = id del bloque, color = referencias)"},
    "shared_now": {"en": "Blocks held by more than one request now: {blocks}.", "zh": "当前被多个请求持有的块：{blocks}。",
                   "es": "Bloques que ahora tienen varias peticiones: {blocks}."},
    "none_shared": {"en": "No block is shared at this step.", "zh": "本步没有共享的块。",
                    "es": "Ningún bloque se comparte en este paso."},
    "chain": {"en": "The hash chain: every block in the prefix cache", "zh": "哈希链：前缀缓存中的每个块",
              "es": "La cadena de hashes: cada bloque de la caché de prefijos"},
    "chain_help": {"en": "One row per cached block: hash = H(parent hash, its tokens), the request whose block it "
                         "was when it was cached (its block index and token positions) and the step; who holds it "
                         "and its ref count {when}. Rows not in the prefix cache: full prompt blocks of live "
                         "requests whose hash is not cached (yet).",
                   "zh": "每个缓存块一行：哈希 = H(父哈希, 本块 token)，缓存它时它属于哪个请求（块序号和 token 位置）"
                         "以及在哪一步；{when}谁持有它、它的引用计数。不在前缀缓存中的行：活动请求中哈希（尚）未缓存的完整提示词块。",
                   "es": "Una fila por bloque en caché: hash = H(hash padre, sus tokens), la petición a la que "
                         "pertenecía al guardarse (su índice de bloque y posiciones de token) y el paso; quién lo "
                         "tiene y sus referencias {when}. Filas fuera de la caché: bloques llenos del prompt de "
                         "peticiones vivas cuyo hash no está (aún) en caché."},
    "log": {"en": "Every prefix-cache event of the scenario", "zh": "场景中所有前缀缓存事件",
            "es": "Todos los eventos de la caché de prefijos del escenario"},
    "this_step": {"en": "Events of this step", "zh": "本步事件", "es": "Eventos de este paso"},
    "sharing_v2": {"en": "Model Runner V2: the rows are the gathered input block table's, in batch order "
                         "(idx_mapping = {idx}: batch position → request-state index; states held: {states}). "
                         "The request-state table holds the same ids by state index.",
                   "zh": "Model Runner V2：这些行来自 gather 之后的输入块表，按批次顺序（idx_mapping = {idx}：批次位置 → "
                         "请求状态索引；占用的状态：{states}）。请求状态块表按状态索引保存同样的块号。",
                   "es": "Model Runner V2: las filas son las de la tabla de bloques de entrada tras gather, en orden de "
                         "lote (idx_mapping = {idx}: posición en el lote → índice de estado; estados ocupados: "
                         "{states}). La tabla de estado guarda los mismos ids por índice de estado."},
}

# the hash-chain and event tables' column labels (short: the tables fit 1280 px) and their tooltips
STRINGS.update({
    "col.physical block": {"en": "phys. block", "zh": "物理块", "es": "bloque fís."},
    "col.hash": {"en": "hash", "zh": "哈希", "es": "hash"},
    "col.parent hash": {"en": "parent", "zh": "父哈希", "es": "padre"},
    "col.tokens": {"en": "tokens", "zh": "token", "es": "tokens"},
    "col.request": {"en": "request", "zh": "请求", "es": "petición"},
    "col.block": {"en": "block", "zh": "块序号", "es": "bloque"},
    "col.cached at step": {"en": "cached at", "zh": "缓存于", "es": "en caché"},
    "col.held by": {"en": "held by", "zh": "持有者", "es": "de"},
    "col.ref count": {"en": "refs", "zh": "引用", "es": "refs"},
    "col.in prefix cache": {"en": "cached", "zh": "已缓存", "es": "caché"},
    "dl_fig": {"en": "figure HTML", "zh": "图 HTML", "es": "figura HTML"},
    "dl_chain": {"en": "chain CSV", "zh": "哈希链 CSV", "es": "cadena CSV"},
    "dl_log": {"en": "events CSV", "zh": "事件 CSV", "es": "eventos CSV"},
    "help.physical block": {"en": "Physical block id in the pool", "zh": "池中的物理块编号", "es": "Id del bloque físico en el pool"},
    "help.parent hash": {"en": "Hash of the previous block of the prompt (NONE_HASH for the first)",
                         "zh": "提示词中前一个块的哈希（第一个块为 NONE_HASH）",
                         "es": "Hash del bloque anterior del prompt (NONE_HASH para el primero)"},
    "help.block": {"en": "Index of the block in its request (counted from 0)", "zh": "该块在其请求中的序号（从 0 开始计）",
                   "es": "Índice del bloque en su petición (contado desde 0)"},
    "help.cached at step": {"en": "Step at which the block entered the prefix cache (counted from 1, as the step picker)",
                            "zh": "该块进入前缀缓存的步（与步骤选择器一样从 1 开始计）",
                            "es": "Paso en que el bloque entró en la caché de prefijos (contado desde 1, como el selector "
                                  "de pasos)"},
    "help.held by": {"en": "Requests holding the block now", "zh": "当前持有该块的请求", "es": "Peticiones que tienen el bloque ahora"},
    "help.ref count": {"en": "Reference count", "zh": "引用计数", "es": "Contador de referencias"},
    "help.in prefix cache": {"en": "Whether the block is in the prefix cache", "zh": "该块是否在前缀缓存中",
                             "es": "Si el bloque está en la caché de prefijos"},
    "col.step": {"en": "step", "zh": "步", "es": "paso"},
    "col.kind": {"en": "event", "zh": "事件", "es": "evento"},
    "col.what happened": {"en": "what happened", "zh": "发生了什么", "es": "qué pasó"},
})
