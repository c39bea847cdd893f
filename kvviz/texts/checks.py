"""The dump checker's prose in the three languages: the engine's faults, the injected bugs
(kvviz.dumps.faults), the checker's concepts and every check's title and explanation. The Debug-dumps
page looks them up among its own texts (kvviz/texts/dumps.py merges them into its STRINGS)."""
CHECK_STRINGS = {
    # --- the engine's faults --------------------------------------------------------------------
    "fault.skip_commit": {"en": "skip_commit: the step forgets to commit", "zh": "skip_commit：该步忘记提交",
                          "es": "skip_commit: el paso olvida confirmar"},
    "fault.commit_too_few_rows": {"en": "commit_too_few_rows: the commit copies num_reqs - 1 rows",
                                  "zh": "commit_too_few_rows：提交只复制 num_reqs - 1 行",
                                  "es": "commit_too_few_rows: la confirmación copia num_reqs - 1 filas"},
    "fault.move_row_no_clear": {"en": "move_row_no_clear: condense leaves the vacated row's blocks",
                                "zh": "move_row_no_clear：压缩后未清空腾出的行",
                                "es": "move_row_no_clear: al compactar, la fila vaciada conserva sus bloques"},
    "fault.skip_apply_staged_writes": {
        "en": "skip_apply_staged_writes (Model Runner V2): new block ids are staged but never written to the "
              "device state rows",
        "zh": "skip_apply_staged_writes（Model Runner V2）：新块 id 已暂存，但从未写入设备端的请求状态行",
        "es": "skip_apply_staged_writes (Model Runner V2): los ids de bloque nuevos se preparan pero nunca se "
              "escriben en las filas de estado del dispositivo"},
    "fault.skip_gather": {
        "en": "skip_gather (Model Runner V2): the step does not gather the state rows into the input block table",
        "zh": "skip_gather（Model Runner V2）：该步没有把请求状态行收集到输入块表中",
        "es": "skip_gather (Model Runner V2): el paso no reúne las filas de estado en la tabla de bloques de "
              "entrada"},

    # --- the injected bugs (kvviz.dumps.faults) ----------------------------------------------------------
    "bug.move_row_no_clear": {"en": "move_row without clearing the source", "zh": "move_row 后未清空源行",
                              "es": "move_row sin limpiar la fila de origen"},
    "bugdesc.move_row_no_clear": {
        "en": "Condense moves the last row into a hole but leaves the vacated row's blocks behind; that row is now "
              "padding, and a commit of the padded rows hands the stale ids to the kernel.",
        "zh": "压缩把最后一行移入空洞，却把腾出行的块留在原处；该行现在是填充行，一旦提交填充行，过期的块 id 就会交给内核。",
        "es": "Al compactar se mueve la última fila a un hueco pero la fila vaciada conserva sus bloques; esa fila es "
              "ahora de relleno, y una confirmación de las filas de relleno entrega los ids obsoletos al kernel."},
    "bug.commit_too_few_rows": {"en": "Commit of too few rows", "zh": "提交的行数太少",
                                "es": "Confirmación de muy pocas filas"},
    "bugdesc.commit_too_few_rows": {
        "en": "The step copies num_reqs - 1 rows to the device, so the last live row reaches the kernel as it was "
              "before (here: all zeros).",
        "zh": "该步只把 num_reqs - 1 行复制到设备，因此最后一个活跃行以旧内容到达内核（此处全为 0）。",
        "es": "El paso copia num_reqs - 1 filas al dispositivo, así que la última fila viva llega al kernel como "
              "estaba antes (aquí: todo ceros)."},
    "bug.skip_commit": {"en": "Skipped commit", "zh": "跳过提交", "es": "Confirmación omitida"},
    "bugdesc.skip_commit": {
        "en": "The step forgets to commit, so every row changed this step (here the row D moved into) is stale on "
              "the device. (Its slots happen to come out right: position 4 lands in block 4 in both the old and "
              "the new row; the attention still reads the wrong pages.)",
        "zh": "该步忘记提交，因此本步改动的每一行（此处是 D 移入的那一行）在设备上都是过期的。"
              "（它的 slot 恰好正确：位置 4 在新旧两行中都落在块 4；但注意力仍读取错误的页。）",
        "es": "El paso olvida confirmar, así que cada fila modificada en este paso (aquí, la fila a la que se movió "
              "D) está obsoleta en el dispositivo. (Sus slots salen bien por casualidad: la posición 4 cae en el "
              "bloque 4 tanto en la fila vieja como en la nueva; la atención sigue leyendo páginas erróneas.)"},
    "bug.last_page_len_no_full_rule": {"en": "last_page_len without the full-page rule",
                                       "zh": "last_page_len 缺少满页规则",
                                       "es": "last_page_len sin la regla de página llena"},
    "bugdesc.last_page_len_no_full_rule": {
        "en": "last_page_len is computed as seq_len % page_size, so a request whose last page is full gets 0 "
              "instead of page_size.",
        "zh": "last_page_len 按 seq_len % page_size 计算，于是最后一页已满的请求得到 0，而不是 page_size。",
        "es": "last_page_len se calcula como seq_len % page_size, así que una petición cuya última página está "
              "llena obtiene 0 en lugar de page_size."},
    "bug.pad_swap": {"en": "-1 and 0 swapped in padding", "zh": "填充中 -1 与 0 互换",
                     "es": "-1 y 0 intercambiados en el relleno"},
    "bugdesc.pad_swap": {
        "en": "Padding tokens get slot 0 (a real slot of block 0) instead of -1, and padded rows are filled with "
              "-1 instead of the null block 0.",
        "zh": "填充 token 得到 slot 0（块 0 的真实 slot）而不是 -1，填充行则被填成 -1 而不是空块 0。",
        "es": "Los tokens de relleno reciben el slot 0 (un slot real del bloque 0) en lugar de -1, y las filas de "
              "relleno se llenan con -1 en lugar del bloque nulo 0."},
    "bug.shared_partial_block": {"en": "Shared partial block (no copy-on-write)",
                                 "zh": "共享未满的块（没有写时复制）",
                                 "es": "Bloque parcial compartido (sin copia en escritura)"},
    "bugdesc.shared_partial_block": {
        "en": "A fork shares all of the parent's blocks, including its partially filled last block, instead of "
              "giving the child a private copy; both requests then write the same slots.",
        "zh": "fork 共享了父请求的所有块，包括未写满的最后一块，而没有给子请求一份私有副本；两个请求随后写入相同的 slot。",
        "es": "Un fork comparte todos los bloques del padre, incluido su último bloque a medio llenar, en lugar de "
              "dar al hijo una copia privada; después ambas peticiones escriben en los mismos slots."},
    "bug.wrong_block_size_slot": {"en": "Slot computed with the wrong block size", "zh": "用错误的块大小计算 slot",
                                  "es": "Slot calculado con un tamaño de bloque erróneo"},
    "bugdesc.wrong_block_size_slot": {
        "en": "The slot mapping uses block size 8 while the table's blocks hold 4 tokens.",
        "zh": "slot_mapping 使用块大小 8，而表中的块只容纳 4 个 token。",
        "es": "slot_mapping usa un tamaño de bloque de 8 mientras que los bloques de la tabla guardan 4 tokens."},

    # --- the checker's concepts (kvviz.dumps.check.CONCEPTS) ---------------------------------------------
    "concept.mirror": {"en": "CPU table and device mirror", "zh": "CPU 表与设备镜像",
                       "es": "Tabla de CPU y copia en el dispositivo"},
    "concept_text.mirror": {
        "en": "Rows are edited on the CPU and copied to the GPU by one commit per step, of the first num_reqs rows.",
        "zh": "行在 CPU 上修改，每步通过一次提交把前 num_reqs 行复制到 GPU。",
        "es": "Las filas se editan en la CPU y se copian a la GPU con una confirmación por paso, de las primeras "
              "num_reqs filas."},
    "concept.slot-mapping": {"en": "Slot mapping", "zh": "slot 映射", "es": "Mapeo de slots"},
    "concept_text.slot-mapping": {
        "en": "The token at position p of row r goes to slot block_table[r, p // B] * B + p % B; padding tokens "
              "get -1.",
        "zh": "第 r 行位置 p 的 token 写入 slot block_table[r, p // B] * B + p % B；填充 token 得到 -1。",
        "es": "El token en la posición p de la fila r va al slot block_table[r, p // B] * B + p % B; los tokens de "
              "relleno reciben -1."},
    "concept.padding": {"en": "CUDA-graph padding", "zh": "CUDA graph 填充", "es": "Relleno de CUDA graphs"},
    "concept_text.padding": {
        "en": "Padded tokens get slot -1 (never written) and padded request rows are all block 0 (always safe to "
              "read).",
        "zh": "填充 token 的 slot 为 -1（从不写入），填充的请求行全部是块 0（读取总是安全的）。",
        "es": "Los tokens de relleno reciben el slot -1 (nunca se escribe) y las filas de relleno son todo bloque 0 "
              "(siempre seguro de leer)."},
    "concept.block-pool": {"en": "The block pool", "zh": "块池", "es": "El pool de bloques"},
    "concept_text.block-pool": {
        "en": "Blocks 1..N-1 are handed out, block 0 is the null block, each block's ref count is the number of "
              "requests holding it, and free blocks sit in the free queue.",
        "zh": "分配的是块 1..N-1，块 0 是空块；每个块的引用计数等于持有它的请求数，空闲块在空闲队列中。",
        "es": "Se reparten los bloques 1..N-1, el bloque 0 es el bloque nulo, el contador de referencias de cada "
              "bloque es el número de peticiones que lo tienen, y los bloques libres están en la cola libre."},
    "concept.allocation": {"en": "Allocation", "zh": "分配", "es": "Asignación"},
    "concept_text.allocation": {
        "en": "A request of S tokens holds ceil(S / B) blocks, each listed once, in the first num_blocks_per_row "
              "entries of its row.",
        "zh": "S 个 token 的请求持有 ceil(S / B) 个块，每块只列一次，位于其行的前 num_blocks_per_row 项。",
        "es": "Una petición de S tokens tiene ceil(S / B) bloques, cada uno listado una vez, en las primeras "
              "num_blocks_per_row entradas de su fila."},
    "concept.prefix-sharing": {"en": "Prefix sharing and copy-on-write", "zh": "前缀共享与写时复制",
                               "es": "Prefijos compartidos y copia en escritura"},
    "concept_text.prefix-sharing": {
        "en": "Only full blocks may be shared; a forked request gets its own copy of the partially filled last "
              "block.",
        "zh": "只有写满的块才能共享；fork 出的请求会得到未写满的最后一块的私有副本。",
        "es": "Solo se pueden compartir bloques llenos; una petición bifurcada recibe su propia copia del último "
              "bloque a medio llenar."},
    "concept.flashinfer-csr": {"en": "FlashInfer's CSR page table", "zh": "FlashInfer 的 CSR 页表",
                               "es": "La tabla de páginas CSR de FlashInfer"},
    "concept_text.flashinfer-csr": {
        "en": "paged_kv_indptr is the running total of pages, paged_kv_indices the rows' block prefixes, "
              "paged_kv_last_page_len the fill of each last page.",
        "zh": "paged_kv_indptr 是页数的累计和，paged_kv_indices 是各行块前缀的拼接，paged_kv_last_page_len "
              "是每行最后一页的填充量。",
        "es": "paged_kv_indptr es el total acumulado de páginas, paged_kv_indices los prefijos de bloques de las "
              "filas y paged_kv_last_page_len el llenado de cada última página."},
    "concept.runner-v2": {"en": "Model Runner V2's request states and gather",
                          "zh": "Model Runner V2 的请求状态与收集",
                          "es": "Estados de petición y reunión de Model Runner V2"},
    "concept_text.runner-v2": {
        "en": "Block ids live in request-state rows (by state index); each step gathers the scheduled rows in "
              "batch order through idx_mapping into the input table, zeroing the padded rows.",
        "zh": "块 id 存放在请求状态行中（按状态索引）；每一步通过 idx_mapping 按批次顺序把被调度的行收集到输入表，"
              "并把填充行清零。",
        "es": "Los ids de bloque viven en filas de estado de petición (por índice de estado); cada paso reúne las "
              "filas planificadas en el orden del lote a través de idx_mapping en la tabla de entrada, poniendo a 0 "
              "las filas de relleno."},
    "check.v2-idx-mapping": {"en": "idx_mapping is wrong", "zh": "idx_mapping 有误", "es": "idx_mapping es incorrecto"},
    "explain.v2-idx-mapping": {
        "en": "Model Runner V2: each live batch row names the request-state row it is gathered from. The index "
              "must name a state row, no two batch rows may name the same one, and a row with tokens must name "
              "a state that holds blocks.",
        "zh": "Model Runner V2：每个活跃批次行都指明它从哪个请求状态行收集。该索引必须指向一个状态行，两个批次行"
              "不能指向同一个，且有 token 的行必须指向持有块的状态。",
        "es": "Model Runner V2: cada fila viva del lote nombra la fila de estado de la que se reúne. El índice debe "
              "nombrar una fila de estado, dos filas del lote no pueden nombrar la misma y una fila con tokens debe "
              "nombrar un estado que tenga bloques."},
    "check.v2-gather": {"en": "Gathered row differs from its state row", "zh": "收集的行与其状态行不同",
                        "es": "La fila reunida difiere de su fila de estado"},
    "explain.v2-gather": {
        "en": "Model Runner V2: a live row of the input table must equal the first state_num_blocks entries of "
              "the state row idx_mapping names; otherwise the gather ran before the state row was written, or "
              "not at all this step, and the kernel reads old block ids. (Entries past the count are left from "
              "earlier steps and never read.)",
        "zh": "Model Runner V2：输入表的活跃行必须等于 idx_mapping 所指状态行的前 state_num_blocks 个条目；否则说明"
              "收集发生在状态行写入之前，或这一步根本没有收集，内核读到旧的块 id。（计数之后的条目是之前步骤留下的，"
              "从不被读取。）",
        "es": "Model Runner V2: una fila viva de la tabla de entrada debe ser igual a las primeras state_num_blocks "
              "entradas de la fila de estado que nombra idx_mapping; si no, la reunión se hizo antes de escribir la "
              "fila de estado, o no se hizo en este paso, y el kernel lee ids de bloque viejos. (Las entradas "
              "después de la cuenta quedan de pasos anteriores y nunca se leen.)"},
    "check.v2-pad-row": {"en": "Padded row of the gathered table is not all 0", "zh": "收集表的填充行不全为 0",
                         "es": "Una fila de relleno de la tabla reunida no es todo 0"},
    "explain.v2-pad-row": {
        "en": "Model Runner V2's gather zeroes the rows from num_reqs to num_reqs_padded every step; CUDA-graph "
              "replays read them, so a stale id there lets a padding request touch a real block.",
        "zh": "Model Runner V2 的收集每步都把 num_reqs 到 num_reqs_padded 的行清零；CUDA graph 重放会读取它们，"
              "所以那里残留的 id 会让填充请求碰到真实的块。",
        "es": "La reunión de Model Runner V2 pone a 0 las filas de num_reqs a num_reqs_padded en cada paso; las "
              "repeticiones del CUDA graph las leen, así que un id viejo ahí deja que una petición de relleno toque "
              "un bloque real."},

    # --- the checks (kvviz.dumps.check.CHECKS): title and explanation ------------------------------------
    "check.mirror-stale": {"en": "Device mirror is stale", "zh": "设备镜像已过期",
                           "es": "La copia del dispositivo está obsoleta"},
    "explain.mirror-stale": {
        "en": "The device copy of a live row differs from the CPU table inside the row's counted blocks: the row "
              "was changed after the last commit, or the commit copied too few rows, so the attention kernel "
              "reads an old version of the row.",
        "zh": "活跃行的设备副本在其计入的块范围内与 CPU 表不同：该行在上次提交后被修改，或提交复制的行太少，"
              "于是注意力内核读到的是该行的旧版本。",
        "es": "La copia en el dispositivo de una fila viva difiere de la tabla de CPU dentro de sus bloques "
              "contados: la fila cambió tras la última confirmación, o la confirmación copió muy pocas filas, así "
              "que el kernel de atención lee una versión antigua de la fila."},
    "check.block-out-of-range": {"en": "Block id outside the pool", "zh": "块 id 超出块池",
                                 "es": "Id de bloque fuera del pool"},
    "explain.block-out-of-range": {
        "en": "A counted entry (or a free-list entry) is negative or not below num_blocks: the kernel would read "
              "or write memory that belongs to no block.",
        "zh": "某个计入的表项（或空闲列表项）为负数或不小于 num_blocks：内核会读写不属于任何块的内存。",
        "es": "Una entrada contada (o de la lista libre) es negativa o no es menor que num_blocks: el kernel "
              "leería o escribiría memoria que no pertenece a ningún bloque."},
    "check.null-in-live-row": {"en": "Null block in a live row", "zh": "活跃行中出现空块",
                               "es": "Bloque nulo en una fila viva"},
    "explain.null-in-live-row": {
        "en": "Block 0 is the null block used for padding. A live request must not have it among its counted "
              "blocks (sliding-window rows may, for blocks that fell out of the window).",
        "zh": "块 0 是用于填充的空块。活跃请求计入的块中不得出现它（滑动窗口的行可以，用于已滑出窗口的块）。",
        "es": "El bloque 0 es el bloque nulo del relleno. Una petición viva no debe tenerlo entre sus bloques "
              "contados (las filas de ventana deslizante sí, para bloques que salieron de la ventana)."},
    "check.duplicate-block-in-row": {"en": "Block listed twice in one row", "zh": "同一行中块重复出现",
                                     "es": "Bloque repetido en una fila"},
    "explain.duplicate-block-in-row": {
        "en": "Each of a request's blocks holds a different range of its tokens, so a block id may appear only "
              "once in a row's counted prefix.",
        "zh": "请求的每个块保存其 token 的不同区间，因此一个块 id 在行的计入前缀中只能出现一次。",
        "es": "Cada bloque de una petición guarda un rango distinto de sus tokens, así que un id de bloque solo "
              "puede aparecer una vez en el prefijo contado de una fila."},
    "check.too-few-blocks": {"en": "Row holds too few blocks", "zh": "行中的块太少",
                             "es": "La fila tiene muy pocos bloques"},
    "explain.too-few-blocks": {
        "en": "A request with S tokens needs ceil(S / B) blocks; with fewer, its last tokens have nowhere to live "
              "and the kernel reads past the row's counted prefix. (A state group holds one state block per "
              "request instead.)",
        "zh": "S 个 token 的请求需要 ceil(S / B) 个块；块不够时，最后的 token 无处存放，内核会读到计入前缀之外。"
              "（状态组则为每个请求保存一个状态块。）",
        "es": "Una petición con S tokens necesita ceil(S / B) bloques; con menos, sus últimos tokens no tienen "
              "dónde vivir y el kernel lee más allá del prefijo contado de la fila. (Un grupo de estado guarda en "
              "cambio un bloque de estado por petición.)"},
    "check.freed-block-in-use": {"en": "Freed block still in use", "zh": "已释放的块仍在使用",
                                 "es": "Bloque liberado aún en uso"},
    "explain.freed-block-in-use": {
        "en": "A block a live row counts is on the free list or has ref count 0, so the pool may hand it to "
              "another request, which would overwrite this one's keys and values.",
        "zh": "活跃行计入的某个块在空闲列表中或引用计数为 0，块池可能把它分给另一个请求，从而覆盖本请求的 K 和 V。",
        "es": "Un bloque que cuenta una fila viva está en la lista libre o tiene 0 referencias, así que el pool "
              "puede dárselo a otra petición, que sobrescribiría las claves y valores de esta."},
    "check.shared-partial-block": {"en": "Partially filled block is shared", "zh": "未写满的块被共享",
                                   "es": "Se comparte un bloque a medio llenar"},
    "explain.shared-partial-block": {
        "en": "Two live rows hold the same block and it is the partially filled last block of one of them: the "
              "next token of one request overwrites the other's. It needs copy-on-write.",
        "zh": "两个活跃行持有同一块，而它是其中一行未写满的最后一块：一个请求的下一个 token 会覆盖另一个的。需要写时复制。",
        "es": "Dos filas vivas tienen el mismo bloque y es el último bloque a medio llenar de una de ellas: el "
              "siguiente token de una petición sobrescribe el de la otra. Hace falta copia en escritura."},
    "check.slot-mismatch": {"en": "Slot does not match the table", "zh": "slot 与表不符",
                            "es": "El slot no coincide con la tabla"},
    "explain.slot-mismatch": {
        "en": "A real token's slot differs from block_table[row, pos // B] * B + pos % B computed from the CPU "
              "table, so its key and value are written to the wrong place.",
        "zh": "某个真实 token 的 slot 与根据 CPU 表计算的 block_table[row, pos // B] * B + pos % B 不同，"
              "其 K 和 V 会被写到错误的位置。",
        "es": "El slot de un token real difiere de block_table[row, pos // B] * B + pos % B calculado con la "
              "tabla de CPU, así que su clave y su valor se escriben en el lugar equivocado."},
    "check.pad-slot": {"en": "Padding token has a real slot", "zh": "填充 token 有真实的 slot",
                       "es": "Un token de relleno tiene un slot real"},
    "explain.pad-slot": {
        "en": "Slots after the last real token must be -1 so the KV write skips them; any other value makes a "
              "padding token overwrite a real slot.",
        "zh": "最后一个真实 token 之后的 slot 必须为 -1，KV 写入才会跳过它们；其他任何值都会让填充 token 覆盖真实 slot。",
        "es": "Los slots tras el último token real deben ser -1 para que la escritura de KV los omita; cualquier "
              "otro valor hace que un token de relleno sobrescriba un slot real."},
    "check.stale-tail": {"en": "Entry past a row's count is not 0", "zh": "行计数之外的条目不为 0",
                         "es": "Una entrada tras la cuenta de la fila no es 0"},
    "explain.stale-tail": {
        "en": "From v0.27.0 vLLM zeroes every entry a row stops counting (clear_row on removal, move_row's source "
              "in condense), so entries past a row's count are 0. An old block id there is a row that was reused "
              "or moved without clearing its tail (vllm#39589): a reader of the whole row, such as a page copy "
              "that trusts another length, hands another request's blocks to the kernel.",
        "zh": "自 v0.27.0 起，vLLM 会把一行不再计入的每个条目清零（移除请求时的 clear_row，condense 中 move_row 的源行），"
              "所以行计数之外的条目都是 0。那里若留有旧的块 id，说明这一行被复用或移动时没有清空尾部（vllm#39589）："
              "任何读取整行的代码（例如相信另一个长度的页复制）都会把别的请求的块交给内核。",
        "es": "Desde v0.27.0 vLLM pone a 0 cada entrada que una fila deja de contar (clear_row al quitar una "
              "petición, la fila de origen de move_row en condense), así que las entradas tras la cuenta de una "
              "fila son 0. Un id antiguo ahí es una fila reutilizada o movida sin limpiar su cola (vllm#39589): "
              "quien lea la fila entera, como una copia de páginas que confía en otra longitud, entrega al kernel "
              "los bloques de otra petición."},
    "check.pad-row": {"en": "Padded row is not all 0", "zh": "填充行不全为 0", "es": "La fila de relleno no es todo 0"},
    "explain.pad-row": {
        "en": "Rows from num_reqs to num_reqs_padded are read by CUDA-graph replays and must point only at the "
              "null block 0; a stale id there lets a dummy request read or write a real block. From v0.27.0, "
              "every row past num_reqs must also count 0 blocks: remove_request and condense's move_row clear the "
              "row they vacate (remove_request from v0.19.0, move_row from v0.27.0).",
        "zh": "从 num_reqs 到 num_reqs_padded 的行会被 CUDA graph 重放读取，只能指向空块 0；其中若有过期 id，"
              "虚拟请求就会读写真实的块。自 v0.27.0 起，vLLM 中 num_reqs 之后的每一行还必须计入 0 个块："
              "remove_request 和 condense 的 move_row 会清空它们腾出的行（remove_request 自 v0.19.0 起，move_row 自 v0.27.0 起）。",
        "es": "Las filas de num_reqs a num_reqs_padded las leen las repeticiones de CUDA graphs y solo deben "
              "apuntar al bloque nulo 0; un id obsoleto ahí permite que una petición ficticia lea o escriba un "
              "bloque real. Desde v0.27.0, en vLLM toda fila a partir de num_reqs debe además contar 0 bloques: "
              "remove_request y el move_row de condense limpian la fila que vacían (remove_request desde v0.19.0, move_row desde v0.27.0)."},
    "check.csr-indptr": {"en": "FlashInfer indptr is wrong", "zh": "FlashInfer 的 indptr 错误",
                         "es": "El indptr de FlashInfer es erróneo"},
    "explain.csr-indptr": {
        "en": "paged_kv_indptr must start at 0 and grow by ceil(seq_len / page_size) per row.",
        "zh": "paged_kv_indptr 必须从 0 开始，每行增加 ceil(seq_len / page_size)。",
        "es": "paged_kv_indptr debe empezar en 0 y crecer ceil(seq_len / page_size) por fila."},
    "check.csr-indices": {"en": "FlashInfer page indices are wrong", "zh": "FlashInfer 的页索引错误",
                          "es": "Los índices de página de FlashInfer son erróneos"},
    "explain.csr-indices": {
        "en": "Row r's slice of paged_kv_indices must equal the first ceil(seq_len / page_size) entries of row r "
              "of the block table.",
        "zh": "第 r 行在 paged_kv_indices 中的切片必须等于块表第 r 行的前 ceil(seq_len / page_size) 项。",
        "es": "El tramo de la fila r en paged_kv_indices debe ser igual a las primeras ceil(seq_len / page_size) "
              "entradas de la fila r de la tabla de bloques."},
    "check.csr-last-page-len": {"en": "FlashInfer last_page_len is wrong", "zh": "FlashInfer 的 last_page_len 错误",
                                "es": "El last_page_len de FlashInfer es erróneo"},
    "explain.csr-last-page-len": {
        "en": "The last page holds seq_len % page_size tokens, except that a full last page counts as page_size "
              "and an empty row as 0.",
        "zh": "最后一页保存 seq_len % page_size 个 token；但最后一页写满时记为 page_size，空行记为 0。",
        "es": "La última página guarda seq_len % page_size tokens, salvo que una última página llena cuenta como "
              "page_size y una fila vacía como 0."},
    "check.kernel-table": {"en": "Kernel-block table differs from the release's rule", "zh": "内核块表与该版本的规则不符",
                           "es": "La tabla de bloques del kernel no sigue la regla de la versión"},
    "explain.kernel-table": {
        "en": "With kernel blocks smaller than the KV-manager blocks, the attention backend reads kernel blocks: "
              "manager block b stands for r*b .. r*b+r-1. From vLLM v0.32.0 the persistent table holds manager "
              "ids and each attention group writes r*b+j for every column of every row it is given, so unused "
              "columns and padded rows read 0, 1, .., r-1; before, the table itself held kernel ids, expanded "
              "at append, and unused entries and padded rows stay 0 (the release's padding fill).",
        "zh": "当内核块小于 KV 管理器的块时，注意力后端读取的是内核块：管理器块 b 对应 r*b .. r*b+r-1。从 vLLM "
              "v0.32.0 起，持久块表保存管理器块 id，每个注意力组对传入的每一行的每一列写入 r*b+j，因此未使用的列和"
              "填充行读到 0, 1, .., r-1；在此之前，块表本身在追加时展开为内核块 id，未使用的条目和填充行保持为 0"
              "（该版本的填充值）。",
        "es": "Con bloques del kernel menores que los del gestor de KV, el backend de atención lee bloques del kernel: "
              "el bloque b del gestor representa r*b .. r*b+r-1. Desde vLLM v0.32.0 la tabla persistente guarda ids "
              "del gestor y cada grupo de atención escribe r*b+j en todas las columnas de cada fila que recibe, así "
              "que las columnas sin usar y las filas de relleno leen 0, 1, .., r-1; antes la tabla misma guardaba "
              "ids del kernel, expandidos al añadir, y las entradas sin usar y las filas de relleno quedan en 0 "
              "(el relleno de la versión)."},
    "check.refcount-mismatch": {"en": "Ref count differs from the holders", "zh": "引用计数与持有者数不符",
                                "es": "Las referencias no coinciden con los poseedores"},
    "explain.refcount-mismatch": {
        "en": "A block's ref count must equal the number of live rows holding it (block 0's is not kept). "
              "Assumes every running request is in this batch.",
        "zh": "块的引用计数必须等于持有它的活跃行数（块 0 不计）。前提是所有运行中的请求都在本批次中。",
        "es": "El contador de referencias de un bloque debe ser igual al número de filas vivas que lo tienen (el "
              "del bloque 0 no se lleva). Supone que toda petición en ejecución está en este lote."},
    "check.free-list-duplicate": {"en": "Free list repeats a block", "zh": "空闲列表中块重复",
                                  "es": "La lista libre repite un bloque"},
    "explain.free-list-duplicate": {
        "en": "Each free block is in the free queue once, and the null block 0 never is; otherwise two requests "
              "can be handed the same block.",
        "zh": "每个空闲块在空闲队列中只出现一次，空块 0 从不出现；否则两个请求可能分到同一个块。",
        "es": "Cada bloque libre está una sola vez en la cola libre, y el bloque nulo 0 nunca; si no, dos "
              "peticiones pueden recibir el mismo bloque."},
}
