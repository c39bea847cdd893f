"""Memory-layout page prose."""
STRINGS = {
    "title": {"en": "Memory layout: NHD vs HND", "zh": "内存布局：NHD 与 HND", "es": "Disposición en memoria: NHD frente a HND"},
    "intro": {"en": "A KV element is named by (K or V, block, offset, head, dim); its slot (block × block_size + "
                    "offset) is the same everywhere. Where it sits in memory depends on two named choices: the "
                    "**cache layout family** (how K and V share the tensor) and **NHD / HND** (inside a block, "
                    "NHD stores token after token with each token's heads together; HND stores head after head "
                    "with each head's tokens together). B = blocks, N = block size, H = KV heads, D = head dim.",
              "zh": "一个 KV 元素由（K 或 V，块，偏移，头，维）确定；它的槽位（块 × 块大小 + 偏移）在任何布局下都相同。"
                    "它在内存中的位置取决于两个明确命名的选择：**缓存布局族**（K 和 V 如何共用张量）和 **NHD / HND**"
                    "（块内 NHD 按 token 依次存放，同一 token 的各头相邻；HND 按头依次存放，同一头的各 token 相邻）。"
                    "B = 块数，N = 块大小，H = KV 头数，D = 头维度。",
              "es": "Un elemento KV se nombra por (K o V, bloque, desplazamiento, cabeza, dim); su slot (bloque × "
                    "block_size + desplazamiento) es el mismo en todas partes. Dónde está en memoria depende de dos "
                    "elecciones con nombre: la **familia de disposición de la caché** (cómo comparten K y V el "
                    "tensor) y **NHD / HND** (dentro de un bloque, NHD guarda token tras token con las cabezas de "
                    "cada token juntas; HND guarda cabeza tras cabeza con los tokens de cada cabeza juntos). "
                    "B = bloques, N = tamaño de bloque, H = cabezas KV, D = dimensión de cabeza."},
    "family": {"en": "cache layout family", "zh": "缓存布局族", "es": "familia de disposición de la caché"},
    "fam_flash_attn": {"en": "flash_attn — FlashAttention backend", "zh": "flash_attn — FlashAttention 后端",
                       "es": "flash_attn — backend FlashAttention"},
    "fam_flashinfer": {"en": "flashinfer — FlashInfer 5-D (vLLM before 2026-07)",
                       "zh": "flashinfer — FlashInfer 五维（vLLM 2026-07 之前）",
                       "es": "flashinfer — FlashInfer 5-D (vLLM antes de 2026-07)"},
    "fam_flashinfer_packed": {"en": "flashinfer_packed — vLLM FlashInfer, packed K|V (since 2026-07)",
                              "zh": "flashinfer_packed — vLLM FlashInfer，K|V 打包（2026-07 起）",
                              "es": "flashinfer_packed — vLLM FlashInfer, K|V empaquetados (desde 2026-07)"},
    "fam_flex_interleaved": {"en": "flex_interleaved — vLLM Flex, K|V per token (v0.23–v0.25, NHD only)",
                             "zh": "flex_interleaved — vLLM Flex，每个 token 先 K 后 V（v0.23–v0.25，仅 NHD）",
                             "es": "flex_interleaved — vLLM Flex, K|V por token (v0.23–v0.25, solo NHD)"},
    # no family named in the option itself: the browser keeps a chosen option's old text when only its
    # label changes (v0.22.1 -> v0.34.0 showed "flashinfer_packed" beside "In effect: LBNHC")
    "fam_auto": {"en": "auto → {family} (release and backend)",
                 "zh": "自动 → {family}（按版本与后端）",
                 "es": "automático → {family} (según versión y backend)"},
    "vllm": {"en": "vLLM version", "zh": "vLLM 版本", "es": "versión de vLLM"},
    "backend": {"en": "attention backend", "zh": "注意力后端", "es": "backend de atención"},
    "effect_vllm": {"en": "**In effect:** `{line}` — the layout vLLM allocates for this backend in this version.",
                    "zh": "**当前生效：** `{line}`——该版本的 vLLM 为此后端分配的布局。",
                    "es": "**En uso:** `{line}`: la disposición que vLLM reserva para este backend en esta versión."},
    "effect_hand": {"en": "**In effect:** **{family}** `{shapes}`, picked by hand in the family control; vLLM itself "
                          "allocates `{line}`. Pick the first entry of the family control to follow vLLM again.",
                    "zh": "**当前生效：** **{family}** `{shapes}`，在布局族控件中手动选择；vLLM 本身分配的是 `{line}`。"
                          "在布局族控件中选第一项即可重新跟随 vLLM。",
                    "es": "**En uso:** **{family}** `{shapes}`, elegida a mano en el control de familia; vLLM reserva "
                          "`{line}`. Elige la primera opción del control de familia para volver a seguir a vLLM."},
    "history": {"en": "vLLM pull requests that changed this backend's cache up to {version}: {prs}",
                "zh": "截至 {version}，改变该后端缓存的 vLLM 拉取请求：{prs}",
                "es": "PR de vLLM que cambiaron la caché de este backend hasta {version}: {prs}"},
    "nhd_only_backend": {"en": "vLLM {version}'s {backend} backend ignores VLLM_KV_CACHE_LAYOUT=HND: its cache is NHD "
                               "whatever the setting, so only NHD is shown.",
                         "zh": "vLLM {version} 的 {backend} 后端忽略 VLLM_KV_CACHE_LAYOUT=HND：无论如何设置，其缓存都是 NHD，"
                               "因此只显示 NHD。",
                         "es": "El backend {backend} de vLLM {version} ignora VLLM_KV_CACHE_LAYOUT=HND: su caché es NHD "
                               "se configure como se configure, así que solo se muestra NHD."},
    "nhd_only_family": {"en": "The {family} family has no HND form: only NHD is shown.",
                        "zh": "{family} 布局族没有 HND 形式：只显示 NHD。",
                        "es": "La familia {family} no tiene forma HND: solo se muestra NHD."},
    "whose_flash_attn": {"en": "**flash_attn** is the layout of vLLM's FlashAttention backend before v0.23.0 (and of "
                               "its Flex backend, NHD only): `[2, B, N, H, D]` (NHD) or `[2, B, H, N, D]` (HND) — the "
                               "whole K plane, then the whole V plane.",
                         "zh": "**flash_attn** 是 vLLM FlashAttention 后端在 v0.23.0 之前的布局（Flex 后端亦然，仅 NHD）："
                               "`[2, B, N, H, D]`（NHD）或 `[2, B, H, N, D]`（HND）——先是整个 K 平面，然后是整个 V 平面。",
                         "es": "**flash_attn** es la disposición del backend FlashAttention de vLLM antes de v0.23.0 (y "
                               "del backend Flex, solo NHD): `[2, B, N, H, D]` (NHD) o `[2, B, H, N, D]` (HND): todo el "
                               "plano K y luego todo el plano V."},
    "whose_flashinfer": {"en": "**flashinfer** is FlashInfer's documented 5-D layout, also vLLM's FlashInfer and Triton "
                               "backends before 2026-07 (v0.26.0) and its FlashAttention backend from v0.23.0 to v0.25.x: "
                               "`[B, 2, N, H, D]` (NHD) or `[B, 2, H, N, D]` (HND) — each block holds its K, then its V.",
                         "zh": "**flashinfer** 是 FlashInfer 文档中的五维布局，也是 vLLM FlashInfer 与 Triton 后端在 2026-07"
                               "（v0.26.0）之前、FlashAttention 后端在 v0.23.0 至 v0.25.x 的布局：`[B, 2, N, H, D]`（NHD）或 "
                               "`[B, 2, H, N, D]`（HND）——每个块先存它的 K，再存它的 V。",
                         "es": "**flashinfer** es la disposición 5-D documentada de FlashInfer, y la de los backends "
                               "FlashInfer y Triton de vLLM antes de 2026-07 (v0.26.0) y FlashAttention de v0.23.0 a "
                               "v0.25.x: `[B, 2, N, H, D]` (NHD) o `[B, 2, H, N, D]` (HND): cada bloque guarda su K y "
                               "luego su V."},
    "whose_flashinfer_packed": {"en": "**flashinfer_packed** is every vLLM backend's layout since 2026-07-11 (v0.26.0, "
                                      "FlashInfer, FlashAttention, Triton; Flex in NHD only): `[B, N, H, 2D]` (NHD) or "
                                      "`[B, H, N, 2D]` (HND) — K and V packed in the last dimension, K in `[..., :D]`, "
                                      "V in `[..., D:]`.",
                                "zh": "**flashinfer_packed** 是 vLLM 所有后端自 2026-07-11（v0.26.0）起的布局（FlashInfer、"
                                      "FlashAttention、Triton；Flex 仅 NHD）：`[B, N, H, 2D]`（NHD）或 `[B, H, N, 2D]`（HND）"
                                      "——K 和 V 打包在最后一维，K 在 `[..., :D]`，V 在 `[..., D:]`。",
                                "es": "**flashinfer_packed** es la disposición de todos los backends de vLLM desde "
                                      "2026-07-11 (v0.26.0: FlashInfer, FlashAttention, Triton; Flex solo en NHD): "
                                      "`[B, N, H, 2D]` (NHD) o `[B, H, N, 2D]` (HND): K y V empaquetados en la última "
                                      "dimensión, K en `[..., :D]`, V en `[..., D:]`."},
    "whose_flex_interleaved": {"en": "**flex_interleaved** is vLLM's Flex backend from v0.23.0 to v0.25.x: logical "
                                     "`[B, 2, N, H, D]` allocated in stride order (0, 2, 1, 3, 4), so in memory "
                                     "`[B, N, 2, H, D]` — inside a block, each token's K for every head, then its V. "
                                     "NHD only: Flex ignores HND.",
                               "zh": "**flex_interleaved** 是 vLLM Flex 后端在 v0.23.0 至 v0.25.x 的布局：逻辑形状 "
                                     "`[B, 2, N, H, D]` 按步长顺序（0, 2, 1, 3, 4）分配，因此内存中为 `[B, N, 2, H, D]`"
                                     "——块内每个 token 先存所有头的 K，再存所有头的 V。仅 NHD：Flex 忽略 HND。",
                               "es": "**flex_interleaved** es el backend Flex de vLLM de v0.23.0 a v0.25.x: forma lógica "
                                     "`[B, 2, N, H, D]` reservada en el orden de pasos (0, 2, 1, 3, 4), así que en memoria "
                                     "es `[B, N, 2, H, D]`: dentro de un bloque, la K de cada token para todas las "
                                     "cabezas y luego su V. Solo NHD: Flex ignora HND."},
    "byte_help": {"en": "Decimal (416) or hexadecimal with 0x (0x1a0).", "zh": "十进制（416）或带 0x 的十六进制（0x1a0）。",
                  "es": "Decimal (416) o hexadecimal con 0x (0x1a0)."},
    "byte_garbage": {"en": "Not a byte address: {text!r} — write a whole number, decimal (416) or hexadecimal with 0x "
                           "(0x1a0).",
                     "zh": "不是字节地址：{text!r}——请写一个整数，十进制（416）或带 0x 的十六进制（0x1a0）。",
                     "es": "No es una dirección en bytes: {text!r}; escribe un número entero, decimal (416) o "
                           "hexadecimal con 0x (0x1a0)."},
    "byte_outside": {"en": "byte {byte} is past the end of this cache (0 .. {last}).",
                     "zh": "字节 {byte} 超出了该缓存的末尾（0 .. {last}）。",
                     "es": "el byte {byte} está más allá del final de esta caché (0 .. {last})."},
    "byte_negative": {"en": "A byte address cannot be negative ({value}).", "zh": "字节地址不能为负数（{value}）。",
                      "es": "Una dirección en bytes no puede ser negativa ({value})."},
    "byte_read": {"en": "byte {dec} = {hex} in the {family} layout, read as {layout}",
                  "zh": "字节 {dec} = {hex}，{family} 布局，按 {layout} 解读",
                  "es": "byte {dec} = {hex} en la disposición {family}, leído como {layout}"},
    "geometry": {"en": "Cache", "zh": "缓存", "es": "Caché"},
    "blocks": {"en": "blocks", "zh": "块数", "es": "bloques"},
    "block_size": {"en": "block size", "zh": "块大小", "es": "tamaño de bloque"},
    "heads": {"en": "KV heads", "zh": "KV 头数", "es": "cabezas KV"},
    "dim": {"en": "head dim", "zh": "头维度", "es": "dimensión de cabeza"},
    "dtype": {"en": "dtype", "zh": "数据类型", "es": "tipo"},
    "pick": {"en": "Pick an element", "zh": "选择一个元素", "es": "Elige un elemento"},
    "decode": {"en": "…or paste a byte address", "zh": "……或粘贴一个字节地址", "es": "…o pega una dirección en bytes"},
    "decode_as": {"en": "read the address as", "zh": "按此布局解读地址", "es": "leer la dirección como"},
    "byte": {"en": "byte offset", "zh": "字节偏移", "es": "desplazamiento en bytes"},
    "bad_byte": {"en": "Not a byte address in this cache: {msg}", "zh": "不是该缓存中的字节地址：{msg}",
                 "es": "No es una dirección de esta caché: {msg}"},
    "result": {"en": "{layout}: byte **{byte}** ({hex}; element {el})",
               "zh": "{layout}：字节 **{byte}**（{hex}；元素 {el}）",
               "es": "{layout}: byte **{byte}** ({hex}; elemento {el})"},
    "strides": {"en": "{family} {layout}: {shape_text} = shape {shape}, element strides {strides}",
                "zh": "{family} {layout}：{shape_text} = 形状 {shape}，元素步长 {strides}",
                "es": "{family} {layout}: {shape_text} = forma {shape}, pasos por elemento {strides}"},
    "order": {"en": "Memory order of {family} {layout} {shape_text}: colour = slot (a token; its K and V share the "
                    "colour, the label says K or V and the head), black lines = block boundaries, one line = {n} bytes.",
              "zh": "{family} {layout} {shape_text} 的内存顺序：颜色 = 槽位（一个 token；其 K 与 V 同色，标签写明 K 或 V 及头），"
                    "黑线 = 块边界，每行 = {n} 字节。",
              "es": "Orden en memoria de {family} {layout} {shape_text}: color = slot (un token; su K y su V comparten el "
                    "color, la etiqueta dice K o V y la cabeza), líneas negras = límites de bloque, una línea = {n} bytes."},
    "order_title": {"en": "{layout} {shape_text}", "zh": "{layout} {shape_text}", "es": "{layout} {shape_text}"},
    "too_big": {"en": "The picture is drawn for caches of up to {n} elements; shrink the cache to see it.",
                "zh": "只为不超过 {n} 个元素的缓存绘图；请缩小缓存。",
                "es": "El dibujo se hace para cachés de hasta {n} elementos; reduce la caché para verlo."},
    "changes_title": {"en": "What changes between layouts", "zh": "两种布局之间有什么变化",
                      "es": "Qué cambia entre disposiciones"},
    "changes": {"en": "- Same: the slot, the block table, the slot mapping, the cache's size.\n"
                      "- Different: strides, so the byte address of (K/V, block, offset, head, dim).\n"
                      "- NHD: one token's K for all heads is one contiguous run of heads × dim elements — a KV "
                      "write of one token is one burst (in the packed family, heads × 2·dim with K and V "
                      "interleaved per head).\n"
                      "- HND: one head's K for all tokens of a block is one contiguous run of block_size × dim "
                      "elements — what an attention kernel reading one head wants (FlashInfer requires HND on "
                      "some GPUs; in the packed family a head's rows are 2·dim long, K then V).\n"
                      "- The family moves V: a whole plane away (flash_attn), half a block away (flashinfer), "
                      "right after the same row's K (flashinfer_packed), or right after the same token's K of "
                      "every head (flex_interleaved). Pick one to read real vLLM bytes: the same (block, offset, head, dim) has a different address in each.",
                "zh": "- 相同：槽位、块表、槽位映射、缓存大小。\n"
                      "- 不同：步长，因此（K/V，块，偏移，头，维）的字节地址不同。\n"
                      "- NHD：一个 token 所有头的 K 是连续的 heads × dim 个元素——写入一个 token 的 KV 是一次连续写"
                      "（打包布局族中是 heads × 2·dim，每个头的 K 和 V 交错）。\n"
                      "- HND：一个头在块内所有 token 的 K 是连续的 block_size × dim 个元素——正是读取单个头的注意力内核"
                      "所需要的（FlashInfer 在某些 GPU 上要求 HND；打包布局族中一个头的每行长 2·dim，先 K 后 V）。\n"
                      "- 布局族决定 V 的位置：相隔整个平面（flash_attn）、相隔半个块（flashinfer），紧跟同一行的 K"
                      "（flashinfer_packed），或紧跟同一 token 所有头的 K（flex_interleaved）。"
                      "读取真实 vLLM 字节时请选对布局族：同一（块，偏移，头，维）在各族中的地址不同。",
                "es": "- Igual: el slot, la tabla de bloques, el mapeo de slots, el tamaño de la caché.\n"
                      "- Distinto: los pasos, y por tanto la dirección de (K/V, bloque, desplazamiento, cabeza, dim).\n"
                      "- NHD: la K de un token para todas las cabezas es un tramo contiguo de heads × dim elementos: "
                      "escribir un token es una sola ráfaga (en la familia empaquetada, heads × 2·dim, con K y V "
                      "intercalados por cabeza).\n"
                      "- HND: la K de una cabeza para todos los tokens de un bloque es un tramo contiguo de "
                      "block_size × dim elementos: lo que quiere un kernel de atención que lee una cabeza "
                      "(FlashInfer exige HND en algunas GPU; en la familia empaquetada cada fila de una cabeza mide "
                      "2·dim, K y luego V).\n"
                      "- La familia mueve V: a un plano entero (flash_attn), a medio bloque (flashinfer) o justo "
                      "después de la K de la misma fila (flashinfer_packed) o justo después de la K de "
                      "todas las cabezas del mismo token (flex_interleaved). Elige la correcta para leer bytes reales "
                      "de vLLM: el mismo (bloque, desplazamiento, cabeza, dim) tiene otra dirección en cada una."},
    # the element picker's inputs (short: five of them share half the page) and the decoder's columns
    "p_block": {"en": "block", "zh": "块", "es": "bloque"},
    "p_block_help": {"en": "physical block id", "zh": "物理块 id", "es": "id del bloque físico"},
    "p_offset": {"en": "offset", "zh": "偏移", "es": "despl."},
    "p_offset_help": {"en": "token offset in the block", "zh": "token 在块内的偏移",
                      "es": "desplazamiento del token dentro del bloque"},
    "p_head": {"en": "head", "zh": "头", "es": "cabeza"},
    "p_head_help": {"en": "KV head", "zh": "KV 头", "es": "cabeza KV"},
    "p_dim": {"en": "dim", "zh": "维", "es": "dim"},
    "p_dim_help": {"en": "index in the head dimension", "zh": "头维度中的下标", "es": "índice en la dimensión de la cabeza"},
    "d_block": {"en": "block", "zh": "块", "es": "bloque"},
    "d_offset": {"en": "offset", "zh": "块内偏移", "es": "despl."},
    "d_byte": {"en": "byte in element", "zh": "元素内字节", "es": "byte del elemento"},
    "d_slot": {"en": "slot", "zh": "槽位", "es": "slot"},
    "d_head": {"en": "head", "zh": "头", "es": "cabeza"},
    "d_dim": {"en": "dim", "zh": "维", "es": "dimensión"},
    # --- vLLM v0.29.0+: the standardized [L, B, H, N, C] cache ---
    "order_pick": {"en": "physical order", "zh": "物理顺序", "es": "orden físico"},
    "order_help": {"en": "The order in memory of the five axes L (layer), B (block), H (KV head), N (token in block), "
                         "C (K then V bytes of one head and token); only the orders this backend accepts are listed, "
                         "its default first.",
                   "zh": "五个轴在内存中的顺序：L（层）、B（块）、H（KV 头）、N（块内 token）、C（一个头一个 token 的 K 再 V 字节）；"
                         "只列出该后端接受的顺序，默认的在最前。",
                   "es": "El orden en memoria de los cinco ejes L (capa), B (bloque), H (cabeza KV), N (token del bloque), "
                         "C (bytes de K y luego V de una cabeza y un token); solo se listan los órdenes que este backend "
                         "acepta, el predeterminado primero."},
    "layers": {"en": "layers", "zh": "层数", "es": "capas"},
    "layer": {"en": "layer", "zh": "层", "es": "capa"},
    "sm10x": {"en": "SM10x GPU (Blackwell)", "zh": "SM10x GPU（Blackwell）", "es": "GPU SM10x (Blackwell)"},
    "sm10x_help": {"en": "On SM10x FlashInfer accepts only LBHNC and BLHNC (head-major blocks).",
                   "zh": "在 SM10x 上 FlashInfer 只接受 LBHNC 和 BLHNC（块内按头排列）。",
                   "es": "En SM10x FlashInfer solo acepta LBHNC y BLHNC (bloques por cabeza)."},
    "std_intro": {"en": "From v0.29.0 vLLM allocates **one buffer for every layer**: each layer is a view of the logical "
                        "bytes [L, B, H, N, C] in one of six physical orders (C = (D + Dv) × dtype bytes, K first, then V). "
                        "{backend} accepts {orders}; without VLLM_KV_CACHE_LAYOUT it takes **{default}**. "
                        "Shown: **{order}** = `{shape}`.",
                  "zh": "从 v0.29.0 起 vLLM 为**所有层分配一块缓冲区**：每层是逻辑字节 [L, B, H, N, C] 的一个视图，按六种物理顺序之一排列"
                        "（C = (D + Dv) × 数据类型字节数，先 K 后 V）。{backend} 接受 {orders}；未设置 VLLM_KV_CACHE_LAYOUT 时取 "
                        "**{default}**。当前显示：**{order}** = `{shape}`。",
                  "es": "Desde v0.29.0 vLLM reserva **un solo búfer para todas las capas**: cada capa es una vista de los bytes "
                        "lógicos [L, B, H, N, C] en uno de seis órdenes físicos (C = (D + Dv) × bytes del dtype, primero K, "
                        "luego V). {backend} acepta {orders}; sin VLLM_KV_CACHE_LAYOUT toma **{default}**. Se muestra: "
                        "**{order}** = `{shape}`."},
    "std_result": {"en": "{order}, layer {layer}: byte **{byte}** ({hex}) of the allocation",
                   "zh": "{order}，第 {layer} 层：分配中的第 **{byte}** 字节（{hex}）",
                   "es": "{order}, capa {layer}: byte **{byte}** ({hex}) de la reserva"},
    "std_formula": {"en": "`{formula}` — layer stride {layer_stride}, block stride {block_stride}, page {page_bytes} bytes, "
                          "allocation {total} bytes",
                    "zh": "`{formula}`——层步长 {layer_stride}，块步长 {block_stride}，页 {page_bytes} 字节，分配共 {total} 字节",
                    "es": "`{formula}`: paso de capa {layer_stride}, paso de bloque {block_stride}, página {page_bytes} bytes, "
                          "reserva {total} bytes"},
    "std_extensible": {"en": "v0.34.0 extensible KV cache: the strides describe the reserved capacity and {padded}",
                       "zh": "v0.34.0 可扩展 KV 缓存：步长描述预留容量，且{padded}",
                       "es": "Caché KV extensible de v0.34.0: los pasos describen la capacidad reservada y {padded}"},
    "std_padded": {"en": "each layer region is rounded up to the {granule}-byte VMM granule",
                   "zh": "每层区域向上取整到 {granule} 字节的 VMM 粒度",
                   "es": "cada región de capa se redondea al gránulo VMM de {granule} bytes"},
    "std_unpadded": {"en": "this order has no per-layer regions to pad", "zh": "该顺序没有需要填充的逐层区域",
                     "es": "este orden no tiene regiones por capa que rellenar"},
    "std_groups": {"en": "KV cache groups alias from byte 0: layer l of every group shares these bytes (a block id "
                         "belongs to one group at a time).",
                   "zh": "KV 缓存组从第 0 字节起互相别名：每个组的第 l 层共用这些字节（一个块号同一时刻只属于一个组）。",
                   "es": "Los grupos de caché KV se solapan desde el byte 0: la capa l de cada grupo comparte estos bytes "
                         "(un id de bloque pertenece a un solo grupo a la vez)."},
    "std_picture": {"en": "Where each layer's blocks lie in the allocation ({order}); colour = block, × = the picked element",
                    "zh": "每层的块在分配中的位置（{order}）；颜色 = 块，× = 所选元素",
                    "es": "Dónde están los bloques de cada capa en la reserva ({order}); color = bloque, × = el elemento "
                          "elegido"},
    "std_too_big": {"en": "The picture is drawn for at most {n} bands (layers × blocks × heads).",
                    "zh": "图最多画 {n} 个条带（层 × 块 × 头）。", "es": "La imagen se dibuja con {n} bandas como máximo "
                    "(capas × bloques × cabezas)."},
    "d_layer": {"en": "layer", "zh": "层", "es": "capa"},
    "byte_word": {"en": "byte", "zh": "字节", "es": "byte"},
}
