"""Batch & mapping page prose."""
STRINGS = {
    "title": {"en": "Batch & mapping", "zh": "批次与映射", "es": "Lote y mapeo"},
    "intro": {"en": "Each line of the table is one request in this step. Blocks are allocated through the real "
                    "KV-cache manager (prefix cache on when a shared-prefix group is used), then the step's "
                    "tables are built and the Triton kernels run on them. Pick a token to follow it: **row → "
                    "logical block → physical block → slot → bytes**.",
              "zh": "表中每一行是本步中的一个请求。块通过真实的 KV 缓存管理器分配（使用共享前缀组时开启前缀缓存），"
                    "然后构建本步的各张表并在其上运行 Triton 内核。选择一个 token 跟踪它：**行 → 逻辑块 → 物理块 → 槽位 → 字节**。",
              "es": "Cada línea de la tabla es una petición de este paso. Los bloques se asignan con el gestor de caché "
                    "KV real (caché de prefijos activa si se usa un grupo de prefijo compartido); luego se construyen "
                    "las tablas del paso y se ejecutan los kernels Triton. Elige un token para seguirlo: **fila → "
                    "bloque lógico → bloque físico → slot → bytes**."},
    "preset": {"en": "Preset batch", "zh": "预设批次", "es": "Lote predefinido"},
    # a preset's name is short (the menu shows it whole at 1280 px, Spanish too); what it holds is
    # said in the menu's help (p_*_about)
    "p_default": {"en": "Mixed batch", "zh": "混合批次", "es": "Lote mixto"},
    "p_decode": {"en": "Decode, CUDA-graph padded", "zh": "解码 + CUDA graph 填充",
                 "es": "Decodificación + CUDA graph"},
    "p_prefix": {"en": "Shared system prompt", "zh": "共享系统提示词", "es": "Prompt de sistema compartido"},
    "p_kernel": {"en": "Small kernel blocks", "zh": "小内核块", "es": "Bloques de kernel pequeños"},
    "p_dcp": {"en": "DCP, 2 ranks", "zh": "DCP，2 个 rank", "es": "DCP, 2 rangos"},
    "p_big": {"en": "Large: 256 × 2048", "zh": "大规模：256 × 2048", "es": "Grande: 256 × 2048"},
    "p_default_about": {"en": "prefills, decodes, a chunk and a shared prefix in one step",
                        "zh": "同一步中有预填充、解码、分块和共享前缀",
                        "es": "prellenados, decodificaciones, un trozo y un prefijo compartido en un paso"},
    "p_decode_about": {"en": "a decode batch with CUDA-graph padding",
                       "zh": "带 CUDA graph 填充的解码批次",
                       "es": "un lote de decodificación con relleno de CUDA graph"},
    "p_prefix_about": {"en": "four requests sharing a system prompt", "zh": "四个请求共享系统提示词",
                       "es": "cuatro peticiones que comparten un prompt de sistema"},
    "p_kernel_about": {"en": "kernel blocks smaller than manager blocks", "zh": "内核块小于管理器块",
                       "es": "bloques de kernel más pequeños que los del gestor"},
    "p_dcp_about": {"en": "decode context parallel, 2 ranks", "zh": "解码上下文并行，2 个 rank",
                    "es": "paralelismo de contexto en decodificación, 2 rangos"},
    "p_big_about": {"en": "256 requests × 2048 blocks", "zh": "256 个请求 × 2048 个块",
                    "es": "256 peticiones × 2048 bloques"},
    "block_size": {"en": "Block size (tokens)", "zh": "块大小（token）", "es": "Tamaño de bloque (tokens)"},
    "kernel_block_size": {"en": "Kernel block size", "zh": "内核块大小", "es": "Tamaño de bloque del kernel"},
    "num_blocks": {"en": "Pool size (blocks)", "zh": "池大小（块）", "es": "Tamaño del pool (bloques)"},
    "max_model_len": {"en": "Max model length", "zh": "最大模型长度", "es": "Longitud máxima del modelo"},
    "dcp_world": {"en": "DCP ranks", "zh": "DCP rank 数", "es": "Rangos DCP"},
    "dcp_rank": {"en": "This rank", "zh": "本 rank", "es": "Este rango"},
    "cudagraph": {"en": "CUDA-graph padding", "zh": "CUDA graph 填充", "es": "Relleno de CUDA graph"},
    "cudagraph_help": {"en": "Pad the token count up to the next capture size (and the rows too for a pure decode "
                             "batch): padded tokens get slot −1, padded rows the null block.",
                       "zh": "把 token 数填充到下一个捕获大小（纯解码批次也填充行）：填充 token 的槽位为 −1，填充行指向空块。",
                       "es": "Rellena el número de tokens hasta el siguiente tamaño capturado (y las filas en un lote "
                             "de pura decodificación): los tokens de relleno tienen slot −1 y las filas, el bloque nulo."},
    "geometry": {"en": "Cache geometry (byte offsets and the kernel run)", "zh": "缓存几何（字节偏移与内核运行）",
                 "es": "Geometría de la caché (desplazamientos y ejecución de kernels)"},
    "heads": {"en": "KV heads", "zh": "KV 头数", "es": "Cabezas KV"},
    "head_dim": {"en": "Head dim", "zh": "头维度", "es": "Dimensión de cabeza"},
    "dtype": {"en": "Cache dtype", "zh": "缓存数据类型", "es": "Tipo de la caché"},
    "layout": {"en": "Layout for the kernel run", "zh": "内核运行所用布局", "es": "Disposición para los kernels"},
    "requests": {"en": "Requests (edit, add or delete lines)", "zh": "请求（可编辑、增加或删除行）",
                 "es": "Peticiones (edita, añade o borra líneas)"},
    "col_prompt": {"en": "prompt length", "zh": "提示词长度", "es": "longitud del prompt"},
    "col_computed": {"en": "computed tokens", "zh": "已计算 token", "es": "tokens calculados"},
    "col_new": {"en": "new tokens", "zh": "新 token", "es": "tokens nuevos"},
    "col_group": {"en": "shared-prefix group", "zh": "共享前缀组", "es": "grupo de prefijo compartido"},
    # the per-request table's headers (the CSV keeps the data names)
    "rcol_row": {"en": "row", "zh": "行", "es": "fila"},
    "rcol_prompt_len": {"en": "prompt length", "zh": "提示词长度", "es": "longitud del prompt"},
    "rcol_computed": {"en": "computed (asked)", "zh": "已计算（请求）", "es": "calculados (pedidos)"},
    "rcol_cache_hit_tokens": {"en": "prefix-cache hit tokens", "zh": "前缀缓存命中 token", "es": "tokens de la caché de prefijos"},
    "rcol_computed_eff": {"en": "computed (effective)", "zh": "已计算（实际）", "es": "calculados (efectivos)"},
    "rcol_new_tokens": {"en": "tokens this step", "zh": "本步 token", "es": "tokens de este paso"},
    "rcol_seq_len": {"en": "sequence length", "zh": "序列长度", "es": "longitud de la secuencia"},
    "rcol_prefix_group": {"en": "shared-prefix group", "zh": "共享前缀组", "es": "grupo de prefijo compartido"},
    "rcol_num_blocks": {"en": "blocks", "zh": "块数", "es": "bloques"},
    "rcol_blocks": {"en": "block ids", "zh": "块 id", "es": "ids de bloque"},
    "rcol_shared_blocks": {"en": "shared blocks", "zh": "共享块", "es": "bloques compartidos"},
    "decode_tokens": {"en": "Row {rows}: tokens past the prompt are decode tokens (generated one per step in a "
                            "real run; here all of them are scheduled at once).",
                      "zh": "第 {rows} 行：超出提示词的 token 是 decode token（真实运行中每步生成一个；此处一次全部调度）。",
                      "es": "Fila {rows}: los tokens más allá del prompt son tokens de decode (en una ejecución real se "
                            "generan uno por paso; aquí se planifican todos a la vez)."},
    "group_help": {"en": "Requests with the same group name start with the same tokens (as many as the group's "
                         "shortest prompt); their full blocks come from the prefix cache.",
                   "zh": "组名相同的请求以相同的 token 开头（长度为组内最短提示词）；它们的完整块来自前缀缓存。",
                   "es": "Las peticiones con el mismo grupo empiezan con los mismos tokens (tantos como el prompt "
                         "más corto del grupo); sus bloques llenos vienen de la caché de prefijos."},
    "bad_batch": {"en": "This batch cannot be built: {msg}", "zh": "无法构建该批次：{msg}",
                  "es": "No se puede construir este lote: {msg}"},
    "allocated": {"en": "What each request got", "zh": "每个请求得到的块", "es": "Lo que recibió cada petición"},
    "table_rows": {"en": "Rows {r0}–{r1} of {rows} shown, around row {row} of the selected token (the whole table "
                         "would be too big to draw at every rerun); pick another token to move the window.",
                   "zh": "显示第 {r0}–{r1} 行（共 {rows} 行），以所选 token 所在的第 {row} 行为中心（整张表太大，无法每次重绘）；"
                         "选择另一个 token 可移动窗口。",
                   "es": "Se muestran las filas {r0}–{r1} de {rows}, alrededor de la fila {row} del token elegido (la "
                         "tabla entera es demasiado grande para dibujarla en cada ejecución); elige otro token para "
                         "mover la ventana."},
    "kbs_reset": {"en": "Kernel block size reset from {old} to {new}: {old} does not divide the new block size {bs}, "
                        "and a manager block must split into whole kernel blocks (kvviz then takes one kernel block per "
                        "manager block).",
                  "zh": "内核块大小已从 {old} 重置为 {new}：{old} 不能整除新的块大小 {bs}，而一个管理器块必须切成整数个内核块"
                        "（kvviz 于是取一个管理器块对应一个内核块）。",
                  "es": "Tamaño de bloque del kernel restablecido de {old} a {new}: {old} no divide el nuevo tamaño de "
                        "bloque {bs}, y un bloque del gestor debe partirse en bloques del kernel enteros (kvviz toma "
                        "entonces un bloque del kernel por bloque del gestor)."},
    "pick": {"en": "Follow one token", "zh": "跟踪一个 token", "es": "Sigue un token"},
    "token": {"en": "Token of the step (or click a marker in the slot mapping)",
              "zh": "本步的 token（或点击槽位映射中的点）",
              "es": "Token del paso (o haz clic en un punto del mapeo de slots)"},
    "head": {"en": "head", "zh": "头", "es": "cabeza"},
    "dim": {"en": "dim", "zh": "维", "es": "dim"},
    "kv": {"en": "K or V", "zh": "K 或 V", "es": "K o V"},
    "m_row": {"en": "row", "zh": "行", "es": "fila"},
    "m_pos": {"en": "position", "zh": "位置", "es": "posición"},
    "m_logical": {"en": "logical block", "zh": "逻辑块", "es": "bloque lógico"},
    "m_column": {"en": "table column", "zh": "表列", "es": "columna"},
    "m_physical": {"en": "physical block", "zh": "物理块", "es": "bloque físico"},
    "m_slot": {"en": "slot", "zh": "槽位", "es": "slot"},
    "m_nhd": {"en": "NHD byte", "zh": "NHD 字节", "es": "byte NHD"},
    "m_hnd": {"en": "HND byte", "zh": "HND 字节", "es": "byte HND"},
    "family": {"en": "Cache layout for the byte offsets", "zh": "字节偏移所用的缓存布局",
               "es": "Disposición de la caché para los desplazamientos"},
    "fam_flash_attn": {"en": "flash_attn — K plane then V plane (FlashAttention before v0.23.0)",
                       "zh": "flash_attn — 先 K 平面后 V 平面（v0.23.0 之前的 FlashAttention）",
                       "es": "flash_attn — plano K y luego plano V (FlashAttention antes de v0.23.0)"},
    "fam_flashinfer": {"en": "flashinfer — FlashInfer 5-D (FlashInfer/Triton before v0.26.0)",
                       "zh": "flashinfer — FlashInfer 五维（v0.26.0 之前的 FlashInfer/Triton）",
                       "es": "flashinfer — FlashInfer 5-D (FlashInfer/Triton antes de v0.26.0)"},
    "fam_flashinfer_packed": {"en": "flashinfer_packed — packed K|V, every vLLM backend since v0.26.0",
                              "zh": "flashinfer_packed — K|V 打包，v0.26.0 起 vLLM 的所有后端",
                              "es": "flashinfer_packed — K|V empaquetados, todos los backends de vLLM desde v0.26.0"},
    # the shapes in the letters of every page, the README and `offset --help` (kvviz.core.layout.NOTATION)
    "whose_flash_attn": {"en": "NHD and HND bytes are in the **flash_attn** layout (vLLM's FlashAttention backend before v0.23.0): "
                               "`[2, B, N, H, D]` / `[2, B, H, N, D]` (B blocks, N tokens per block, H KV heads, D head "
                               "dim), the whole K plane, then the whole V plane.",
                         "zh": "NHD 与 HND 字节采用 **flash_attn** 布局（v0.23.0 之前 vLLM 的 FlashAttention 后端）："
                               "`[2, B, N, H, D]` / `[2, B, H, N, D]`（B = 块数，N = 块大小，H = KV 头数，D = 头维度），"
                               "先是整个 K 平面，然后是整个 V 平面。",
                         "es": "Los bytes NHD y HND están en la disposición **flash_attn**, la del backend "
                               "FlashAttention de vLLM antes de v0.23.0: `[2, B, N, H, D]` / `[2, B, H, N, D]` (B bloques, "
                               "N tamaño de bloque, H cabezas KV, D dimensión de cabeza): todo el plano K y luego todo el plano V."},
    "whose_flashinfer": {"en": "NHD and HND bytes are in the **flashinfer** layout, FlashInfer's documented 5-D "
                               "layout and vLLM's FlashInfer and Triton backends before v0.26.0 (FlashAttention v0.23.0 .. v0.25.x): "
                               "`[B, 2, N, H, D]` / `[B, 2, H, N, D]` (B blocks, N tokens per block, H KV heads, D head dim), "
                               "each block's K, then its V.",
                         "zh": "NHD 与 HND 字节采用 **flashinfer** 布局，即 FlashInfer 文档中的五维布局，也是 vLLM "
                               "FlashInfer 与 Triton 后端 v0.26.0 之前的布局（FlashAttention 为 v0.23.0 .. v0.25.x）：`[B, 2, N, H, D]` / "
                               "`[B, 2, H, N, D]`（B = 块数，N = 块大小，H = KV 头数，D = 头维度），每个块先存 K，再存 V。",
                         "es": "Los bytes NHD y HND están en la disposición **flashinfer**, la 5-D documentada de "
                               "FlashInfer y la de los backends FlashInfer y Triton de vLLM antes de v0.26.0 (FlashAttention v0.23.0 .. v0.25.x): "
                               "`[B, 2, N, H, D]` / `[B, 2, H, N, D]` (B bloques, N tamaño de bloque, H cabezas KV, D dimensión "
                               "de cabeza): la K de cada bloque y luego su V."},
    "whose_flashinfer_packed": {"en": "NHD and HND bytes are in the **flashinfer_packed** layout, that of every "
                                      "vLLM backend from v0.26.0 (#44455) to v0.28.x: `[B, N, H, 2D]` / `[B, H, N, 2D]` (B "
                                      "blocks, N tokens per block, H KV heads, D head dim), K in `[..., :D]`, V in `[..., D:]`.",
                                "zh": "NHD 与 HND 字节采用 **flashinfer_packed** 布局，即 vLLM 所有后端自 "
                                      "v0.26.0 起至 v0.28.x 的布局（#44455）：`[B, N, H, 2D]` / `[B, H, N, 2D]`"
                                      "（B = 块数，N = 块大小，H = KV 头数，D = 头维度），K 在 `[..., :D]`，V 在 `[..., D:]`。",
                                "es": "Los bytes NHD y HND están en la disposición **flashinfer_packed**, la de todos los backends "
                                      "de vLLM desde v0.26.0 (#44455) hasta v0.28.x: `[B, N, H, 2D]` / `[B, H, N, 2D]` "
                                      "(B bloques, N tamaño de bloque, H cabezas KV, D dimensión de cabeza), K en `[..., :D]`, V en `[..., D:]`."},
    "kernel_family_same": {"en": "The kernels write and check the **flash_attn** cache layout (K plane, then V plane), "
                                 "the one vLLM {version}'s FlashAttention allocates: their bytes are the release's.",
                           "zh": "内核写入并检查的是 **flash_attn** 缓存布局（先 K 平面后 V 平面），即 vLLM {version} 的 "
                                 "FlashAttention 所分配的布局：内核的字节就是该版本的字节。",
                           "es": "Los kernels escriben y comprueban la disposición **flash_attn** de la caché (plano K y "
                                 "luego plano V), la que asigna FlashAttention en vLLM {version}: sus bytes son los de la versión."},
    "kernel_family_other": {"en": "The kernels write and check the **flash_attn** cache layout (K plane, then V plane); "
                                  "vLLM {version}'s FlashAttention allocates **{release}** instead. They check the "
                                  "release's slots, block table and CSR; the release's byte offsets are the ones the token "
                                  "panel above shows, not those of the kernels' cache.",
                            "zh": "内核写入并检查的是 **flash_attn** 缓存布局（先 K 平面后 V 平面）；vLLM {version} 的 "
                                  "FlashAttention 分配的却是 **{release}**。内核检查的是该版本的槽位、块表和 CSR；该版本的字节"
                                  "偏移是上方 token 面板所示的偏移，而不是内核缓存的偏移。",
                            "es": "Los kernels escriben y comprueban la disposición **flash_attn** de la caché (plano K y "
                                  "luego plano V); FlashAttention en vLLM {version} asigna en cambio **{release}**. Comprueban "
                                  "los slots, la tabla de bloques y el CSR de la versión; los desplazamientos de la versión son "
                                  "los que muestra el panel del token de arriba, no los de la caché de los kernels."},
    # the release is named in the page's caption and the line under the picker: the label stays short
    "fam_auto": {"en": "auto → {family}", "zh": "自动 → {family}", "es": "automático → {family}"},
    "whose_release": {"en": "The bytes follow vLLM {version}: its FlashAttention backend allocates **{family}**.",
                      "zh": "字节按 vLLM {version}：其 FlashAttention 后端分配 **{family}**。",
                      "es": "Los bytes siguen a vLLM {version}: su backend FlashAttention asigna **{family}**."},
    "whose_hand": {"en": "Picked by hand: the bytes are in **{family}**, not in what vLLM {version} allocates (**{release}**).",
                   "zh": "手动选择：字节采用 **{family}**，而不是 vLLM {version} 分配的布局（**{release}**）。",
                   "es": "Elegida a mano: los bytes están en **{family}**, no en lo que asigna vLLM {version} (**{release}**)."},
    "whose_standardized": {"en": "NHD and HND bytes follow vLLM {version}: one standardized cache, each layer a view "
                                 "`[L, B, H, N, C]` (C: one head's K then V of one token). The NHD byte is **{nhd}**'s "
                                 "({default} is the release's default for FlashAttention), the HND byte **{hnd}**'s, in "
                                 "layer 0 of a one-layer cache (layer l adds l × the layer stride: see the Memory layout page).",
                           "zh": "NHD 与 HND 字节按 vLLM {version}：一个标准化缓存，每层是一个视图 `[L, B, H, N, C]`"
                                 "（C：一个 token 一个头的 K 再 V）。NHD 字节是 **{nhd}** 的（{default} 是该版本 FlashAttention "
                                 "的默认布局），HND 字节是 **{hnd}** 的，位于单层缓存的第 0 层（第 l 层再加 l × 层步长：见内存布局页）。",
                           "es": "Los bytes NHD y HND siguen a vLLM {version}: una caché estandarizada, cada capa una vista "
                                 "`[L, B, H, N, C]` (C: la K y luego la V de una cabeza y un token). El byte NHD es el de "
                                 "**{nhd}** ({default} es la predeterminada de la versión para FlashAttention), el byte HND el "
                                 "de **{hnd}**, en la capa 0 de una caché de una capa (la capa l suma l × el paso de capa: "
                                 "véase la página de disposición de memoria)."},
    "bad_family_link": {"en": "link parameter cache_layout={value!r} is not one of {names}; following the chosen vLLM release",
                        "zh": "链接参数 cache_layout={value!r} 不是 {names} 之一；改为按所选 vLLM 版本",
                        "es": "el parámetro cache_layout={value!r} del enlace no es uno de {names}; se sigue la versión de vLLM elegida"},
    "chain_text": {"en": "Row {row}, position {pos}: logical block {lb} = {pos} // {tpb}; table[{row}, {col}] = "
                         "physical block {pb}; slot = {pb} × {kbs} + {off} = **{slot}**.",
                   "zh": "行 {row}，位置 {pos}：逻辑块 {lb} = {pos} // {tpb}；table[{row}, {col}] = 物理块 {pb}；"
                         "槽位 = {pb} × {kbs} + {off} = **{slot}**。",
                   "es": "Fila {row}, posición {pos}: bloque lógico {lb} = {pos} // {tpb}; tabla[{row}, {col}] = "
                         "bloque físico {pb}; slot = {pb} × {kbs} + {off} = **{slot}**."},
    "pad_token": {"en": "This token has slot −1: {kind}. The KV write skips it.",
                  "zh": "该 token 的槽位为 −1：{kind}。KV 写入会跳过它。",
                  "es": "Este token tiene slot −1: {kind}. La escritura KV lo omite."},
    "fig_table": {"en": "Block table (device copy the kernels read)", "zh": "块表（内核读取的设备副本）",
                  "es": "Tabla de bloques (copia en el dispositivo que leen los kernels)"},
    "fig_slots": {"en": "Slot mapping: token → slot", "zh": "槽位映射：token → 槽位", "es": "Mapeo de slots: token → slot"},
    "fig_buffer": {"en": "The slot buffer: who holds each slot (number = position)",
                   "zh": "槽位缓冲区：每个槽位属于谁（数字 = 位置）",
                   "es": "El búfer de slots: quién ocupa cada slot (número = posición)"},
    "table_cols": {"en": "Showing columns 0–{shown} of {width}; the rest are 0 (null block) in every row.",
                   "zh": "显示第 0–{shown} 列（共 {width} 列）；其余列在每一行都是 0（空块）。",
                   "es": "Se muestran las columnas 0–{shown} de {width}; el resto es 0 (bloque nulo) en todas las filas."},
    "table_cols_window": {"en": "Columns {c0}–{c1} of {shown} shown, around column {col} of the selected token; "
                                "pick another token to move the window.",
                          "zh": "显示第 {c0}–{c1} 列（共 {shown} 列），以所选 token 所在的第 {col} 列为中心；选择另一个 token 可移动窗口。",
                          "es": "Se muestran las columnas {c0}–{c1} de {shown}, alrededor de la columna {col} del token "
                                "elegido; elija otro token para mover la ventana."},
    "buffer_window": {"en": "Showing physical blocks {a}–{b} of {n}, around the selected token.",
                      "zh": "显示物理块 {a}–{b}（共 {n} 个），位于选中 token 附近。",
                      "es": "Se muestran los bloques físicos {a}–{b} de {n}, alrededor del token elegido."},
    "kernels": {"en": "Kernels on the live backend", "zh": "实时后端上的内核", "es": "Kernels en el backend real"},
    "run": {"en": "Run the kernels", "zh": "运行内核", "es": "Ejecutar los kernels"},
    "run_big": {"en": "This batch holds {n} context tokens: press the button to run the kernels (the CPU "
                      "interpreter is slow on big batches).",
                "zh": "该批次共有 {n} 个上下文 token：点击按钮运行内核（CPU 解释器处理大批次很慢）。",
                "es": "Este lote tiene {n} tokens de contexto: pulsa el botón para ejecutar los kernels (el "
                      "intérprete de CPU es lento con lotes grandes)."},
    "all_pass": {"en": "All {n} kernel outputs match their references.",
                 "zh": "全部 {n} 个内核输出与参考一致。",
                 "es": "Las {n} salidas de kernel coinciden con sus referencias."},
    "some_fail": {"en": "KERNEL MISMATCH: {msg}", "zh": "内核不一致：{msg}", "es": "DISCREPANCIA DE KERNEL: {msg}"},
    "backend_error": {"en": "The backend could not run this batch: {msg}", "zh": "后端无法运行该批次：{msg}",
                      "es": "El backend no pudo ejecutar este lote: {msg}"},
    "timing_note": {"en": "Times on {dev}: {note}", "zh": "{dev} 上的时间：{note}", "es": "Tiempos en {dev}: {note}"},
    "timing_interp": {"en": "one interpreted call each (not kernel speed)", "zh": "每个内核解释执行一次（不代表内核速度）",
                      "es": "una llamada interpretada cada uno (no es la velocidad del kernel)"},
    "untimed": {"en": "Run once each on {dev}, untimed: an interpreted call says nothing about kernel speed (the "
                      "Kernel lab shows recorded GPU timings).",
                "zh": "每个内核在 {dev} 上运行一次，不计时：解释执行的耗时不代表内核速度（内核实验室页面有记录的 GPU 计时）。",
                "es": "Cada kernel se ejecuta una vez en {dev}, sin medir tiempos: una llamada interpretada no dice nada "
                      "de la velocidad del kernel (el laboratorio de kernels muestra tiempos de GPU registrados)."},
    "timing_gpu": {"en": "CUDA-event medians", "zh": "CUDA 事件中位数", "es": "medianas con eventos CUDA"},
    "downloads": {"en": "Downloads", "zh": "下载", "es": "Descargas"},
    "link_lossy": {"en": "This link does not carry everything: prefix groups it cannot spell (letters, digits, _; "
                         "at most 16) are left out: {groups}; rows past the first {max} are cut: {cut}. Opening it "
                         "gives a different batch.",
                   "zh": "此链接无法携带全部内容：无法表示的前缀组（仅限字母、数字、_，最多 16 个字符）被省略：{groups}；"
                         "超过前 {max} 行的行被截去：{cut}。打开它会得到不同的批次。",
                   "es": "Este enlace no lo lleva todo: se omiten los grupos de prefijo que no puede escribir (letras, "
                         "dígitos, _; como mucho 16): {groups}; se cortan las filas tras las primeras {max}: {cut}. "
                         "Abrirlo da otro lote."},
    "link": {"en": "Link to this batch and token (also in the address bar):",
             "zh": "指向该批次和 token 的链接（地址栏中也有）：",
             "es": "Enlace a este lote y token (también en la barra de direcciones):"},
    # Model Runner V2
    "fig_table_v2": {"en": "Input block table (gathered, batch order: what the kernels read)",
                     "zh": "输入块表（gather 之后，批次顺序：内核读取的表）",
                     "es": "Tabla de bloques de entrada (tras gather, orden de lote: la que leen los kernels)"},
    "fig_state_v2": {"en": "Request-state block table (rows by state index)", "zh": "请求状态块表（按状态索引排列的行）",
                     "es": "Tabla de bloques de estado (filas por índice de estado)"},
    "held_by": {"en": "row {row}", "zh": "第 {row} 行", "es": "fila {row}"},
    "idx_title": {"en": "idx_mapping (batch position → state index)", "zh": "idx_mapping（批次位置 → 状态索引）",
                  "es": "idx_mapping (posición en el lote → índice de estado)"},
    "v2_note": {"en": "Model Runner V2: with every request state free before this step, request i of the batch took "
                      "state index {r}−1−i from the LIFO free list, so idx_mapping = {idx}. Its block ids were staged "
                      "into that state row (apply_staged_writes); gather copied each state row's first num_blocks "
                      "entries into the input table in batch order (padded rows 0). Same slots, other tables.",
                "zh": "Model Runner V2：本步之前所有请求状态都空闲，批次中第 i 个请求从后进先出的空闲列表取得状态索引 {r}−1−i，"
                      "因此 idx_mapping = {idx}。它的块号暂存后写入该状态行（apply_staged_writes）；gather 按批次顺序把每个"
                      "状态行的前 num_blocks 项拷进输入表（填充行为 0）。槽位相同，表不同。",
                "es": "Model Runner V2: con todos los estados libres antes de este paso, la petición i del lote tomó el "
                      "índice de estado {r}−1−i de la lista libre LIFO, así que idx_mapping = {idx}. Sus ids de bloque "
                      "se prepararon para esa fila de estado (apply_staged_writes); gather copió las primeras num_blocks "
                      "entradas de cada fila de estado a la tabla de entrada en orden de lote (filas de relleno 0). "
                      "Mismos slots, otras tablas."},
    "chain_v2": {"en": "Under V2, batch position {row} is a copy of request-state row {state} (idx_mapping[{row}] = {state}).",
                 "zh": "在 V2 下，批次位置 {row} 是请求状态行 {state} 的副本（idx_mapping[{row}] = {state}）。",
                 "es": "Con V2, la posición {row} del lote es una copia de la fila de estado {state} "
                       "(idx_mapping[{row}] = {state})."},
    # short column labels of the per-request table (the long names above are their tooltips)
    "rshort_row": {"en": "row", "zh": "行", "es": "fila"},
    "rshort_prompt_len": {"en": "prompt", "zh": "提示词", "es": "prompt"},
    "rshort_computed": {"en": "computed", "zh": "已计算", "es": "calculados"},
    "rshort_cache_hit_tokens": {"en": "cache hits", "zh": "缓存命中", "es": "en caché"},
    "rshort_computed_eff": {"en": "effective", "zh": "实际", "es": "efectivos"},
    "rshort_new_tokens": {"en": "new", "zh": "本步", "es": "nuevos"},
    "rshort_seq_len": {"en": "seq len", "zh": "序列长", "es": "secuencia"},
    "rshort_prefix_group": {"en": "group", "zh": "前缀组", "es": "grupo"},
    "rshort_num_blocks": {"en": "blocks", "zh": "块数", "es": "bloques"},
    "rshort_blocks": {"en": "block ids", "zh": "块 id", "es": "ids de bloque"},
    "rshort_shared_blocks": {"en": "shared", "zh": "共享块", "es": "compartidos"},
    # the kernel results table and its details
    "kcol_kernel": {"en": "kernel", "zh": "内核", "es": "kernel"},
    "kcol_passed": {"en": "passed", "zh": "通过", "es": "correcto"},
    "kcol_max_error": {"en": "max error", "zh": "最大误差", "es": "error máx."},
    "kernel_details": {"en": "What each kernel checked:", "zh": "每个内核检查了什么：",
                       "es": "Qué comprobó cada kernel:"},
    # V2's idx_mapping table
    "icol_position": {"en": "position", "zh": "批次位置", "es": "posición"},
    "icol_position_help": {"en": "batch position (request row)", "zh": "批次位置（请求行）",
                           "es": "posición en el lote (fila de petición)"},
    "icol_state": {"en": "state", "zh": "状态索引", "es": "estado"},
    "icol_state_help": {"en": "request-state index (idx_mapping)", "zh": "请求状态索引（idx_mapping）",
                        "es": "índice de estado de la petición (idx_mapping)"},
    "icol_blocks": {"en": "blocks", "zh": "块数", "es": "bloques"},
    "icol_blocks_help": {"en": "kernel blocks of that state row (num_blocks)", "zh": "该状态行的内核块数（num_blocks）",
                         "es": "bloques de kernel de esa fila de estado (num_blocks)"},
    # notes and errors of the allocation, built from the core's fields in the page's language
    "note_shared": {"en": "shared blocks (the rows holding each): {blocks}: prefix caching lets two requests share a "
                          "full block; one row never holds a block twice",
                    "zh": "共享的块（括号内为持有它的各行）：{blocks}：前缀缓存让两个请求共用一个满块；同一行从不重复持有一个块",
                    "es": "bloques compartidos (las filas que tienen cada uno): {blocks}: la caché de prefijos deja que dos "
                          "peticiones compartan un bloque lleno; una fila nunca tiene un bloque dos veces"},
    "note_prefix_hit": {"en": "row {row}: {hit} tokens found in the prefix cache, so computed is {eff}, not {asked}",
                        "zh": "第 {row} 行：在前缀缓存中找到 {hit} 个 token，因此已计算为 {eff}，而不是 {asked}",
                        "es": "fila {row}: {hit} tokens encontrados en la caché de prefijos, así que los calculados "
                              "son {eff}, no {asked}"},
    "err_pool_small": {"en": "the pool is too small: row {row} needs {need} more block(s) of {bs} tokens but only "
                             "{free} of {total} are free (block 0 is the null block); raise the pool size",
                       "zh": "块池太小：第 {row} 行还需要 {need} 个块（每块 {bs} 个 token），但 {total} 个块中只有 "
                             "{free} 个空闲（块 0 是空块）；请增大池的大小",
                       "es": "el pool es demasiado pequeño: la fila {row} necesita {need} bloque(s) más de {bs} tokens, "
                             "pero solo {free} de {total} están libres (el bloque 0 es el bloque nulo); aumenta el "
                             "tamaño del pool"},
    "bad_batch_code": {"en": "This batch cannot be built:", "zh": "无法构建该批次：",
                       "es": "No se puede construir este lote:"},
}
