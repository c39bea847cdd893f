"""Prose of the guided demos and of the demos page.

``<demo>.title`` / ``<demo>.intro`` / ``<demo>.step<k>`` (one per engine step of the demo);
``ui.*`` for the page; ``fig.*`` for figure names; ``variant.*`` for the side-by-side runs.
Each step says what to look at and what would break.
"""

STRINGS = {
    # --- page ------------------------------------------------------------------------------
    "ui.title": {"en": "Guided demos", "zh": "引导式演示", "es": "Demostraciones guiadas"},
    "ui.caption": {
        "en": "Pick a lesson, step through it forward and back, and switch on presenter mode for a class.",
        "zh": "选一个主题，前后逐步播放；上课时打开演示者模式。",
        "es": "Elige una lección, avanza y retrocede paso a paso, y activa el modo presentador para una clase.",
    },
    "ui.demo": {"en": "Demo", "zh": "演示", "es": "Demostración"},
    "ui.step": {"en": "Step", "zh": "步", "es": "Paso"},
    "ui.step_of": {"en": "Step {k} of {n}", "zh": "第 {k} 步 / 共 {n} 步", "es": "Paso {k} de {n}"},
    "ui.first": {"en": "First", "zh": "第一步", "es": "Primero"},
    "ui.prev": {"en": "◀ Back", "zh": "◀ 上一步", "es": "◀ Atrás"},
    "ui.next": {"en": "Forward ▶", "zh": "下一步 ▶", "es": "Adelante ▶"},
    "ui.last": {"en": "Last", "zh": "最后一步", "es": "Último"},
    "ui.presenter": {"en": "Presenter mode", "zh": "演示者模式", "es": "Modo presentador"},
    "ui.presenter_help": {
        "en": "Large type and one figure per screen, each with its own sentence. → / PageDown / space: next figure, then next step; ← / PageUp: back (a presentation clicker works).",
        "zh": "大字号，每屏一张图，各配一句说明。→ / PageDown / 空格：下一张图，然后下一步；← / PageUp：后退（翻页笔可用）。",
        "es": "Letra grande y una figura por pantalla, cada una con su frase. → / AvPág / espacio: figura siguiente y luego paso siguiente; ← / RePág: atrás (sirve un mando de presentaciones).",
    },
    "ui.figure": {"en": "Figure", "zh": "图", "es": "Figura"},
    "ui.fig_prev": {"en": "Back: the previous figure, then the previous step (← / PageUp)", "zh": "后退：上一张图，然后上一步（← / PageUp）", "es": "Atrás: la figura anterior y luego el paso anterior (← / RePág)"},
    "ui.fig_next": {"en": "Forward: the next figure, then the next step (→ / PageDown / space)", "zh": "前进：下一张图，然后下一步（→ / PageDown / 空格）", "es": "Adelante: la figura siguiente y luego el paso siguiente (→ / AvPág / espacio)"},
    "ui.link": {"en": "Link to this step", "zh": "本步链接", "es": "Enlace a este paso"},
    "ui.all_links": {"en": "Links to every step", "zh": "每一步的链接", "es": "Enlaces a cada paso"},
    "ui.events": {"en": "What the engine did this step", "zh": "本步引擎做了什么",
                  "es": "Qué hizo el motor en este paso"},
    "ui.scenario": {"en": "Scenario (JSON)", "zh": "场景（JSON）", "es": "Escenario (JSON)"},
    "ui.bad_link": {
        "en": "The link asked for something this page does not have ({what}); showing the nearest valid step instead.",
        "zh": "链接里有本页没有的内容（{what}），已改为显示最接近的有效步骤。",
        "es": "El enlace pedía algo que esta página no tiene ({what}); se muestra el paso válido más cercano.",
    },
    "ui.end": {"en": "End of the demo.", "zh": "演示结束。", "es": "Fin de la demostración."},
    "ui.scheduled": {"en": "Scheduled this step", "zh": "本步调度", "es": "Planificado en este paso"},
    "ui.no_tokens": {"en": "No tokens this step.", "zh": "本步没有 token。", "es": "Ningún token en este paso."},
    "ui.padded": {
        "en": "{r} request(s), {t} token(s); padded to {rp} row(s), {tp} token(s).",
        "zh": "{r} 个请求，{t} 个 token；补齐到 {rp} 行、{tp} 个 token。",
        "es": "{r} petición(es), {t} token(s); con relleno, {rp} fila(s) y {tp} token(s).",
    },

    "ui.cols": {"en": "{shown} of {width} columns", "zh": "显示 {shown} / {width} 列",
                "es": "{shown} de {width} columnas"},
    "ui.cpu": {"en": "CPU (truth)", "zh": "CPU（权威）", "es": "CPU (la verdad)"},
    "ui.device": {"en": "device mirror", "zh": "设备镜像", "es": "espejo en el dispositivo"},
    "ui.attn_input": {"en": "what attention reads (padded)", "zh": "注意力读取的表（含补齐）",
                      "es": "lo que lee la atención (con relleno)"},
    "ui.free_queue": {"en": "free queue: front (allocated next) → back", "zh": "空闲队列：队首（下一个分配）→ 队尾",
                      "es": "cola libre: frente (se asigna primero) → final"},
    "col.row": {"en": "row", "zh": "行", "es": "fila"},
    "col.req": {"en": "request", "zh": "请求", "es": "petición"},
    "col.kind": {"en": "kind", "zh": "类型", "es": "tipo"},
    "col.tokens": {"en": "tokens", "zh": "token 数", "es": "tokens"},
    "col.positions": {"en": "positions", "zh": "位置", "es": "posiciones"},
    "kind.prefill": {"en": "prefill", "zh": "预填", "es": "prellenado"},
    "kind.chunk": {"en": "chunk", "zh": "分块预填", "es": "trozo de prellenado"},
    "kind.decode": {"en": "decode", "zh": "解码", "es": "decodificación"},
    "ui.local_seq_lens": {"en": "local seq_lens = {v}", "zh": "本地 seq_lens = {v}",
                          "es": "seq_lens locales = {v}"},
    "ui.language": {"en": "Language", "zh": "语言", "es": "Idioma"},
    "ui.col_left": {"en": "left column", "zh": "左列", "es": "columna izquierda"},
    "ui.col_right": {"en": "right column", "zh": "右列", "es": "columna derecha"},
    "ui.shows": {"en": "Shows {what}", "zh": "展示：{what}", "es": "Muestra: {what}"},
    "ui.v1_releases": {"en": "(Model Runner V1 as every release up to {last} has it; v0.34.0 removed V1)",
                       "zh": "（Model Runner V1 如 {last} 及以前各版本所有；v0.34.0 已移除 V1）",
                       "es": "(Model Runner V1 tal como lo tienen todas las versiones hasta {last}; v0.34.0 eliminó V1)"},
    "runner.v1": {"en": "V1 model runner", "zh": "V1 模型运行器", "es": "model runner V1"},
    "runner.v2": {"en": "Model Runner V2", "zh": "V2 模型运行器（Model Runner V2）", "es": "Model Runner V2"},
    "ui.state": {"en": "request-state rows (by state index)", "zh": "请求状态行（按状态索引）",
                 "es": "filas de estado (por índice de estado)"},
    "ui.input": {"en": "input block table (gathered, batch order)", "zh": "输入块表（gather 所得，按批次顺序）",
                 "es": "tabla de bloques de entrada (reunida, en orden de lote)"},
    "ui.axis_state": {"en": "request-state index", "zh": "请求状态索引", "es": "índice de estado"},
    "ui.axis_batch": {"en": "batch position", "zh": "批次位置", "es": "posición en el lote"},
    "ui.batch_order": {"en": "batch order: {v}", "zh": "批次顺序：{v}", "es": "orden del lote: {v}"},

    # --- KV-cache group names (hybrid models) --------------------------------------------------
    "group.full": {"en": "full attention", "zh": "全注意力", "es": "atención completa"},
    "group.sliding_window": {"en": "sliding window {w}", "zh": "滑窗 {w}", "es": "ventana deslizante {w}"},
    "group.state": {"en": "state (Mamba-like)", "zh": "状态（类 Mamba）", "es": "estado (tipo Mamba)"},

    # --- figure names ------------------------------------------------------------------------
    "fig.block_table": {"en": "Block tables: CPU truth and device mirror", "zh": "块表：CPU 权威副本与设备镜像",
                        "es": "Tablas de bloques: la verdad en CPU y el espejo en el dispositivo"},
    "fig.block_table_v2": {"en": "Block tables: request-state rows and the gathered input table",
                           "zh": "块表：请求状态行与 gather 所得的输入块表",
                           "es": "Tablas de bloques: filas de estado y la tabla de entrada reunida"},
    "fig.block_table_both": {
        "en": "Block tables: V1 (CPU table above its device mirror) and V2 (state rows above the gathered input)",
        "zh": "块表：V1（CPU 表在上，设备镜像在下）与 V2（状态行在上，gather 所得输入表在下）",
        "es": "Tablas de bloques: V1 (tabla en CPU sobre su espejo) y V2 (filas de estado sobre la entrada reunida)",
    },
    "fig.pool": {"en": "Block pool: owners, ref counts, prefix cache", "zh": "块池：归属、引用计数与前缀缓存",
                 "es": "Pool de bloques: dueños, contadores de referencias, caché de prefijos"},
    "fig.slots": {"en": "This step's tokens and their slots", "zh": "本步的 token 及其槽号",
                  "es": "Los tokens de este paso y sus slots"},
    "fig.csr": {"en": "FlashInfer CSR and seq_lens (padded rows included)", "zh": "FlashInfer CSR 与 seq_lens（含补齐行）",
                "es": "CSR de FlashInfer y seq_lens (con las filas de relleno)"},
    "fig.traffic": {"en": "Block-table copy traffic: 32K vs 1M context", "zh": "块表拷贝流量：32K 与 1M 上下文",
                    "es": "Tráfico de copia de la tabla de bloques: contexto de 32K frente a 1M"},
    "fig.bytes": {"en": "Bytes committed per step in this run", "zh": "本次运行每步提交的字节数",
                  "es": "Bytes copiados en cada paso de esta ejecución"},
    "fig.traffic_axis": {"en": "B/s (block table only, 50 steps/s)", "zh": "B/s（仅块表，每秒 50 步）",
                         "es": "B/s (solo la tabla de bloques, 50 pasos/s)"},
    "fig.bytes_axis": {"en": "bytes", "zh": "字节", "es": "bytes"},

    # --- variants ----------------------------------------------------------------------------
    "variant.main": {"en": "as vLLM does it", "zh": "vLLM 的做法", "es": "como lo hace vLLM"},
    "variant.no_clear": {"en": "fault: move_row leaves its source", "zh": "故障：move_row 不清源行",
                         "es": "fallo: move_row no limpia el origen"},
    "variant.v1": {"en": "V1 model runner", "zh": "V1 模型运行器", "es": "model runner V1"},
    "variant.v2": {"en": "Model Runner V2", "zh": "V2 模型运行器", "es": "Model Runner V2"},
    "variant.v1_skip_commit": {"en": "V1, fault: one commit skipped", "zh": "V1，故障：漏掉一次提交",
                               "es": "V1, fallo: se salta un commit"},
    "variant.v2_skip_gather": {"en": "V2, fault: one gather skipped", "zh": "V2，故障：漏掉一次 gather",
                               "es": "V2, fallo: se salta un gather"},
    "variant.rank0": {"en": "DCP rank 0", "zh": "DCP rank 0", "es": "rango DCP 0"},
    "variant.rank1": {"en": "DCP rank 1", "zh": "DCP rank 1", "es": "rango DCP 1"},

    # --- prefix sharing ------------------------------------------------------------------------
    "prefix.title": {"en": "Prefix sharing", "zh": "前缀共享", "es": "Compartir prefijos"},
    "prefix.intro": {
        "en": "A and B start with the same 8-token system prompt (block size 4). Full blocks are hashed, so B finds A's two full blocks in the prefix cache and only computes its own tail.",
        "zh": "A 和 B 以同一段 8 个 token 的系统提示开头（块大小 4）。满块会被哈希，所以 B 能在前缀缓存里找到 A 的两个满块，只需计算自己的尾部。",
        "es": "A y B empiezan con el mismo prompt de sistema de 8 tokens (bloque de 4). Los bloques llenos se hashean, así que B encuentra en la caché de prefijos los dos bloques llenos de A y solo calcula su propia cola.",
    },
    "prefix.step0": {
        "en": "A prefills 10 tokens into blocks 1, 2, 3. Look at the pool's ref-count chart: blocks 1 and 2 are full, got a hash and carry the ★ mark (outlined in black); block 3 holds only 2 tokens and has no ★. If a partial block were hashed and shared, the next writer would overwrite tokens another request still reads.",
        "zh": "A 预填 10 个 token，写进块 1、2、3。看块池的引用计数图：块 1 和 2 已满，拿到了哈希，柱子上有 ★ 标记（黑框）；块 3 只有 2 个 token，没有 ★。如果把残块也哈希并共享，下一个写入者就会覆盖别的请求还在读的 token。",
        "es": "A hace el prefill de 10 tokens en los bloques 1, 2 y 3. Mira el gráfico de contadores del pool: los bloques 1 y 2 están llenos, recibieron un hash y llevan la marca ★ (con borde negro); el 3 solo tiene 2 tokens y no lleva ★. Si se hasheara y compartiera un bloque parcial, el siguiente en escribir pisaría tokens que otra petición todavía lee.",
    },
    "prefix.step1": {
        "en": "B arrives: its row starts with the same ids 1 and 2 as A's row — two tables, one physical copy. Its slot mapping holds only B's 3 new tokens (in its own block 4): 8 tokens were not recomputed. Ref counts of blocks 1 and 2 are now 2; freeing on the first finish must not return them to the pool.",
        "zh": "B 到达：它的行以与 A 相同的块号 1、2 开头——两张表，一份物理拷贝。它的槽映射只包含 B 的 3 个新 token（在它自己的块 4 里）：8 个 token 没有重算。块 1、2 的引用计数变成 2；第一个请求结束时释放它们，不能把它们还回池里。",
        "es": "Llega B: su fila empieza con los mismos ids 1 y 2 que la de A: dos tablas, una sola copia física. Su slot mapping solo contiene los 3 tokens nuevos de B (en su bloque 4): 8 tokens no se recalculan. Los contadores de referencias de 1 y 2 valen 2; al terminar la primera petición, liberarlos no debe devolverlos al pool.",
    },
    "prefix.step2": {
        "en": "Both decode. A's block 3 is now full and gets a hash too (its ★ appears). A finishes: only block 3 returns to the free queue; blocks 1 and 2 stay with B (ref 1). Returning a block while another row still names it would hand B's prefix to the next allocation.",
        "zh": "两者都在解码。A 的块 3 现在满了，也拿到哈希（出现了 ★）。A 结束：只有块 3 回到空闲队列；块 1、2 仍归 B（引用计数 1）。如果在另一行仍引用时就归还块，B 的前缀就会被下一次分配拿走。",
        "es": "Ambos decodifican. El bloque 3 de A ya está lleno y también recibe hash (aparece su ★). A termina: solo el bloque 3 vuelve a la cola libre; los bloques 1 y 2 siguen con B (ref 1). Devolver un bloque que otra fila aún nombra entregaría el prefijo de B a la siguiente asignación.",
    },
    "prefix.step3": {
        "en": "A is gone, so B now comes first in the batch, and it grows into block 5. When it finishes, block 5 (no hash) goes to the front of the free queue, the hashed blocks to the back, where a later request with the same prompt can still find them.",
        "zh": "A 已经离开，B 现在排在批次的第一位，并长进块 5。它结束时，没有哈希的块 5 排到空闲队列前面，带哈希的块排到队尾，之后同样提示的请求仍能找到它们。",
        "es": "A ya no está, así que B pasa a ser la primera del lote y crece hasta el bloque 5. Al terminar, el bloque 5 (sin hash) va al frente de la cola libre y los bloques con hash al final, donde una petición posterior con el mismo prompt aún puede encontrarlos.",
    },

    # --- fork ----------------------------------------------------------------------------------
    "fork.title": {"en": "Fork with copy-on-write", "zh": "分叉与写时复制", "es": "Fork con copia en escritura"},
    "fork.intro": {
        "en": "In vLLM V1, parallel sampling (n > 1) does not fork: it becomes separate child requests that share the prompt's full blocks through the prefix cache, and each child computes its own partial last block. This demo shows the classic model of the design document (and of vLLM V0 and beam search): A (10 tokens, blocks of 4) forks into A.1 after its prefill; full blocks are shared, and the partial last block is copied on write.",
        "zh": "在 vLLM V1 里，并行采样（n > 1）并不分叉：它变成几个独立的子请求，通过前缀缓存共享提示的满块，各自计算自己未满的最后一块。本演示展示的是设计文档里的经典模型（也是 vLLM V0 和 beam search 的做法）：A（10 个 token，块大小 4）在预填之后分叉出 A.1；满块共享，未满的最后一块写时复制。",
        "es": "En vLLM V1, el muestreo paralelo (n > 1) no hace fork: se convierte en peticiones hijas separadas que comparten los bloques llenos del prompt a través de la caché de prefijos, y cada hija calcula su propio último bloque parcial. Esta demostración muestra el modelo clásico del documento de diseño (y de vLLM V0 y la búsqueda en haz): A (10 tokens, bloques de 4) se bifurca en A.1 tras el prefill; los bloques llenos se comparten y el último, parcial, se copia en escritura.",
    },
    "fork.step0": {
        "en": "A prefills 10 tokens into blocks 1, 2, 3; block 3 holds positions 8 and 9 and has room for two more. Nothing is shared yet.",
        "zh": "A 把 10 个 token 预填进块 1、2、3；块 3 存了位置 8、9，还能再放两个。此时还没有共享。",
        "es": "A hace el prefill de 10 tokens en los bloques 1, 2 y 3; el bloque 3 guarda las posiciones 8 y 9 y le caben dos más. Aún no se comparte nada.",
    },
    "fork.step1": {
        "en": "The fork: A.1's row is [1, 2, 4]. Blocks 1 and 2 are shared (ref 2), block 3 was copied into block 4 (copy-on-write). Look at the slots: A writes position 10 at slot 14 (block 3), A.1 at slot 18 (block 4). Without the copy both would write slot 14 and the two samples would drift apart from garbage.",
        "zh": "分叉：A.1 的行是 [1, 2, 4]。块 1、2 共享（引用计数 2），块 3 被复制到块 4（写时复制）。看槽号：A 把位置 10 写到槽 14（块 3），A.1 写到槽 18（块 4）。不复制的话两者都会写槽 14，两个采样会从互相覆盖的垃圾开始漂移。",
        "es": "El fork: la fila de A.1 es [1, 2, 4]. Los bloques 1 y 2 se comparten (ref 2) y el 3 se copió al 4 (copia en escritura). Mira los slots: A escribe la posición 10 en el slot 14 (bloque 3) y A.1 en el 18 (bloque 4). Sin la copia, ambos escribirían el slot 14 y las dos muestras divergirían por datos pisados.",
    },
    "fork.step2": {
        "en": "Both decode once more and finish. Freed tails go first: A.1 releases 4, 2, 1; shared blocks reach the free queue only when their last owner lets go.",
        "zh": "两者各再解码一步后结束。释放从尾块开始：A.1 依次释放 4、2、1；共享块要等最后一个持有者放手才进空闲队列。",
        "es": "Ambos decodifican una vez más y terminan. Se liberan primero las colas: A.1 suelta 4, 2, 1; un bloque compartido solo llega a la cola libre cuando lo suelta su último dueño.",
    },

    # --- preemption ---------------------------------------------------------------------------
    "preempt.title": {"en": "Preemption and recompute", "zh": "抢占与重算", "es": "Expropiación y recálculo"},
    "preempt.intro": {
        "en": "A pool of only 6 usable blocks (block 0 is the null block) and two growing requests. When a decode needs a block and none is free, the newest request is preempted: all its blocks are freed and it starts again from position 0. Prefix caching is off here, so nothing survives.",
        "zh": "池里只有 6 个可用块（块 0 是 null block），两个请求都在增长。当某次解码需要新块却没有空闲块时，最新的请求被抢占：它的块全部释放，之后从位置 0 重新开始。这里关闭了前缀缓存，所以什么也留不下。",
        "es": "Un pool de solo 6 bloques útiles (el 0 es el bloque nulo) y dos peticiones que crecen. Cuando un decode necesita un bloque y no queda ninguno libre, se expropia la petición más nueva: se liberan todos sus bloques y vuelve a empezar desde la posición 0. La caché de prefijos está apagada, así que no sobrevive nada.",
    },
    "preempt.step0": {
        "en": "A prefills 11 tokens into blocks 1–3. Three blocks are left in the free queue.",
        "zh": "A 把 11 个 token 预填进块 1–3。空闲队列里还剩 3 块。",
        "es": "A hace el prefill de 11 tokens en los bloques 1–3. Quedan tres bloques en la cola libre.",
    },
    "preempt.step1": {
        "en": "B arrives and takes blocks 4 and 5 for its 7 tokens. Look at B's first slot: position 0 lives at slot 16 (block 4). Remember it.",
        "zh": "B 到达，7 个 token 占用块 4、5。看 B 的第一个槽：位置 0 在槽 16（块 4）。记住它。",
        "es": "Llega B y toma los bloques 4 y 5 para sus 7 tokens. Mira el primer slot de B: la posición 0 está en el slot 16 (bloque 4). Recuérdalo.",
    },
    "preempt.step2": {
        "en": "A crosses into a fourth block and takes block 6, the last free one. The free queue is empty.",
        "zh": "A 跨进第四块，拿走最后一个空闲块 6。空闲队列空了。",
        "es": "A entra en un cuarto bloque y toma el 6, el último libre. La cola libre está vacía.",
    },
    "preempt.step3": {
        "en": "B needs a third block for position 8 and none is free, so B (the newest) is preempted: blocks 5 and 4 go back, B leaves the batch, and its 9 tokens must be recomputed. Keeping only the partial tail would be wrong: the blocks behind it are gone.",
        "zh": "B 的位置 8 需要第三块，但已无空闲块，于是最新的 B 被抢占：块 5、4 归还，B 离开批次，9 个 token 需要重算。只重算残块是错的：它前面的块已经没了。",
        "es": "B necesita un tercer bloque para la posición 8 y no hay ninguno libre, así que se expropia B (la más nueva): los bloques 5 y 4 vuelven a la cola, B sale del lote y sus 9 tokens deberán recalcularse. Recalcular solo la cola parcial estaría mal: los bloques anteriores ya no existen.",
    },
    "preempt.step4": {
        "en": "Only A runs; B waits at the head of the queue. The batch has a single row now.",
        "zh": "只有 A 在跑；B 在等待队列最前面。现在批次里只有一行。",
        "es": "Solo corre A; B espera al frente de la cola. Ahora el lote tiene una sola fila.",
    },
    "preempt.step5": {
        "en": "A writes its last token and finishes; its four blocks return to the free queue.",
        "zh": "A 写下最后一个 token 并结束；它的四块回到空闲队列。",
        "es": "A escribe su último token y termina; sus cuatro bloques vuelven a la cola libre.",
    },
    "preempt.step6": {
        "en": "B is back with 9 tokens (7 prompt + 2 generated) from position 0, in blocks 6, 3, 2. Position 0 is now slot 24, not 16: a slot mapping kept from before the preemption would write into someone else's memory. That is why it is recomputed every step.",
        "zh": "B 带着 9 个 token（7 个提示 + 2 个已生成）从位置 0 回来，用的是块 6、3、2。位置 0 现在是槽 24 而不是 16：沿用抢占前的槽映射就会写进别人的内存。这正是槽映射每步重算的原因。",
        "es": "B vuelve con 9 tokens (7 del prompt + 2 generados) desde la posición 0, en los bloques 6, 3 y 2. La posición 0 es ahora el slot 24, no el 16: un slot mapping guardado de antes de la expropiación escribiría en memoria ajena. Por eso se recalcula en cada paso.",
    },

    # --- chunked prefill -------------------------------------------------------------------------
    "chunked.title": {"en": "Chunked prefill across a block boundary", "zh": "跨块边界的分块预填",
                      "es": "Prefill por trozos que cruza un límite de bloque"},
    "chunked.intro": {
        "en": "A 14-token prompt with a budget of 6 tokens per step and blocks of 4: the prompt is computed in chunks, and chunk boundaries do not line up with block boundaries.",
        "zh": "14 个 token 的提示，每步预算 6 个 token，块大小 4：提示被分块计算，块的边界与分块的边界对不齐。",
        "es": "Un prompt de 14 tokens con un presupuesto de 6 tokens por paso y bloques de 4: el prompt se calcula por trozos, y los límites de los trozos no coinciden con los de los bloques.",
    },
    "chunked.step0": {
        "en": "First chunk: positions 0–5. Block 1 is filled, block 2 holds positions 4 and 5 and is half empty. Only block 1 is hashed: in the pool's ref-count chart only block 1 carries the ★ mark.",
        "zh": "第一块：位置 0–5。块 1 写满，块 2 存了位置 4、5，还空着一半。只有块 1 被哈希：块池的引用计数图里只有块 1 带 ★ 标记。",
        "es": "Primer trozo: posiciones 0–5. El bloque 1 se llena; el 2 guarda las posiciones 4 y 5 y está medio vacío. Solo el bloque 1 recibe hash: en el gráfico de contadores del pool solo el bloque 1 lleva la marca ★.",
    },
    "chunked.step1": {
        "en": "Second chunk: positions 6–11. Slots 10 and 11 continue inside block 2 (offsets 2, 3), then the slots jump to 12 in the newly appended block 3. The positions restart from num_computed_tokens = 6, not 0; if the row had been rewritten in between, the first two slots would land in the wrong block.",
        "zh": "第二块：位置 6–11。槽 10、11 接着写在块 2 里（偏移 2、3），然后跳到新追加的块 3 的槽 12。位置从 num_computed_tokens = 6 开始而不是 0；如果中间这一行被改写过，前两个槽就会落进错误的块。",
        "es": "Segundo trozo: posiciones 6–11. Los slots 10 y 11 siguen dentro del bloque 2 (desplazamientos 2 y 3) y luego saltan al 12, en el bloque 3 recién añadido. Las posiciones arrancan en num_computed_tokens = 6, no en 0; si la fila se hubiera reescrito entre medias, los dos primeros slots caerían en el bloque equivocado.",
    },
    "chunked.step2": {
        "en": "Last chunk: positions 12 and 13 in block 4. The prompt is complete, so this step samples A's first output token.",
        "zh": "最后一块：位置 12、13，在块 4 里。提示已全部算完，这一步采样出 A 的第一个输出 token。",
        "es": "Último trozo: posiciones 12 y 13 en el bloque 4. El prompt está completo, así que este paso muestrea el primer token de salida de A.",
    },
    "chunked.step3": {
        "en": "An ordinary decode: one token at position 14, slot 18. A finishes and its blocks return tail first.",
        "zh": "普通的解码：位置 14 的一个 token，槽 18。A 结束，块从尾部开始归还。",
        "es": "Un decode normal: un token en la posición 14, slot 18. A termina y sus bloques se devuelven empezando por la cola.",
    },

    # --- condense ---------------------------------------------------------------------------------
    "condense.title": {"en": "Condense, and why move_row clears its source", "zh": "压紧，以及 move_row 为何清空源行",
                       "es": "Condense, y por qué move_row limpia su origen"},
    "condense.intro": {
        "en": "Three requests in rows 0, 1, 2. A finishes first, leaving a hole in row 0, and the batch is condensed: C moves from row 2 into row 0. The block tables are drawn in two columns: on the left the run as vLLM does it, on the right the same run with move_row's clearing switched off (the fault). In each column the CPU table is on top and its device mirror below.",
        "zh": "三个请求占第 0、1、2 行。A 最先结束，在第 0 行留下空洞，批次随即压紧：C 从第 2 行搬到第 0 行。块表分两列画：左列是 vLLM 的做法，右列是同一场景但关掉了 move_row 的清零（故障）。每列里 CPU 表在上，设备镜像在下。",
        "es": "Tres peticiones en las filas 0, 1 y 2. A termina primero y deja un hueco en la fila 0; el batch se compacta: C pasa de la fila 2 a la 0. Las tablas de bloques van en dos columnas: a la izquierda, la ejecución como lo hace vLLM; a la derecha, la misma ejecución con la limpieza de move_row desactivada (el fallo). En cada columna, la tabla en CPU va arriba y su espejo en el dispositivo debajo.",
    },
    "condense.step0": {
        "en": "All three prefill. A asked for one token only, so it finishes at the end of this step.",
        "zh": "三个请求一起预填。A 只要一个 token，所以这一步结束时就完成了。",
        "es": "Las tres hacen prefill. A solo pedía un token, así que termina al final de este paso.",
    },
    "condense.step1": {
        "en": "Row 0 is cleared and C moves from row 2 to row 0. Left, as vLLM does it: row 2 of the CPU table is zeroed. Right, the fault: row 2 of the CPU table still holds C's blocks 5, 6, 7. In both columns the device mirror's row 2 still shows 5, 6, 7, because this step's commit copies only rows [0, 2); on the left, red outlines mark row 2 in both tables because they differ there.",
        "zh": "第 0 行被清空，C 从第 2 行搬到第 0 行。左列（vLLM 的做法）：CPU 表的第 2 行被清零。右列（故障）：CPU 表的第 2 行仍是 C 的块 5、6、7。两列设备镜像的第 2 行都还是 5、6、7，因为这一步的提交只拷 [0, 2) 行；左列两张表的第 2 行都有红框，因为两者在这一行不一致。",
        "es": "La fila 0 se limpia y C pasa de la fila 2 a la 0. Izquierda, como lo hace vLLM: la fila 2 de la tabla en CPU queda a cero. Derecha, el fallo: la fila 2 de la tabla en CPU conserva los bloques 5, 6 y 7 de C. En las dos columnas, la fila 2 del espejo sigue mostrando 5, 6, 7, porque el commit de este paso solo copia las filas [0, 2); a la izquierda, un borde rojo marca la fila 2 en las dos tablas porque ahí difieren.",
    },
    "condense.step2": {
        "en": "Nothing changes in the rows; two decodes. Right, the fault: row 2 of the CPU table is unused but not empty. That matters because vLLM's dummy run (a warm-up or padding run without real requests) commits rows [0, num_reqs_padded) of the CPU table to the device, not just [0, num_reqs): a dummy run with 3 rows copies row 2 and reads it. Left, as vLLM does it, that copies zeros (the null block); right, the fault, it copies C's blocks.",
        "zh": "各行没有变化；两个解码。右列（故障）：CPU 表的第 2 行没人用，但并不是空的。这一点很要紧：vLLM 的 dummy run（没有真实请求的预热或补齐运行）会把 CPU 表的 [0, num_reqs_padded) 行提交到设备，而不只是 [0, num_reqs) 行：一个有 3 行的 dummy run 会拷贝并读取第 2 行。左列（vLLM 的做法）拷过去的是 0（null block）；右列（故障）拷过去的是 C 的块。",
        "es": "Las filas no cambian; dos decodes. Derecha, el fallo: la fila 2 de la tabla en CPU no se usa, pero no está vacía. Eso importa porque la ejecución ficticia de vLLM (un calentamiento o una ejecución de relleno sin peticiones reales) copia al dispositivo las filas [0, num_reqs_padded) de la tabla en CPU, no solo [0, num_reqs): una ejecución ficticia con 3 filas copia la fila 2 y la lee. Izquierda, como lo hace vLLM: copia ceros (el bloque nulo); derecha, el fallo: copia los bloques de C.",
    },
    "condense.step3": {
        "en": "C finishes (B too), and blocks 5, 6, 7 go back to the free queue, where any request can take them. Both device mirrors still show 5, 6, 7 in row 2; what decides is the CPU row, because a dummy run's commit of rows [0, num_reqs_padded) copies it over the mirror. Left, as vLLM does it: CPU row 2 is zeros, so the mirror becomes null blocks. Right, the fault: CPU row 2 still names 5, 6, 7. A dummy run that reads row 2 as Mamba state indices and writes state in place would corrupt whoever owns those blocks next. That is the failure the clearing prevents.",
        "zh": "C 结束（B 也结束），块 5、6、7 回到空闲队列，任何请求都能拿走。两列设备镜像的第 2 行都还是 5、6、7；起决定作用的是 CPU 那一行，因为 dummy run 提交 [0, num_reqs_padded) 行时会用它覆盖镜像。左列（vLLM 的做法）：CPU 第 2 行全是 0，镜像随之变成 null block。右列（故障）：CPU 第 2 行仍写着 5、6、7。把第 2 行当作 Mamba 状态下标读取并原地写状态的 dummy run，会把这些块的下一个主人写坏。清零防的就是这个故障。",
        "es": "C termina (B también) y los bloques 5, 6 y 7 vuelven a la cola libre, donde cualquier petición puede tomarlos. La fila 2 de los dos espejos sigue mostrando 5, 6, 7; lo que decide es la fila de la CPU, porque el commit de las filas [0, num_reqs_padded) de una ejecución ficticia la copia sobre el espejo. Izquierda, como lo hace vLLM: la fila 2 en CPU es cero, así que el espejo pasa a bloques nulos. Derecha, el fallo: la fila 2 en CPU todavía nombra 5, 6, 7. Una ejecución ficticia que lea la fila 2 como índices de estado Mamba y escriba el estado in situ corrompería al siguiente dueño de esos bloques. Ese es el fallo que evita la limpieza.",
    },

    # --- CUDA-graph padding ------------------------------------------------------------------------
    "cudagraph.title": {"en": "CUDA-graph padding", "zh": "CUDA Graph 补齐", "es": "Relleno para CUDA graphs"},
    "cudagraph.intro": {
        "en": "Graphs were captured for batches of 1, 2, 4 and 8 tokens. The first step, a 14-token prefill, is larger than any of them and runs unpadded; after it, three requests decode, so each decode step is padded up to 4: a fake token, a fake row, and three different sentinels that keep them harmless.",
        "zh": "CUDA Graph 按 1、2、4、8 个 token 的批次捕获。第一步是 14 个 token 的预填，比哪个都大，不补齐直接执行；之后三个请求在解码，所以每个解码步都补齐到 4：一个假 token、一行假请求，再加上三种不同的哨兵值让它们无害。",
        "es": "Se capturaron grafos para batches de 1, 2, 4 y 8 tokens. El primer paso, un prefill de 14 tokens, es mayor que todos ellos y se ejecuta sin relleno; después, tres peticiones decodifican, así que cada paso de decode se rellena hasta 4: un token falso, una fila falsa y tres centinelas distintos que los hacen inofensivos.",
    },
    "cudagraph.step0": {
        "en": "Prefill of 14 tokens: more than the largest capture size (8), so this step runs eagerly, without a graph and without padding.",
        "zh": "14 个 token 的预填：超过最大捕获尺寸 8，所以这一步不走图，直接 eager 执行，没有补齐。",
        "es": "Prefill de 14 tokens: supera el mayor tamaño capturado (8), así que este paso se ejecuta en modo eager, sin grafo y sin relleno.",
    },
    "cudagraph.step1": {
        "en": "3 decode tokens padded to 4. Look: slot_mapping ends in -1 (the KV write skips it), row 3 of the block table is all 0 (the null block, always a legal read), and seq_lens[3] = 0, so FlashInfer's last_page_len is 0 and its indptr does not grow. Fill the padded row with -1 instead and the attention kernel reads out of bounds.",
        "zh": "3 个解码 token 补齐到 4。看：slot_mapping 以 -1 结尾（写 KV 时跳过），块表第 3 行全是 0（null block，读它永远合法），seq_lens[3] = 0，所以 FlashInfer 的 last_page_len 为 0、indptr 不增长。如果把补齐行填成 -1，注意力内核就会越界读。",
        "es": "3 tokens de decode rellenados a 4. Mira: slot_mapping termina en -1 (la escritura de KV lo salta), la fila 3 de la tabla es toda 0 (el bloque nulo, siempre una lectura legal) y seq_lens[3] = 0, así que en FlashInfer last_page_len es 0 y indptr no crece. Si la fila de relleno se llenara con -1, el kernel de atención leería fuera de límites.",
    },
    "cudagraph.step2": {
        "en": "The same shape again, so the same graph replays; only the values change. C moved into a new block (6). Swap the sentinels (write 0 as a slot) and the fake token's K/V lands in the null block that every padded row reads.",
        "zh": "同样的形状，同一个图再次重放，只是数值变了。C 进入新块 6。如果把哨兵弄混（把 0 当槽号写），假 token 的 K/V 就会写进所有补齐行都在读的 null block。",
        "es": "La misma forma, así que se reproduce el mismo grafo; solo cambian los valores. C pasó a un bloque nuevo (6). Si se intercambian los centinelas (escribir 0 como slot), el K/V del token falso cae en el bloque nulo que leen todas las filas de relleno.",
    },

    # --- hybrid ----------------------------------------------------------------------------------------
    "hybrid.title": {"en": "Hybrid model: sliding window and state groups", "zh": "混合模型：滑窗组与状态组",
                     "es": "Modelo híbrido: grupos de ventana deslizante y de estado"},
    "hybrid.intro": {
        "en": "One model, three KV-cache groups sharing one pool: full attention, a sliding window of 6 tokens, and a Mamba-like state group with one block per request and no slots. Each group has its own block table.",
        "zh": "一个模型，三个 KV cache 组共用一个块池：全注意力、6 个 token 的滑窗，以及每个请求只占一块、没有槽号的类 Mamba 状态组。每组各有一张块表。",
        "es": "Un modelo, tres grupos de caché KV que comparten un pool: atención completa, una ventana deslizante de 6 tokens y un grupo de estado tipo Mamba con un bloque por petición y sin slots. Cada grupo tiene su propia tabla de bloques.",
    },
    "hybrid.step0": {
        "en": "The 9-token prefill takes 3 blocks in each attention group and 1 in the state group. The state table has no slot mapping: its single entry is a state index, not a page.",
        "zh": "9 个 token 的预填在两个注意力组里各占 3 块，在状态组里占 1 块。状态表没有槽映射：它唯一的一项是状态下标，不是页。",
        "es": "El prefill de 9 tokens ocupa 3 bloques en cada grupo de atención y 1 en el de estado. La tabla de estado no tiene slot mapping: su única entrada es un índice de estado, no una página.",
    },
    "hybrid.step1": {
        "en": "With 9 tokens computed, positions 0–3 are outside the 6-token window: the manager swaps block 4 for the null block and frees it. The worker's row still says 4 — harmless, because attention never reaches that far back.",
        "zh": "已算 9 个 token，位置 0–3 落在 6 个 token 的窗口之外：管理器把块 4 换成 null block 并释放它。worker 那一行仍写着 4——无害，因为注意力不会回看那么远。",
        "es": "Con 9 tokens calculados, las posiciones 0–3 quedan fuera de la ventana de 6: el gestor cambia el bloque 4 por el bloque nulo y lo libera. La fila del worker sigue diciendo 4; es inofensivo, porque la atención nunca mira tan atrás.",
    },
    "hybrid.step2": {
        "en": "A decode. Both attention groups write the token (slot 14 and slot 26), the state group writes none.",
        "zh": "一次解码。两个注意力组都写这个 token（槽 14 与槽 26），状态组不写。",
        "es": "Un decode. Los dos grupos de atención escriben el token (slots 14 y 26); el de estado, ninguno.",
    },
    "hybrid.step3": {
        "en": "Position 11 fills block 3 and block 6: both get a hash, and in the pool's ref-count chart both now carry the ★ mark. The window has not moved by a whole block yet, so nothing more is freed.",
        "zh": "位置 11 填满块 3 与块 6，两者都得到哈希：块池的引用计数图里它们现在都带 ★ 标记。窗口还没移动满一整块，所以没有再释放。",
        "es": "La posición 11 llena los bloques 3 y 6: ambos reciben hash y en el gráfico de contadores del pool ahora llevan la marca ★. La ventana aún no ha avanzado un bloque entero, así que no se libera nada más.",
    },
    "hybrid.step4": {
        "en": "Position 12 needs a fourth block in both attention groups (8 and 9). The sliding-window group takes a new block like any other, but it also lets old ones go: at the next step the window passes position 7 and block 5 is freed. Block 9 itself leaves the window only once 21 tokens are computed (its last position, 15, plus the window of 6); A finishes long before that. The state group never grows.",
        "zh": "位置 12 在两个注意力组里都需要第四块（8 和 9）。滑窗组和别的组一样要拿新块，但它也会放掉旧块：下一步窗口越过位置 7，块 5 被释放。块 9 本身要等算满 21 个 token（它的最后一个位置 15 加上窗口 6）才会离开窗口；A 早在那之前就结束了。状态组永远不增长。",
        "es": "La posición 12 necesita un cuarto bloque en ambos grupos de atención (8 y 9). El grupo de ventana toma un bloque nuevo como cualquier otro, pero también suelta los viejos: en el paso siguiente la ventana pasa la posición 7 y se libera el bloque 5. El propio bloque 9 solo sale de la ventana cuando hay 21 tokens calculados (su última posición, 15, más la ventana de 6); A termina mucho antes. El de estado nunca crece.",
    },
    "hybrid.step5": {
        "en": "Block 5 leaves the window too. Then A finishes and each group frees its own blocks. Had the window freed blocks the attention still reads, the sliding-window layers would attend to someone else's KV.",
        "zh": "块 5 也滑出窗口。随后 A 结束，每组各自释放自己的块。如果窗口释放了注意力仍在读的块，滑窗层就会读到别人的 KV。",
        "es": "El bloque 5 también sale de la ventana. Luego A termina y cada grupo libera sus propios bloques. Si la ventana liberara bloques que la atención aún lee, las capas de ventana atenderían al KV de otro.",
    },

    # --- kernel block size ---------------------------------------------------------------------------
    "kernel_block.title": {"en": "Kernel block smaller than the manager's", "zh": "内核块小于管理器块",
                           "es": "Bloque del kernel menor que el del gestor"},
    "kernel_block.intro": {
        "en": "The manager allocates blocks of 8 tokens; the attention kernel wants blocks of 4. Each manager block m becomes kernel blocks 2m and 2m+1, and the table is written in kernel blocks.",
        "zh": "管理器按 8 个 token 分块，注意力内核要 4 个 token 的块。每个管理器块 m 展开成内核块 2m 和 2m+1，块表按内核块书写。",
        "es": "El gestor asigna bloques de 8 tokens; el kernel de atención quiere bloques de 4. Cada bloque del gestor m se convierte en los bloques del kernel 2m y 2m+1, y la tabla se escribe en bloques del kernel.",
    },
    "kernel_block.step0": {
        "en": "The manager gives A blocks 1 and 2; the row reads [2, 3, 4, 5]. Slot of position 9: kernel block 4 × 4 + 1 = 17, the same as manager block 2 × 8 + 1 — the same memory either way. Forget the expansion and the kernel reads blocks 1 and 2 of size 4: the wrong half of the cache.",
        "zh": "管理器给 A 分配块 1、2；这一行写成 [2, 3, 4, 5]。位置 9 的槽：内核块 4 × 4 + 1 = 17，与管理器块 2 × 8 + 1 相同——同一块内存。如果忘了展开，内核就会按 4 个 token 读块 1、2：读到缓存里错误的那一半。",
        "es": "El gestor da a A los bloques 1 y 2; la fila dice [2, 3, 4, 5]. Slot de la posición 9: bloque del kernel 4 × 4 + 1 = 17, igual que bloque del gestor 2 × 8 + 1: la misma memoria. Si se olvida la expansión, el kernel lee los bloques 1 y 2 de tamaño 4: la mitad equivocada de la caché.",
    },
    "kernel_block.step1": {
        "en": "B arrives with 5 tokens and gets manager block 3 = kernel blocks 6 and 7. Prefix hashing and freeing still work in manager blocks; only the table and the slots speak kernel blocks.",
        "zh": "B 带着 5 个 token 到达，拿到管理器块 3 = 内核块 6、7。前缀哈希与释放仍按管理器块进行；只有块表和槽号按内核块表达。",
        "es": "Llega B con 5 tokens y recibe el bloque del gestor 3 = bloques del kernel 6 y 7. El hash de prefijos y la liberación siguen en bloques del gestor; solo la tabla y los slots hablan en bloques del kernel.",
    },
    "kernel_block.step2": {
        "en": "A has finished; B is alone in the batch (its first row) and decodes at slot 29 = 7 × 4 + 1. The row width is counted in kernel blocks too: twice as many columns for the same tokens.",
        "zh": "A 已结束；B 独自在批次里（第一行），在槽 29 = 7 × 4 + 1 解码。行宽也按内核块计：同样的 token 需要两倍的列。",
        "es": "A ya terminó; B está sola en el lote (su primera fila) y decodifica en el slot 29 = 7 × 4 + 1. El ancho de fila también se cuenta en bloques del kernel: el doble de columnas para los mismos tokens.",
    },

    # --- DCP -----------------------------------------------------------------------------------------------
    "dcp.title": {"en": "DCP interleave across ranks", "zh": "DCP 跨 rank 交错", "es": "Intercalado DCP entre rangos"},
    "dcp.intro": {
        "en": "Decode context parallelism over 2 ranks with interleave 1: every rank has the same block table, but a block id stands for 8 positions and each rank stores 4 of them — rank 0 the even positions, rank 1 the odd ones.",
        "zh": "2 个 rank 的解码上下文并行，交错粒度 1：每个 rank 的块表完全相同，但一个块号代表 8 个位置，每个 rank 只存其中 4 个——rank 0 存偶数位置，rank 1 存奇数位置。",
        "es": "Paralelismo de contexto en decode con 2 rangos e intercalado 1: todos los rangos tienen la misma tabla de bloques, pero un id de bloque representa 8 posiciones y cada rango guarda 4: el rango 0 las pares y el rango 1 las impares.",
    },
    "dcp.step0": {
        "en": "11 tokens need only 2 blocks (8 positions each). Compare the slot mappings: rank 0 writes 4, -1, 5, -1, …; rank 1 the mirror image. -1 means \"the other rank stores this one\". Each rank's attention uses only its local share as seq_len: 6 tokens on rank 0, 5 on rank 1 (the local seq_lens in the titles of the slot figures).",
        "zh": "11 个 token 只需 2 块（每块 8 个位置）。对比两个槽映射：rank 0 写 4, -1, 5, -1，…；rank 1 正好相反。-1 表示「这个归另一个 rank 存」。每个 rank 的注意力只把本地那一份当作 seq_len：rank 0 是 6 个 token，rank 1 是 5 个（见槽号图标题里的本地 seq_lens）。",
        "es": "11 tokens necesitan solo 2 bloques (8 posiciones cada uno). Compara los slot mappings: el rango 0 escribe 4, -1, 5, -1, …; el rango 1, lo contrario. -1 significa «esto lo guarda el otro rango». La atención de cada rango usa como seq_len solo su parte local: 6 tokens en el rango 0 y 5 en el rango 1 (los seq_lens locales en los títulos de las figuras de slots).",
    },
    "dcp.step1": {
        "en": "Position 11 is odd: rank 1 writes it (slot 9), rank 0 writes nothing. If both ranks wrote every token, each would hold a full copy and DCP would save no memory; if neither skipped, the local offsets would collide.",
        "zh": "位置 11 是奇数：rank 1 写它（槽 9），rank 0 什么都不写。如果两个 rank 都写每个 token，各自就存了一整份，DCP 省不了内存；如果都不跳过，本地偏移就会冲突。",
        "es": "La posición 11 es impar: la escribe el rango 1 (slot 9) y el rango 0 no escribe nada. Si ambos rangos escribieran todos los tokens, cada uno tendría una copia completa y DCP no ahorraría memoria; si ninguno saltara, los desplazamientos locales chocarían.",
    },

    # --- PCIe ---------------------------------------------------------------------------------------------
    "pcie.title": {"en": "The PCIe cost of a 1M-token context", "zh": "1M token 上下文的 PCIe 代价",
                   "es": "El coste en PCIe de un contexto de 1M tokens"},
    "pcie.intro": {
        "en": "The block table is committed at full row width every step, however few blocks a row uses. With max_model_len = 1M and blocks of 16, a row is 65,536 int32 entries = 256 KiB.",
        "zh": "块表每步都按整行宽度提交，不管这一行实际用了几块。max_model_len = 1M、块大小 16 时，一行是 65,536 个 int32 = 256 KiB。",
        "es": "La tabla de bloques se copia cada paso con el ancho de fila completo, por pocos bloques que use la fila. Con max_model_len = 1M y bloques de 16, una fila son 65.536 entradas int32 = 256 KiB.",
    },
    "pcie.step0": {
        "en": "A uses 2 blocks, yet the commit moves 256 KiB: one full row. Look at the traffic figure: at 256 requests and 50 steps/s a 32K context costs about 100 MiB/s, a 1M context about 3.1 GiB/s — now it competes with the real inputs for the PCIe link.",
        "zh": "A 只用了 2 块，提交却搬了 256 KiB：一整行。看流量图：256 个请求、每秒 50 步时，32K 上下文约 100 MiB/s，1M 上下文约 3.1 GiB/s——此时它已经在和真正的输入争抢 PCIe 带宽。",
        "es": "A usa 2 bloques y, aun así, el commit mueve 256 KiB: una fila completa. Mira la figura de tráfico: con 256 peticiones y 50 pasos/s, un contexto de 32K cuesta unos 100 MiB/s y uno de 1M unos 3,1 GiB/s: ya compite con las entradas reales por el enlace PCIe.",
    },
    "pcie.step1": {
        "en": "Two rows now: 512 KiB per step for 3 blocks of real content. The bytes grow with rows × width, not with the tokens in the batch.",
        "zh": "现在两行：每步 512 KiB，而真正有内容的只有 3 块。字节数随「行数 × 行宽」增长，而不是随批次里的 token 数。",
        "es": "Ahora dos filas: 512 KiB por paso para 3 bloques con contenido real. Los bytes crecen con filas × ancho, no con los tokens del batch.",
    },
    "pcie.step2": {
        "en": "Same cost again for two decode tokens. The ways out: copy only dirty rows, copy only the used prefix of each row, or keep the table on the device and send deltas.",
        "zh": "为两个解码 token 又付一遍同样的代价。出路有：只拷脏行、每行只拷已用前缀，或者把表留在设备上只发增量。",
        "es": "El mismo coste otra vez por dos tokens de decode. Salidas posibles: copiar solo las filas modificadas, copiar solo el prefijo usado de cada fila, o mantener la tabla en el dispositivo y enviar solo los cambios.",
    },

    # --- V1 vs V2 ----------------------------------------------------------------------------------
    "v1_vs_v2.title": {"en": "The same four requests under V1 and under V2", "zh": "同样四个请求：V1 与 V2 对照",
                       "es": "Las mismas cuatro peticiones con V1 y con V2"},
    "v1_vs_v2.intro": {
        "en": "The same four requests under the V1 model runner (left column: CPU table above its device mirror) and under Model Runner V2 (right column: request-state rows above the gathered input table). A (3 blocks) finishes after its prefill; D (1 block) arrives two steps later. Scheduler and block pool are the same, so every request owns the same blocks under both; what differs is where its row lives and how it reaches the kernel.",
        "zh": "同样四个请求，左列用 V1 模型运行器（CPU 表在上，设备镜像在下），右列用 Model Runner V2（请求状态行在上，gather 所得的输入块表在下）。A（3 块）预填后就结束；D（1 块）晚两步到达。调度器和块池相同，所以两边每个请求拥有的块都一样；不同的是它的行放在哪里、怎样到达内核。",
        "es": "Las mismas cuatro peticiones con el model runner V1 (columna izquierda: la tabla en CPU sobre su espejo en el dispositivo) y con Model Runner V2 (columna derecha: las filas de estado sobre la tabla de entrada reunida). A (3 bloques) termina tras su prefill; D (1 bloque) llega dos pasos después. El planificador y el pool son los mismos, así que cada petición tiene los mismos bloques con ambos; cambia dónde vive su fila y cómo llega al kernel.",
    },
    "v1_vs_v2.step0": {
        "en": "A, B and C prefill. Left, V1: rows 0, 1, 2 in arrival order, and the commit copies rows [0, 3) to the mirror. Right, V2: each request pops a request-state index from the end of the free list [0, 1, 2, 3]: A gets 3, B 2, C 1. The batch is ordered by scheduled tokens, fewest first (B, C, A), and idx_mapping = [2, 1, 3] tells the gather which state row goes to each batch position. Compare the two slot figures token by token: every token has the same slot under both runners (same blocks, same arithmetic: block × 4 + offset); only the order of the tokens differs.",
        "zh": "A、B、C 预填。左列 V1：按到达顺序占第 0、1、2 行，提交把 [0, 3) 行拷到镜像。右列 V2：每个请求从空闲列表 [0, 1, 2, 3] 的末尾弹出一个请求状态索引：A 得 3，B 得 2，C 得 1。批次按本步调度的 token 数从少到多排序（B、C、A），idx_mapping = [2, 1, 3] 告诉 gather 每个批次位置取哪一个状态行。逐个 token 对比两张槽号图：两种运行器下每个 token 的槽号都相同（同样的块，同样的算法：块 × 4 + 偏移）；只是 token 的顺序不同。",
        "es": "A, B y C hacen prefill. Izquierda, V1: filas 0, 1, 2 en orden de llegada, y el commit copia las filas [0, 3) al espejo. Derecha, V2: cada petición saca un índice de estado del final de la lista libre [0, 1, 2, 3]: A recibe el 3, B el 2, C el 1. El lote se ordena por tokens planificados, de menos a más (B, C, A), e idx_mapping = [2, 1, 3] le dice al gather qué fila de estado va a cada posición del lote. Compara las dos figuras de slots token a token: cada token tiene el mismo slot con ambos runners (los mismos bloques, la misma aritmética: bloque × 4 + desplazamiento); solo cambia el orden de los tokens.",
    },
    "v1_vs_v2.step1": {
        "en": "A has finished. Left, V1: A's row 0 is cleared and C moves from row 2 to row 0 (move_row: the batch is condensed); the batch is C, B. Right, V2: nothing moves. A gives index 3 back to the end of the free list, and its state row is left as it was: 1, 2, 3. B and C keep their indices 2 and 1, and idx_mapping = [2, 1].",
        "zh": "A 已结束。左列 V1：A 的第 0 行被清空，C 从第 2 行搬到第 0 行（move_row：批次压紧）；批次是 C、B。右列 V2：什么都不搬。A 把索引 3 还到空闲列表末尾，它的状态行保持原样：1, 2, 3。B、C 保留索引 2 和 1，idx_mapping = [2, 1]。",
        "es": "A ha terminado. Izquierda, V1: la fila 0 de A se limpia y C pasa de la fila 2 a la 0 (move_row: el lote se compacta); el lote es C, B. Derecha, V2: nada se mueve. A devuelve el índice 3 al final de la lista libre y su fila de estado queda como estaba: 1, 2, 3. B y C conservan sus índices 2 y 1, e idx_mapping = [2, 1].",
    },
    "v1_vs_v2.step2": {
        "en": "D arrives. Left, V1: D takes row 2, the first free row after the condense. Right, V2: D pops index 3, the one A gave back (last in, first out), and its block 8 is written from column 0 over A's old row, which now reads [8, 2, 3]. Only the first entry is D's (its count is 1); 2 and 3 are A's leftovers (block 3 even belongs to C now) and are never read. The gather copies that one entry to batch position 2 of the input table, whose row also reads [8, 2, 3]: the tail is what A's gather left there. The slot mappings still agree token for token, although V1 orders the batch C, B, D and V2 B, C, D.",
        "zh": "D 到达。左列 V1：D 占第 2 行，即压紧后的第一个空行。右列 V2：D 弹出索引 3，正是 A 还回来的那个（后进先出），它的块 8 从第 0 列开始写在 A 的旧行上，这一行现在是 [8, 2, 3]。只有第一项属于 D（它的计数是 1）；2 和 3 是 A 的残留（块 3 现在甚至归 C 所有），永远不会被读。gather 把这一项拷到输入表的批次位置 2，那一行同样是 [8, 2, 3]：尾部是 A 的 gather 留下的。槽映射仍然逐 token 相同，尽管 V1 的批次顺序是 C、B、D，V2 是 B、C、D。",
        "es": "Llega D. Izquierda, V1: D ocupa la fila 2, la primera libre tras el condense. Derecha, V2: D saca el índice 3, el que devolvió A (último en entrar, primero en salir), y su bloque 8 se escribe desde la columna 0 sobre la fila vieja de A, que ahora dice [8, 2, 3]. Solo la primera entrada es de D (su cuenta es 1); 2 y 3 son restos de A (el bloque 3 incluso pertenece ahora a C) y nunca se leen. El gather copia esa entrada a la posición 2 del lote en la tabla de entrada, cuya fila también dice [8, 2, 3]: la cola es lo que dejó allí el gather de A. Los slot mappings siguen coincidiendo token a token, aunque V1 ordena el lote C, B, D y V2 B, C, D.",
    },
    "v1_vs_v2.step3": {
        "en": "Three decodes, and all three requests finish. In every step of this demo each token got the same slot under both runners. The runners differ in bookkeeping, not in which blocks a request owns: V1 moves rows and commits them to the mirror; V2 keeps a request in one state row for its whole life and gathers the scheduled rows in batch order through idx_mapping.",
        "zh": "三个解码，三个请求全部结束。本演示的每一步里，两种运行器给每个 token 的槽号都相同。两者的差别在记账方式，而不在请求拥有哪些块：V1 搬动行并把它们提交到镜像；V2 让请求一生都待在同一个状态行里，每步通过 idx_mapping 按批次顺序 gather 被调度的行。",
        "es": "Tres decodes, y las tres peticiones terminan. En todos los pasos de esta demostración cada token recibió el mismo slot con ambos runners. Difieren en la contabilidad, no en qué bloques tiene cada petición: V1 mueve filas y las copia al espejo con commit; V2 mantiene cada petición en una misma fila de estado toda su vida y reúne las filas planificadas en orden de lote a través de idx_mapping.",
    },

    # --- where stale ids live --------------------------------------------------------------------------
    "where_stale.title": {"en": "Where each runner can go stale", "zh": "每种运行器会在哪里留下陈旧数据",
                          "es": "Dónde puede quedar obsoleto cada runner"},
    "where_stale.intro": {
        "en": "Stale block ids exist under both runners; what matters is whether a kernel reads them. Four runs of the same four requests. Top band: the V1 model runner (CPU table above its device mirror), as vLLM does it on the left, with one step's commit skipped on the right. Bottom band: Model Runner V2 (request-state rows above the gathered input table), as vLLM does it on the left, with one step's gather skipped on the right. The dotted outline marks the part of a row that is read (as many entries as the request has blocks). In V1 tables a red outline marks a row where the CPU table and the mirror differ; in V2 tables, a row whose read part is not the request's blocks.",
        "zh": "两种运行器里都有陈旧的块号；要紧的是内核会不会读到它们。同样四个请求跑四遍。上排：V1 模型运行器（CPU 表在上，设备镜像在下），左边是 vLLM 的做法，右边漏掉某一步的提交。下排：Model Runner V2（请求状态行在上，gather 所得输入表在下），左边是 vLLM 的做法，右边漏掉某一步的 gather。虚线框标出一行中会被读的部分（请求有几块就是几项）。V1 的表里红框标出 CPU 表与镜像不一致的行；V2 的表里红框标出被读部分不是该请求块号的行。",
        "es": "Hay ids de bloque obsoletos con ambos runners; lo que importa es si un kernel los lee. Cuatro ejecuciones de las mismas cuatro peticiones. Banda de arriba: el model runner V1 (la tabla en CPU sobre su espejo), a la izquierda como lo hace vLLM y a la derecha con el commit de un paso omitido. Banda de abajo: Model Runner V2 (las filas de estado sobre la tabla de entrada reunida), a la izquierda como lo hace vLLM y a la derecha con el gather de un paso omitido. El borde punteado marca la parte de una fila que se lee (tantas entradas como bloques tiene la petición). En las tablas de V1 un borde rojo marca una fila en la que la CPU y el espejo difieren; en las de V2, una fila cuya parte leída no son los bloques de la petición.",
    },
    "where_stale.step0": {
        "en": "A, B and C prefill, and all four runs agree: nothing is stale yet. V1 commits rows [0, 3); V2 gathers state rows 2, 1, 3 into batch positions 0, 1, 2.",
        "zh": "A、B、C 预填，四次运行完全一致：还没有任何陈旧数据。V1 提交 [0, 3) 行；V2 把状态行 2、1、3 gather 到批次位置 0、1、2。",
        "es": "A, B y C hacen prefill y las cuatro ejecuciones coinciden: todavía no hay nada obsoleto. V1 hace commit de las filas [0, 3); V2 reúne las filas de estado 2, 1, 3 en las posiciones 0, 1, 2 del lote.",
    },
    "where_stale.step1": {
        "en": "A finishes; the faulty runs still match the healthy ones. V1: removing A clears its row 0 (vLLM v0.19.0, #37728), and C moves from row 2 to row 0; move_row clears row 2 of the CPU table (vLLM v0.27.0, #49757). The mirror's row 2 still holds C's 6, 7 (red outline), because the commit copies rows [0, 2) only. Harmless: the kernel reads rows [0, num_reqs), and the mirror is right only where a commit has reached. V2: A gives index 3 back; state row 3 keeps 1, 2, 3, and input row 2 keeps them too. Harmless: a freed state row is never gathered, and an input row past the batch is never read.",
        "zh": "A 结束；出故障的两次运行此时仍与正常的一致。V1：移除 A 时清空它的第 0 行（vLLM v0.19.0，#37728），C 从第 2 行搬到第 0 行；move_row 清空 CPU 表的第 2 行（vLLM v0.27.0，#49757）。镜像的第 2 行仍是 C 的 6、7（红框），因为提交只拷 [0, 2) 行。无害：内核只读 [0, num_reqs) 行，镜像只在提交覆盖到的地方才是对的。V2：A 还回索引 3；状态行 3 保留 1、2、3，输入表第 2 行也保留着。无害：已释放的状态行不会被 gather，批次之外的输入行也不会被读。",
        "es": "A termina; las ejecuciones con fallo todavía coinciden con las sanas. V1: al quitar A se limpia su fila 0 (vLLM v0.19.0, #37728), y C pasa de la fila 2 a la 0; move_row limpia la fila 2 de la tabla en CPU (vLLM v0.27.0, #49757). La fila 2 del espejo sigue con los 6, 7 de C (borde rojo), porque el commit solo copia las filas [0, 2). Inofensivo: el kernel lee las filas [0, num_reqs), y el espejo solo es correcto hasta donde llegó un commit. V2: A devuelve el índice 3; la fila de estado 3 conserva 1, 2, 3, y la fila 2 de la entrada también. Inofensivo: una fila de estado liberada nunca se reúne, y una fila de entrada fuera del lote nunca se lee.",
    },
    "where_stale.step2": {
        "en": "D arrives, and the faulty runs skip this step's commit (V1) or gather (V2). Top left, V1 as vLLM does it: the commit copies rows [0, 3), so D's row 2 ([8]) replaces the stale 6, 7. Bottom left, V2 as vLLM does it: D reuses index 3; its state row reads 8, 2, 3, a stale tail past its count of 1, and so does input row 2; nothing reads past the count. Top right, commit skipped: the mirror keeps the last step's rows, so D's row 2 names C's blocks 6, 7 and C's row 0 lacks its new block 3. The kernel reads that, and because the slot mapping is computed from the mirror too, D's tokens are written into slots 24, 25, 26 (C's block 6) and C's new token into slot 0 (the null block). Bottom right, gather skipped: the input table keeps the last step's rows, so batch position 2 (D) reads A's freed blocks 1, 2, 3 and position 1 (C) lacks its new block 3. But the slot mapping reads the state rows through idx_mapping, so the KV is still written where it belongs: D's tokens into slots 32, 33, 34 of block 8.",
        "zh": "D 到达，出故障的运行漏掉本步的提交（V1）或 gather（V2）。左上，V1 的 vLLM 做法：提交拷 [0, 3) 行，D 的第 2 行（[8]）取代了陈旧的 6、7。左下，V2 的 vLLM 做法：D 复用索引 3；它的状态行是 8、2、3，计数 1 之后是陈旧尾部，输入表第 2 行也一样；没有谁会读到计数之外。右上，漏掉提交：镜像保留上一步的行，于是 D 的第 2 行写着 C 的块 6、7，C 的第 0 行缺了新块 3。内核就读这些；而槽映射也是从镜像算的，所以 D 的 token 被写进槽 24、25、26（C 的块 6），C 的新 token 被写进槽 0（null block）。右下，漏掉 gather：输入表保留上一步的行，于是批次位置 2（D）读的是 A 已释放的块 1、2、3，位置 1（C）缺了新块 3。但槽映射是通过 idx_mapping 从状态行读的，所以 KV 仍写在该写的地方：D 的 token 写进块 8 的槽 32、33、34。",
        "es": "Llega D, y las ejecuciones con fallo se saltan el commit (V1) o el gather (V2) de este paso. Arriba a la izquierda, V1 como lo hace vLLM: el commit copia las filas [0, 3), así que la fila 2 de D ([8]) sustituye a los 6, 7 obsoletos. Abajo a la izquierda, V2 como lo hace vLLM: D reutiliza el índice 3; su fila de estado dice 8, 2, 3, con una cola obsoleta tras su cuenta de 1, y la fila 2 de la entrada también; nadie lee más allá de la cuenta. Arriba a la derecha, commit omitido: el espejo conserva las filas del paso anterior, así que la fila 2 de D nombra los bloques 6, 7 de C y a la fila 0 de C le falta su bloque nuevo 3. El kernel lee eso y, como el slot mapping también se calcula desde el espejo, los tokens de D se escriben en los slots 24, 25, 26 (el bloque 6 de C) y el token nuevo de C en el slot 0 (el bloque nulo). Abajo a la derecha, gather omitido: la tabla de entrada conserva las filas del paso anterior, así que la posición 2 del lote (D) lee los bloques liberados de A 1, 2, 3 y a la posición 1 (C) le falta su bloque nuevo 3. Pero el slot mapping lee las filas de estado a través de idx_mapping, así que el KV se sigue escribiendo donde debe: los tokens de D en los slots 32, 33, 34 del bloque 8.",
    },
    "where_stale.step3": {
        "en": "Both faults lasted one step: the next commit and the next gather rewrite every row of the batch, and each faulty run's tables match its healthy neighbour's again. The damage differs. Either way the last step's attention read wrong blocks, so the tokens it sampled for C and D are wrong. Under V1 the cache is corrupt too: C's positions 0–2 in block 6 now hold D's KV, and D's own block 8 never got its first three tokens. Under V2 the cache was written right.",
        "zh": "两个故障都只持续一步：下一次提交和下一次 gather 会重写批次里的每一行，出故障的运行的表又与旁边正常运行的一致了。但损害不同。无论哪种，上一步的注意力都读了错的块，所以那一步为 C 和 D 采样的 token 是错的。V1 下缓存本身也坏了：C 在块 6 里的位置 0–2 现在存的是 D 的 KV，而 D 自己的块 8 始终没写进它的前三个 token。V2 下缓存是写对的。",
        "es": "Los dos fallos duraron un paso: el siguiente commit y el siguiente gather reescriben todas las filas del lote, y las tablas de cada ejecución con fallo vuelven a coincidir con las de su vecina sana. El daño es distinto. En ambos casos la atención del paso anterior leyó bloques equivocados, así que los tokens que muestreó para C y D están mal. Con V1 además la caché queda corrupta: las posiciones 0–2 de C en el bloque 6 guardan ahora el KV de D, y el propio bloque 8 de D nunca recibió sus tres primeros tokens. Con V2 la caché se escribió bien.",
    },
}

# each figure's sentence, the release picker, presenter mode's strip (kvviz/texts/demo_notes.py)
from kvviz.texts.demo_notes import STRINGS as _NOTES  # noqa: E402

STRINGS.update(_NOTES)
