"""The checker's per-finding messages (kvviz/dumps/checks_*.py, rendered by kvviz/dumps/catalogue.py)
in the three languages.

``message`` of a Finding is the "en" template filled in, exactly what ``python -m kvviz check`` prints,
so the English templates must not change. A ``{placeholder}`` that names a clause (``{more}``, ``{why}``,
``{kernel}``, ``{others}``, ``{named}``, ``{holders}``) is filled with another template of this table in
the same language, or with "" when the clause is left out. Technical identifiers (block_table,
slot_mapping, paged_kv_*, CUDA graph, DCP, KV, ceil) and numbers stay as they are.
"""
STRINGS = {
    # --- optional clauses ----------------------------------------------------------------------------
    "more.entries": {"en": " ({n} more such entries in this row)",
                     "zh": "（该行另有 {n} 个这样的条目）",
                     "es": " (y {n} entradas más así en esta fila)"},
    "more.tokens": {"en": " ({n} more such tokens in this row)",
                    "zh": "（该行另有 {n} 个这样的 token）",
                    "es": " (y {n} tokens más así en esta fila)"},
    "more.pages": {"en": " ({n} more such pages in this row)",
                   "zh": "（该行另有 {n} 个这样的页）",
                   "es": " (y {n} páginas más así en esta fila)"},
    "more.repeats": {"en": " ({n} more such repeats in this row)",
                     "zh": "（该行另有 {n} 处这样的重复）",
                     "es": " (y {n} repeticiones más así en esta fila)"},
    "truncated.rows": {"en": "{n} more rows fail this check as well; only the first {limit} are listed.",
                       "zh": "另有 {n} 行也未通过此检查；只列出前 {limit} 行。",
                       "es": "Otras {n} filas tampoco pasan esta comprobación; solo se muestran las "
                             "{limit} primeras."},
    "truncated.blocks": {"en": "{n} more blocks fail this check as well; only the first {limit} are listed.",
                         "zh": "另有 {n} 个块也未通过此检查；只列出前 {limit} 个。",
                         "es": "Otros {n} bloques tampoco pasan esta comprobación; solo se muestran los "
                               "{limit} primeros."},
    "truncated.free_entries": {"en": "{n} more free-list entries fail this check as well; only the first "
                                     "{limit} are listed.",
                               "zh": "空闲列表中另有 {n} 个条目也未通过此检查；只列出前 {limit} 个。",
                               "es": "Otras {n} entradas de la lista libre tampoco pasan esta comprobación; "
                                     "solo se muestran las {limit} primeras."},
    "truncated.entries": {"en": "{n} more entries fail this check as well; only the first {limit} are listed.",
                          "zh": "另有 {n} 个条目也未通过此检查；只列出前 {limit} 个。",
                          "es": "Otras {n} entradas tampoco pasan esta comprobación; solo se muestran las "
                                "{limit} primeras."},
    # --- mirror-stale ----------------------------------------------------------------------------------
    "v2-idx-mapping.range": {
        "en": "idx_mapping gives row {r} request state {s}, but the state rows are 0 .. {last}.",
        "zh": "idx_mapping 给第 {r} 行的请求状态是 {s}，但状态行只有 0 .. {last}。",
        "es": "idx_mapping da a la fila {r} el estado de petición {s}, pero las filas de estado son 0 .. {last}."},
    "v2-idx-mapping.duplicate": {
        "en": "idx_mapping gives row {r} request state {s}, which row {first} already has; two batch rows "
              "would read one request's blocks.",
        "zh": "idx_mapping 给第 {r} 行的请求状态是 {s}，而第 {first} 行已经用了它；两个批次行会读同一个请求的块。",
        "es": "idx_mapping da a la fila {r} el estado de petición {s}, que ya tiene la fila {first}; dos filas "
              "del lote leerían los bloques de una misma petición."},
    "v2-idx-mapping.empty": {
        "en": "idx_mapping gives row {r} request state {s}, which holds no block, but the row has {t} tokens: "
              "the state is freed or was never written.",
        "zh": "idx_mapping 给第 {r} 行的请求状态是 {s}，该状态没有任何块，但这一行有 {t} 个 token：该状态已被释放或从未写入。",
        "es": "idx_mapping da a la fila {r} el estado de petición {s}, que no tiene ningún bloque, pero la fila "
              "tiene {t} tokens: el estado está liberado o nunca se escribió."},
    "v2-gather": {
        "en": "Row {r} column {c} of the gathered input table is block {got}, but request state {s} (its "
              "idx_mapping entry, {n} block(s)) has block {want} there, so the kernel reads an old row; the "
              "gather ran before the state row was written, or not at all{more}.",
        "zh": "收集后的输入表第 {r} 行第 {c} 列是块 {got}，但请求状态 {s}（其 idx_mapping 条目，{n} 个块）在该处是块 "
              "{want}，因此内核读到的是旧行：收集发生在状态行写入之前，或根本没有执行{more}。",
        "es": "La fila {r}, columna {c}, de la tabla de entrada reunida es el bloque {got}, pero el estado de "
              "petición {s} (su entrada de idx_mapping, {n} bloque(s)) tiene ahí el bloque {want}, así que el "
              "kernel lee una fila vieja; la reunión se hizo antes de escribir la fila de estado, o no se hizo{more}."},
    "v2-pad-row": {
        "en": "Padded row {r} of the gathered input table holds {b} at column {c}; the gather zeroes padded "
              "rows every step, so a padded row must be all 0{more}.",
        "zh": "收集后的输入表的填充行 {r} 在第 {c} 列存放了 {b}；收集每步都会把填充行清零，所以填充行必须全为 0{more}。",
        "es": "La fila de relleno {r} de la tabla de entrada reunida contiene {b} en la columna {c}; la reunión "
              "pone a 0 las filas de relleno en cada paso, así que una fila de relleno debe ser todo 0{more}."},
    "mirror-stale": {
        "en": "Row {r} column {c} is block {dev} on the device but block {cpu} in the CPU table, so the kernel "
              "reads an old copy of the row; the row changed after the last commit or the commit skipped "
              "it{more}.",
        "zh": "第 {r} 行第 {c} 列在设备上是块 {dev}，而在 CPU 表中是块 {cpu}，因此内核读到的是这一行的旧副本："
              "要么这一行在上次提交之后被修改过，要么提交时漏掉了它{more}。",
        "es": "La fila {r}, columna {c}, es el bloque {dev} en el dispositivo pero el bloque {cpu} en la tabla "
              "de la CPU, así que el kernel lee una copia antigua de la fila: la fila cambió después del último "
              "commit o el commit se la saltó{more}."},
    # --- block-out-of-range ----------------------------------------------------------------------------
    "block-out-of-range.row": {
        "en": "Row {r} column {c} holds block {b}, but the pool only has blocks 0 to {last}{more}.",
        "zh": "第 {r} 行第 {c} 列存放的是块 {b}，但块池只有块 0 到 {last}{more}。",
        "es": "La fila {r}, columna {c}, contiene el bloque {b}, pero el pool solo tiene los bloques 0 a "
              "{last}{more}."},
    "block-out-of-range.free": {
        "en": "Free-list entry {i} is block {b}, but the pool only has blocks 0 to {last}.",
        "zh": "空闲列表的第 {i} 个条目是块 {b}，但块池只有块 0 到 {last}。",
        "es": "La entrada {i} de la lista libre es el bloque {b}, pero el pool solo tiene los bloques 0 a "
              "{last}."},
    # --- null-in-live-row ------------------------------------------------------------------------------
    "null-in-live-row": {
        "en": "Row {r} column {c} is the null block 0, inside the {n} blocks the live request counts, so its "
              "tokens there point at the padding block{more}.",
        "zh": "第 {r} 行第 {c} 列是空块 0，却位于该活跃请求计入的 {n} 个块之内，因此它在这里的 token 指向了"
              "填充块{more}。",
        "es": "La fila {r}, columna {c}, es el bloque nulo 0, dentro de los {n} bloques que cuenta la petición "
              "viva, así que sus tokens ahí apuntan al bloque de relleno{more}."},
    # --- too-few-blocks --------------------------------------------------------------------------------
    "too-few-blocks": {
        "en": "Row {r} counts {c} block(s), but its {s} tokens need ceil({s} / {span}) = {need} block(s) of "
              "{span} tokens{kernel}.",
        "zh": "第 {r} 行只计入 {c} 个块，但它的 {s} 个 token 需要 ceil({s} / {span}) = {need} 个"
              "每块 {span} 个 token 的块{kernel}。",
        "es": "La fila {r} cuenta {c} bloque(s), pero sus {s} tokens necesitan ceil({s} / {span}) = {need} "
              "bloque(s) de {span} tokens{kernel}."},
    "too-few-blocks.state": {
        "en": "Row {r} counts {c} block(s), but it is a request of {s} tokens in a state group, which holds "
              "one state block per request.",
        "zh": "第 {r} 行只计入 {c} 个块，但它是状态组中一个有 {s} 个 token 的请求，状态组为每个请求保存一个状态块。",
        "es": "La fila {r} cuenta {c} bloque(s), pero es una petición de {s} tokens en un grupo de estado, que "
              "guarda un bloque de estado por petición."},
    "too-few-blocks.kernel": {"en": " ({n} kernel blocks)", "zh": "（即 {n} 个内核块）",
                              "es": " ({n} bloques del kernel)"},
    # --- duplicate-block-in-row ------------------------------------------------------------------------
    "duplicate-block-in-row": {
        "en": "Row {r} lists block {b} twice (columns {c1} and {c2}), so two different ranges of the "
              "request's tokens would share one block's memory{more}.",
        "zh": "第 {r} 行把块 {b} 列了两次（第 {c1} 列和第 {c2} 列），于是该请求两段不同的 token "
              "会共用同一个块的内存{more}。",
        "es": "La fila {r} lista el bloque {b} dos veces (columnas {c1} y {c2}), así que dos tramos distintos "
              "de los tokens de la petición compartirían la memoria de un mismo bloque{more}."},
    # --- freed-block-in-use ----------------------------------------------------------------------------
    "freed-block-in-use": {
        "en": "Row {r} column {c} uses block {b}, which the pool {why}, so it can be handed to another request "
              "that overwrites this one's KV{more}.",
        "zh": "第 {r} 行第 {c} 列使用块 {b}，而在块池中它{why}，所以它可能被分给另一个请求，"
              "覆盖掉这个请求的 KV{more}。",
        "es": "La fila {r}, columna {c}, usa el bloque {b}, pero en el pool {why}, así que puede entregarse a otra "
              "petición que sobrescriba el KV de esta{more}."},
    "freed-block-in-use.why_free": {
        "en": "lists as free (free-list position {pos})",
        "zh": "被列为空闲（空闲列表位置 {pos}）",
        "es": "figura como libre (posición {pos} de la lista libre)"},
    "freed-block-in-use.why_ref": {
        "en": "gives ref count 0",
        "zh": "的引用计数为 0",
        "es": "tiene contador de referencias 0"},
    "freed-block-in-use.why_freeref": {
        "en": "lists as free (free-list position {pos}) and gives ref count 0",
        "zh": "被列为空闲（空闲列表位置 {pos}），且引用计数为 0",
        "es": "figura como libre (posición {pos} de la lista libre) y tiene contador de referencias 0"},
    # --- kernel-table ----------------------------------------------------------------------------------
    "kernel-table.mapped": {
        "en": "kernel_block_table[{r}, {c}] is {got}, not {exp}: under vLLM {profile} the attention group writes "
              "{k}*b+j for every column of every row it is given (padded rows and unused columns read 0..{last} "
              "repeated){more}.",
        "zh": "kernel_block_table[{r}, {c}] 是 {got} 而不是 {exp}：在 vLLM {profile} 下，注意力组对传入的每一行的"
              "每一列写入 {k}*b+j（填充行和未使用的列读到重复的 0..{last}）{more}。",
        "es": "kernel_block_table[{r}, {c}] vale {got}, no {exp}: en vLLM {profile} el grupo de atención escribe "
              "{k}*b+j en todas las columnas de cada fila que recibe (las filas de relleno y las columnas sin usar "
              "leen 0..{last} repetido){more}."},
    "kernel-table.expanded": {
        "en": "kernel_block_table[{r}, {c}] is {got}, not {exp}: under vLLM {profile} the backend reads the "
              "persistent table, expanded to kernel blocks at append, so unused entries and padded rows keep "
              "the release's fill (the 0..{last} pattern is v0.32.0's rule){more}.",
        "zh": "kernel_block_table[{r}, {c}] 是 {got} 而不是 {exp}：在 vLLM {profile} 下，后端读取的是追加时已展开为"
              "内核块的持久块表，未使用的条目和填充行保持该版本的填充值（0..{last} 的模式是 v0.32.0 的规则）{more}。",
        "es": "kernel_block_table[{r}, {c}] vale {got}, no {exp}: en vLLM {profile} el backend lee la tabla "
              "persistente, expandida a bloques del kernel al añadir, así que las entradas sin usar y las filas de "
              "relleno conservan el relleno de la versión (el patrón 0..{last} es la regla de v0.32.0){more}."},
    # --- refcount-mismatch -----------------------------------------------------------------------------
    "refcount-mismatch.leak": {
        "en": "Block {b} has ref count {rc} but {holders} it; a reference leaked, or a request holding it is "
              "not in this batch.",
        "zh": "块 {b} 的引用计数是 {rc}，但{holders}它；要么有引用泄漏了，要么持有它的某个请求不在这个批次中。",
        "es": "El bloque {b} tiene contador de referencias {rc}, pero {holders}; se perdió una referencia, o "
              "una petición que lo tiene no está en este lote."},
    "refcount-mismatch.early": {
        "en": "Block {b} has ref count {rc} but {holders} it; the pool could free it while a row still reads it.",
        "zh": "块 {b} 的引用计数是 {rc}，但{holders}它；块池可能在仍有行读取它时就把它释放掉。",
        "es": "El bloque {b} tiene contador de referencias {rc}, pero {holders}; el pool podría liberarlo "
              "mientras una fila todavía lo lee."},
    "live_rows_hold.one": {"en": "{n} live row holds", "zh": "有 {n} 个活跃行持有",
                           "es": "{n} fila viva lo tiene"},
    "live_rows_hold.many": {"en": "{n} live rows hold", "zh": "有 {n} 个活跃行持有",
                            "es": "{n} filas vivas lo tienen"},
    # --- shared-partial-block --------------------------------------------------------------------------
    "shared-partial-block": {
        "en": "Row {r}'s last block {b} holds only {fill} of {span} tokens yet {others} it too, so the next "
              "token of either request overwrites the other's; it needed a private copy (copy-on-write).",
        "zh": "第 {r} 行的最后一个块 {b} 只装了 {span} 个 token 中的 {fill} 个，但{others}它，"
              "因此任一请求的下一个 token 都会覆盖另一个请求的数据；它本应得到一份私有副本（写时复制，copy-on-write）。",
        "es": "El último bloque {b} de la fila {r} solo tiene {fill} de {span} tokens, pero {others}, así que "
              "el siguiente token de cualquiera de las peticiones sobrescribe el de la otra; necesitaba una "
              "copia privada (copy-on-write)."},
    "other_rows_hold.one": {"en": "{n} other live row{named} holds", "zh": "还有 {n} 个其他活跃行{named}也持有",
                            "es": "{n} fila viva más{named} también lo tiene"},
    "other_rows_hold.many": {"en": "{n} other live rows{named} hold", "zh": "还有 {n} 个其他活跃行{named}也持有",
                             "es": "{n} filas vivas más{named} también lo tienen"},
    "shared-partial-block.named": {"en": " (row {rows})", "zh": "（第 {rows} 行）", "es": " (fila {rows})"},
    # --- slot-mismatch ---------------------------------------------------------------------------------
    "slot-mismatch": {
        "en": "Token {i} (row {r}, position {p}) has slot {g}, but row {r}'s table puts position {p} in block "
              "{blk} at offset {off}, which is slot {e}{more}.",
        "zh": "token {i}（第 {r} 行，位置 {p}）的槽位是 {g}，但按第 {r} 行的表，位置 {p} 应在块 {blk} 的"
              "偏移 {off} 处，也就是槽位 {e}{more}。",
        "es": "El token {i} (fila {r}, posición {p}) tiene el slot {g}, pero la tabla de la fila {r} pone la "
              "posición {p} en el bloque {blk} con desplazamiento {off}, que es el slot {e}{more}."},
    "slot-mismatch.outside": {
        "en": "Token {i} (row {r}, position {p}) has slot {g}, but position {p} needs column {col} of a table "
              "only {w} wide{more}.",
        "zh": "token {i}（第 {r} 行，位置 {p}）的槽位是 {g}，但位置 {p} 需要第 {col} 列，而表只有 {w} 列宽{more}。",
        "es": "El token {i} (fila {r}, posición {p}) tiene el slot {g}, pero la posición {p} necesita la "
              "columna {col} de una tabla de solo {w} columnas{more}."},
    "slot-mismatch.other_rank": {
        "en": "Token {i} (row {r}, position {p}) has slot {g}, but another DCP rank stores that position, so it "
              "must be -1{more}.",
        "zh": "token {i}（第 {r} 行，位置 {p}）的槽位是 {g}，但这个位置由另一个 DCP rank 存储，"
              "所以它必须是 -1{more}。",
        "es": "El token {i} (fila {r}, posición {p}) tiene el slot {g}, pero esa posición la guarda otro rank "
              "de DCP, así que debe ser -1{more}."},
    # --- pad-slot --------------------------------------------------------------------------------------
    "pad-slot": {
        "en": "Slot {i} lies after the {t} real tokens but holds {v} instead of -1, so the KV write would "
              "overwrite slot {v} with a padding token's values{more}.",
        "zh": "槽位 {i} 位于 {t} 个真实 token 之后，却存的是 {v} 而不是 -1，因此 KV 写入会用填充 token "
              "的值覆盖槽位 {v}{more}。",
        "es": "El slot {i} está después de los {t} tokens reales pero vale {v} en lugar de -1, así que la "
              "escritura del KV sobrescribiría el slot {v} con los valores de un token de relleno{more}."},
    "pad-slot.more": {"en": " ({n} more padding slots are not -1)",
                      "zh": "（另有 {n} 个填充槽位也不是 -1）",
                      "es": " (otros {n} slots de relleno tampoco son -1)"},
    # --- pad-row ---------------------------------------------------------------------------------------
    "pad-row.nonzero_device": {
        "en": "Padded row {r} holds {b} at column {c} of the device table; padded rows must be all 0 (the null "
              "block) because CUDA-graph replays read them.",
        "zh": "填充行 {r} 在设备表的第 {c} 列存放了 {b}；填充行必须全为 0（空块），因为 CUDA graph 重放会读取它们。",
        "es": "La fila de relleno {r} contiene {b} en la columna {c} de la tabla del dispositivo; las filas de "
              "relleno deben ser todo 0 (el bloque nulo) porque las repeticiones del CUDA graph las leen."},
    "pad-row.fill_device": {
        "en": "Padded row {r} holds {b} at column {c} of the device table; under vLLM {profile} padded rows are "
              "filled with {f} on the device every step (vLLM #28579), so a padded row must be all {f}.",
        "zh": "填充行 {r} 在设备表的第 {c} 列存放了 {b}；在 vLLM {profile} 下，设备端每步都用 {f} 填充填充行"
              "（vLLM #28579），所以填充行必须全为 {f}。",
        "es": "La fila de relleno {r} contiene {b} en la columna {c} de la tabla del dispositivo; en vLLM {profile} "
              "las filas de relleno se llenan con {f} en el dispositivo en cada paso (vLLM #28579), así que una "
              "fila de relleno debe ser todo {f}."},
    "pad-row.nonzero_cpu": {
        "en": "Padded row {r} holds {b} at column {c} of the CPU table; padded rows must be all 0 (the null "
              "block) because CUDA-graph replays read them.",
        "zh": "填充行 {r} 在 CPU 表的第 {c} 列存放了 {b}；填充行必须全为 0（空块），因为 CUDA graph 重放会读取它们。",
        "es": "La fila de relleno {r} contiene {b} en la columna {c} de la tabla de la CPU; las filas de "
              "relleno deben ser todo 0 (el bloque nulo) porque las repeticiones del CUDA graph las leen."},
    "pad-row.not_cleared": {
        "en": "Padded row {r} still counts {n} block(s) in the CPU table (block {b} at column {c}); the vacated "
              "row was not cleared, and a commit of the padded rows (as a dummy run does) hands those ids to "
              "the kernel.",
        "zh": "填充行 {r} 在 CPU 表中仍计入 {n} 个块（第 {c} 列是块 {b}）；这一行腾空后没有清零，"
              "一旦提交填充行（空跑就会这样做），这些块 id 就会交给内核。",
        "es": "La fila de relleno {r} todavía cuenta {n} bloque(s) en la tabla de la CPU (bloque {b} en la "
              "columna {c}); la fila que se vació no se limpió, y un commit de las filas de relleno (como hace "
              "una ejecución dummy) entrega esos ids al kernel."},
    "stale-tail": {
        "en": "Row {r} counts {n} block(s) but holds block {b} at column {c}, past its count{more}; this release "
              "zeroes what a row stops counting, so the row was reused or moved without clearing its old "
              "occupant's tail.",
        "zh": "第 {r} 行计入 {n} 个块，却在计数之外的第 {c} 列存放了块 {b}{more}；这个版本会把一行不再计入的条目清零，"
              "所以这一行被复用或移动时没有清空上一个请求留下的尾部。",
        "es": "La fila {r} cuenta {n} bloque(s) pero guarda el bloque {b} en la columna {c}, tras su cuenta{more}; "
              "esta versión pone a 0 lo que una fila deja de contar, así que la fila se reutilizó o movió sin "
              "limpiar la cola de su ocupante anterior."},
    "pad-row.vacated": {
        "en": "Row {r} is not live (num_reqs is {live}) but still counts {n} block(s) in the CPU table (block {b} "
              "at column {c}); current vLLM clears every row it vacates (clear_row, move_row), and a later "
              "commit that copies this row (a dummy run commits its padded rows) hands those ids to the kernel.",
        "zh": "第 {r} 行不是活跃行（num_reqs 为 {live}），却在 CPU 表中仍计入 {n} 个块（第 {c} 列是块 {b}）；"
              "当前的 vLLM 会清空每一个腾出的行（clear_row、move_row），之后一旦有提交复制这一行"
              "（空跑会提交它的填充行），这些块 id 就会交给内核。",
        "es": "La fila {r} no está viva (num_reqs es {live}) pero todavía cuenta {n} bloque(s) en la tabla de la "
              "CPU (bloque {b} en la columna {c}); el vLLM actual limpia cada fila que vacía (clear_row, "
              "move_row), y un commit posterior que copie esta fila (una ejecución dummy confirma sus filas de "
              "relleno) entrega esos ids al kernel."},
    "pad-row.count_only": {
        "en": "Row {r} is not live (num_reqs is {live}) but num_blocks_per_row[{r}] is still {n}; current vLLM "
              "sets the count of every row it vacates to 0 (clear_row, move_row).",
        "zh": "第 {r} 行不是活跃行（num_reqs 为 {live}），但 num_blocks_per_row[{r}] 仍为 {n}；"
              "当前的 vLLM 会把每一个腾出的行的计数置为 0（clear_row、move_row）。",
        "es": "La fila {r} no está viva (num_reqs es {live}) pero num_blocks_per_row[{r}] sigue siendo {n}; el "
              "vLLM actual pone a 0 la cuenta de cada fila que vacía (clear_row, move_row)."},
    # --- FlashInfer CSR --------------------------------------------------------------------------------
    "csr-last-page-len": {
        "en": "Row {r} has {s} tokens, so its last page holds {exp} (a full page counts as {p}, an empty row as "
              "0), but paged_kv_last_page_len says {got}.",
        "zh": "第 {r} 行有 {s} 个 token，所以它的最后一页装 {exp} 个（满页记为 {p}，空行记为 0），"
              "但 paged_kv_last_page_len 写的是 {got}。",
        "es": "La fila {r} tiene {s} tokens, así que su última página contiene {exp} (una página llena cuenta "
              "como {p} y una fila vacía como 0), pero paged_kv_last_page_len dice {got}."},
    "csr-last-page-len.empty_full": {
        "en": "Row {r} has {s} tokens, so its last page holds {exp} (a full page counts as {p}, and in vLLM "
              "{profile} an empty row does too), but paged_kv_last_page_len says {got}.",
        "zh": "第 {r} 行有 {s} 个 token，所以它的最后一页装 {exp} 个（满页记为 {p}，在 vLLM {profile} 中空行也记为 {p}），"
              "但 paged_kv_last_page_len 写的是 {got}。",
        "es": "La fila {r} tiene {s} tokens, así que su última página contiene {exp} (una página llena cuenta "
              "como {p}, y en vLLM {profile} una fila vacía también), pero paged_kv_last_page_len dice {got}."},
    "csr-last-page-len.padded_one": {
        "en": "Row {r} is a padded row; under vLLM {profile} FlashInfer's padded decode rows carry last_page_len 1 "
              "(vLLM #21367, until #28579 in v0.12.0), but paged_kv_last_page_len says {got}.",
        "zh": "第 {r} 行是填充行；在 vLLM {profile} 下，FlashInfer 的填充 decode 行的 last_page_len 为 1"
              "（vLLM #21367，直到 v0.12.0 的 #28579），但 paged_kv_last_page_len 写的是 {got}。",
        "es": "La fila {r} es de relleno; en vLLM {profile} las filas de decode de relleno de FlashInfer llevan "
              "last_page_len 1 (vLLM #21367, hasta #28579 en v0.12.0), pero paged_kv_last_page_len dice {got}."},
    "csr-indptr.start": {
        "en": "paged_kv_indptr starts at {v}; it must start at 0.",
        "zh": "paged_kv_indptr 从 {v} 开始；它必须从 0 开始。",
        "es": "paged_kv_indptr empieza en {v}; debe empezar en 0."},
    "csr-indptr.past": {
        "en": "paged_kv_indptr gives row {r} pages {a} to {b}, past the {n} entries of paged_kv_indices.",
        "zh": "paged_kv_indptr 给第 {r} 行分配了第 {a} 到 {b} 页，超出了 paged_kv_indices 的 {n} 个条目。",
        "es": "paged_kv_indptr da a la fila {r} las páginas {a} a {b}, más allá de las {n} entradas de "
              "paged_kv_indices."},
    "csr-indptr": {
        "en": "paged_kv_indptr gives row {r} {got} page(s), but its {s} tokens need ceil({s} / {p}) = {need} "
              "page(s).",
        "zh": "paged_kv_indptr 给第 {r} 行 {got} 页，但它的 {s} 个 token 需要 ceil({s} / {p}) = {need} 页。",
        "es": "paged_kv_indptr da a la fila {r} {got} página(s), pero sus {s} tokens necesitan "
              "ceil({s} / {p}) = {need} página(s)."},
    "csr-indices": {
        "en": "paged_kv_indices entry {i} (row {r}, page {c}) is {v}, but row {r} of the block table has block "
              "{b} there{more}.",
        "zh": "paged_kv_indices 的第 {i} 个条目（第 {r} 行，第 {c} 页）是 {v}，但块表第 {r} 行在该处是块 {b}{more}。",
        "es": "La entrada {i} de paged_kv_indices (fila {r}, página {c}) es {v}, pero la fila {r} de la tabla "
              "de bloques tiene ahí el bloque {b}{more}."},
    # --- free list -------------------------------------------------------------------------------------
    "free-list-duplicate.null": {
        "en": "The null block 0 is in the free list at position {i}; it must never be handed out, since padded "
              "rows point at it.",
        "zh": "空块 0 出现在空闲列表的位置 {i}；它绝不能被分配出去，因为填充行都指向它。",
        "es": "El bloque nulo 0 está en la lista libre en la posición {i}; nunca debe entregarse, porque las "
              "filas de relleno apuntan a él."},
    "free-list-duplicate": {
        "en": "Block {b} is in the free list twice (positions {i} and {j}), so two requests could be handed the "
              "same block.",
        "zh": "块 {b} 在空闲列表中出现了两次（位置 {i} 和 {j}），因此两个请求可能被分到同一个块。",
        "es": "El bloque {b} está dos veces en la lista libre (posiciones {i} y {j}), así que dos peticiones "
              "podrían recibir el mismo bloque."},
}
