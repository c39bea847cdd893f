"""FlashInfer CSR page prose."""
STRINGS = {
    "title": {"en": "FlashInfer CSR page table", "zh": "FlashInfer CSR 页表", "es": "Tabla de páginas CSR de FlashInfer"},
    "intro": {"en": "FlashInfer does not read vLLM's 2D block table: it wants the same page ids packed one request "
                    "after another (**CSR**). `indptr[r]..indptr[r+1]` is request r's range in `indices`; "
                    "`last_page_len[r]` says how many entries of its last page are used. A repack kernel builds "
                    "`indices` from the table on the device every step.",
              "zh": "FlashInfer 不读取 vLLM 的二维块表：它需要把同样的页号按请求依次紧凑排列（**CSR**）。"
                    "`indptr[r]..indptr[r+1]` 是请求 r 在 `indices` 中的范围；`last_page_len[r]` 表示其最后一页用了多少项。"
                    "每一步都由一个重排内核在设备上从块表构建 `indices`。",
              "es": "FlashInfer no lee la tabla 2D de vLLM: quiere los mismos ids de página empaquetados una petición "
                    "tras otra (**CSR**). `indptr[r]..indptr[r+1]` es el rango de la petición r en `indices`; "
                    "`last_page_len[r]` dice cuántas entradas de su última página se usan. Un kernel de reempaquetado "
                    "construye `indices` a partir de la tabla en el dispositivo en cada paso."},
    "rules": {"en": "**Full page:** when seq_len is a multiple of the page size, last_page_len is the page size, "
                    "never 0. **Empty request** (seq_len 0, e.g. a CUDA-graph padding row): no pages "
                    "(indptr[r] = indptr[r+1]) and last_page_len 0 — before vLLM #25438 (Nov 2025) it was the page "
                    "size.",
              "zh": "**整页**：当 seq_len 是页大小的整数倍时，last_page_len 等于页大小，而不是 0。**空请求**（seq_len 为 0，"
                    "例如 CUDA graph 填充行）：没有页（indptr[r] = indptr[r+1]），last_page_len 为 0——在 vLLM #25438"
                    "（2025 年 11 月）之前它等于页大小。",
              "es": "**Página llena:** cuando seq_len es múltiplo del tamaño de página, last_page_len es el tamaño "
                    "de página, nunca 0. **Petición vacía** (seq_len 0, p. ej. una fila de relleno de CUDA graph): sin "
                    "páginas (indptr[r] = indptr[r+1]) y last_page_len 0; antes de vLLM #25438 (nov. 2025) era el "
                    "tamaño de página."},
    "source": {"en": "Batch", "zh": "批次", "es": "Lote"},
    "from_batch": {"en": "the batch from the Batch & mapping page", "zh": "来自“批次与映射”页的批次",
                   "es": "el lote de la página Lote y mapeo"},
    "empty_rows": {"en": "Empty padding rows to add", "zh": "追加的空填充行数", "es": "Filas de relleno vacías a añadir"},
    "rule": {"en": "Empty-request rule", "zh": "空请求规则", "es": "Regla de petición vacía"},
    "rule_now": {"en": "0, as from v0.11.1", "zh": "0，自 v0.11.1 起", "es": "0, como desde v0.11.1"},
    "rule_release": {"en": "the release's ({rule})", "zh": "按版本（{rule}）", "es": "la de la versión ({rule})"},
    "rule_old_short": {"en": "full page", "zh": "整页", "es": "página llena"},
    "rule_now_override": {"en": "override: 0", "zh": "改为：0", "es": "forzar: 0"},
    "rule_help": {"en": "By default the rule of the vLLM version picked above: last_page_len 0 for a request with no "
                        "token from v0.11.1 (#25438), a full page before. The other two options override it.",
                  "zh": "默认采用上方所选 vLLM 版本的规则：从 v0.11.1（#25438）起没有 token 的请求 last_page_len 为 0，"
                        "之前为整页。另外两个选项用于覆盖它。",
                  "es": "Por defecto, la regla de la versión de vLLM elegida arriba: last_page_len 0 para una petición "
                        "sin tokens desde v0.11.1 (#25438), una página llena antes. Las otras dos opciones la sustituyen."},
    "rule_old": {"en": "override: full page", "zh": "改为：整页", "es": "forzar: página llena"},
    "request": {"en": "Highlight request", "zh": "高亮请求", "es": "Resaltar petición"},
    "table": {"en": "2D block table (vLLM)", "zh": "二维块表（vLLM）", "es": "Tabla 2D de bloques (vLLM)"},
    "csr": {"en": "CSR (FlashInfer)", "zh": "CSR（FlashInfer）", "es": "CSR (FlashInfer)"},
    "table_window": {"en": "2D block table: rows {lo}–{hi} of {n}", "zh": "二维块表：第 {lo}–{hi} 行（共 {n} 行）",
                     "es": "Tabla 2D: filas {lo}–{hi} de {n}"},
    "csr_window": {"en": "CSR: indices[{lo}:{hi}] of {n}", "zh": "CSR：indices[{lo}:{hi}]（共 {n} 个）",
                   "es": "CSR: indices[{lo}:{hi}] de {n}"},
    "per_req": {"en": "Per request", "zh": "逐请求", "es": "Por petición"},
    "check": {"en": "The repack kernel against the reference", "zh": "重排内核与参考实现对比",
              "es": "El kernel de reempaquetado frente a la referencia"},
    "pass": {"en": "The repack kernel's indptr, indices and last_page_len equal the reference ({detail}).",
             "zh": "重排内核的 indptr、indices 和 last_page_len 与参考一致（{detail}）。",
             "es": "indptr, indices y last_page_len del kernel coinciden con la referencia ({detail})."},
    "run": {"en": "Run the repack kernel", "zh": "运行重排内核", "es": "Ejecutar el kernel de reempaquetado"},
    "run_big": {"en": "This CSR holds {n} pages: press the button to run the repack kernel (the CPU interpreter "
                      "is slow on big tables).",
                "zh": "该 CSR 含 {n} 个页：点击按钮运行重排内核（CPU 解释器处理大表很慢）。",
                "es": "Este CSR tiene {n} páginas: pulsa el botón para ejecutar el kernel de reempaquetado (el "
                      "intérprete de CPU es lento con tablas grandes)."},
    "fail": {"en": "KERNEL MISMATCH: {detail}", "zh": "内核不一致：{detail}", "es": "DISCREPANCIA DE KERNEL: {detail}"},
    "dcp_note": {"en": "With DCP each rank builds CSR over the tokens it stores (its local seq_lens).",
                 "zh": "使用 DCP 时，每个 rank 只对自己存放的 token（本地 seq_lens）构建 CSR。",
                 "es": "Con DCP cada rango construye el CSR sobre los tokens que guarda (sus seq_lens locales)."},
    "table_v2": {"en": "Input block table (V2, gathered)", "zh": "输入块表（V2，gather 之后）",
                 "es": "Tabla de entrada (V2, tras gather)"},
    "table_window_v2": {"en": "Input block table (gathered): rows {lo}–{hi} of {n}",
                        "zh": "输入块表（gather 之后）：第 {lo}–{hi} 行（共 {n} 行）",
                        "es": "Tabla de entrada (tras gather): filas {lo}–{hi} de {n}"},
    "v2_note": {"en": "Model Runner V2: the repack reads the gathered input block table, in batch order; row b is a "
                      "copy of request-state row idx_mapping[b], idx_mapping = {idx} (every state free before this "
                      "step: request i took state {r}−1−i). The CSR is the same as under V1.",
                "zh": "Model Runner V2：重排读取 gather 之后的输入块表（批次顺序）；第 b 行是请求状态行 idx_mapping[b] 的副本，"
                      "idx_mapping = {idx}（本步之前所有状态空闲：第 i 个请求取得状态 {r}−1−i）。CSR 与 V1 下相同。",
                "es": "Model Runner V2: el reempaquetado lee la tabla de bloques de entrada tras gather, en orden de "
                      "lote; la fila b es una copia de la fila de estado idx_mapping[b], idx_mapping = {idx} (todos "
                      "los estados libres antes de este paso: la petición i tomó el estado {r}−1−i). El CSR es el "
                      "mismo que con V1."},
}

# the per-request table's column labels and rule names, and the figure download
STRINGS.update({
    "col_seq_len": {"en": "seq_len (this rank)", "zh": "seq_len（本 rank）", "es": "seq_len (este rank)"},
    "col_request": {"en": "request", "zh": "请求", "es": "petición"},
    "col_pages": {"en": "pages", "zh": "页数", "es": "páginas"},
    "col_rule": {"en": "last_page_len rule", "zh": "last_page_len 规则", "es": "regla de last_page_len"},
    "rule_empty": {"en": "empty", "zh": "空", "es": "vacía"},
    "rule_full_page": {"en": "full page", "zh": "整页", "es": "página llena"},
    "rule_partial": {"en": "partial", "zh": "部分", "es": "parcial"},
    "dl_fig": {"en": "figure HTML", "zh": "图 HTML", "es": "figura HTML"},
    "colours": {"en": "Colours. The 2D table: each cell's physical block id (grey: the null block 0, what a padding "
                      "row holds). indices and last_page_len: the request each entry belongs to, one colour per "
                      "request; grey: an empty request (no pages, e.g. a padding row), as in the table. indptr: no "
                      "colour. Black outline: the highlighted request.",
                "zh": "颜色。二维块表：每格按其物理块号着色（灰色：空块 0，即填充行所存的内容）。indices 与 "
                      "last_page_len：按每一项所属的请求着色，每个请求一种颜色；灰色：空请求（没有页，例如填充行），"
                      "与块表一致。indptr：不着色。黑色外框：高亮的请求。",
                "es": "Colores. La tabla 2D: el id de bloque físico de cada celda (gris: el bloque nulo 0, lo que "
                      "guarda una fila de relleno). indices y last_page_len: la petición a la que pertenece cada "
                      "entrada, un color por petición; gris: una petición vacía (sin páginas, p. ej. una fila de "
                      "relleno), como en la tabla. indptr: sin color. Contorno negro: la petición resaltada."},
})
