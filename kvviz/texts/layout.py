"""Memory-layout page prose."""
STRINGS = {
    "title": {"en": "Memory layout: NHD vs HND", "zh": "内存布局：NHD 与 HND", "es": "Disposición en memoria: NHD frente a HND"},
    "intro": {"en": "One layer's cache is one tensor, K plane then V plane. **NHD** stores, inside a block, token "
                    "after token, each token's heads together: `[2, blocks, block_size, heads, dim]`. **HND** stores "
                    "head after head, each head's tokens together: `[2, blocks, heads, block_size, dim]`. The slot "
                    "(block × block_size + offset) is the same in both; only the byte address changes.",
              "zh": "一层的缓存是一个张量，先 K 平面后 V 平面。**NHD** 在块内按 token 依次存放，同一 token 的各个头相邻："
                    "`[2, blocks, block_size, heads, dim]`。**HND** 按头依次存放，同一个头的各 token 相邻："
                    "`[2, blocks, heads, block_size, dim]`。两种布局的槽位（块 × 块大小 + 偏移）相同，只有字节地址不同。",
              "es": "La caché de una capa es un tensor, plano K y luego plano V. **NHD** guarda, dentro de un bloque, token "
                    "tras token, con las cabezas de cada token juntas: `[2, blocks, block_size, heads, dim]`. **HND** "
                    "guarda cabeza tras cabeza, con los tokens de cada cabeza juntos: `[2, blocks, heads, block_size, "
                    "dim]`. El slot (bloque × block_size + desplazamiento) es el mismo; solo cambia la dirección."},
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
    "result": {"en": "{layout}: byte **{byte}** (element {el})", "zh": "{layout}：字节 **{byte}**（元素 {el}）",
               "es": "{layout}: byte **{byte}** (elemento {el})"},
    "strides": {"en": "{layout} element strides {strides}", "zh": "{layout} 元素步长 {strides}",
                "es": "{layout} pasos por elemento {strides}"},
    "order": {"en": "Memory order, {layout} (colour = slot, label = head; one line = {n} bytes)",
              "zh": "内存顺序，{layout}（颜色 = 槽位，标签 = 头；每行 = {n} 字节）",
              "es": "Orden en memoria, {layout} (color = slot, etiqueta = cabeza; una línea = {n} bytes)"},
    "too_big": {"en": "The picture is drawn for caches of up to {n} elements; shrink the cache to see it.",
                "zh": "只为不超过 {n} 个元素的缓存绘图；请缩小缓存。",
                "es": "El dibujo se hace para cachés de hasta {n} elementos; reduce la caché para verlo."},
    "changes_title": {"en": "What changes between layouts", "zh": "两种布局之间有什么变化",
                      "es": "Qué cambia entre disposiciones"},
    "changes": {"en": "- Same: the slot, the block table, the slot mapping, the cache's size.\n"
                      "- Different: strides, so the byte address of (block, offset, head, dim).\n"
                      "- NHD: one token's K for all heads is one contiguous run of heads × dim elements — a KV "
                      "write of one token is one burst.\n"
                      "- HND: one head's K for all tokens of a block is one contiguous run of block_size × dim "
                      "elements — what an attention kernel reading one head wants (FlashInfer requires HND on "
                      "some GPUs).",
                "zh": "- 相同：槽位、块表、槽位映射、缓存大小。\n"
                      "- 不同：步长，因此 (块, 偏移, 头, 维) 的字节地址不同。\n"
                      "- NHD：一个 token 所有头的 K 是连续的 heads × dim 个元素——写入一个 token 的 KV 是一次连续写。\n"
                      "- HND：一个头在块内所有 token 的 K 是连续的 block_size × dim 个元素——正是读取单个头的注意力内核"
                      "所需要的（FlashInfer 在某些 GPU 上要求 HND）。",
                "es": "- Igual: el slot, la tabla de bloques, el mapeo de slots, el tamaño de la caché.\n"
                      "- Distinto: los pasos, y por tanto la dirección de (bloque, desplazamiento, cabeza, dim).\n"
                      "- NHD: la K de un token para todas las cabezas es un tramo contiguo de heads × dim elementos: "
                      "escribir un token es una sola ráfaga.\n"
                      "- HND: la K de una cabeza para todos los tokens de un bloque es un tramo contiguo de "
                      "block_size × dim elementos: lo que quiere un kernel de atención que lee una cabeza "
                      "(FlashInfer exige HND en algunas GPU)."},
}
