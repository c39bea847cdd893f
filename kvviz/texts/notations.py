"""Prose of the notations page (one batch, six engines' arrays)."""

STRINGS = {
    "title": {"en": "Six notations, one batch", "zh": "同一批次的六种记法", "es": "Seis notaciones, un mismo lote"},
    "intro": {
        "en": "Every engine answers the same question — where does token *p* of request *r* keep its K and V? — with different arrays. Below is one batch written down six ways. Pick a token: it is highlighted in each, and each notation's own arithmetic lands on the same slot.",
        "zh": "每个引擎回答的都是同一个问题——请求 *r* 的第 *p* 个 token 的 K 和 V 存在哪里？——只是用的数组不同。下面把同一个批次用六种方式写出来。选一个 token：它在每种记法里都会高亮，每种记法按自己的算法都落到同一个槽号。",
        "es": "Todos los motores responden a la misma pregunta —¿dónde guarda el token *p* de la petición *r* su K y su V?— con arrays distintos. Abajo, un mismo lote escrito de seis maneras. Elige un token: se resalta en cada una, y la aritmética propia de cada notación llega al mismo slot.",
    },
    "batch": {
        "en": "The batch: A and B share a 256-token system prompt (two 128-token pages, a prefix-cache hit for B); A decodes one token, B prefills its last 14, C prefills 40. The KV manager allocates 128-token pages, so the DeepInfer interval form can hold the batch too.",
        "zh": "这个批次：A 和 B 共享 256 个 token 的系统提示（两个 128 token 的页，B 命中前缀缓存）；A 解码一个 token，B 预填最后 14 个，C 预填 40 个。KV 管理器按 128 token 的页分配，因此 DeepInfer 的区间形式也能表示这个批次。",
        "es": "El lote: A y B comparten un prompt de sistema de 256 tokens (dos páginas de 128 tokens, un acierto de caché de prefijos para B); A decodifica un token, B hace el prefill de sus últimos 14 y C de 40. El gestor KV asigna páginas de 128 tokens, así que la forma de intervalos de DeepInfer también puede contener el lote.",
    },
    "page_size": {"en": "Block / page size for vLLM, FlashInfer and TensorRT-LLM",
                  "zh": "vLLM、FlashInfer 与 TensorRT-LLM 的块 / 页大小",
                  "es": "Tamaño de bloque / página para vLLM, FlashInfer y TensorRT-LLM"},
    "request": {"en": "Request", "zh": "请求", "es": "Petición"},
    "position": {"en": "Token position", "zh": "token 位置", "es": "Posición del token"},
    "answer": {
        "en": "Token {pos} of request {req} is at slot **{slot}** in every notation (block {block} of {bs} tokens, offset {off}).",
        "zh": "请求 {req} 的 token {pos} 在每种记法里都位于槽 **{slot}**（{bs} token 一块的第 {block} 块，偏移 {off}）。",
        "es": "El token {pos} de la petición {req} está en el slot **{slot}** en todas las notaciones (bloque {block} de {bs} tokens, desplazamiento {off}).",
    },
    "shared": {
        "en": "This token is shared: requests {reqs} read the same slot.",
        "zh": "这个 token 是共享的：请求 {reqs} 读的是同一个槽。",
        "es": "Este token es compartido: las peticiones {reqs} leen el mismo slot.",
    },
    "new_token": {
        "en": "This token is computed in this step, so it also appears in the per-token write list (slot_mapping / out_cache_loc / ubatch).",
        "zh": "这个 token 在本步计算，所以它也出现在逐 token 的写入列表里（slot_mapping / out_cache_loc / ubatch）。",
        "es": "Este token se calcula en este paso, así que también aparece en la lista de escrituras por token (slot_mapping / out_cache_loc / ubatch).",
    },
    "old_token": {
        "en": "This token was written in an earlier step: only the tables that map positions find it.",
        "zh": "这个 token 是更早的步写入的：只有映射位置的表能找到它。",
        "es": "Este token se escribió en un paso anterior: solo lo encuentran las tablas que mapean posiciones.",
    },
    "marks": {"en": "In each notation's arrays, the cells on a yellow ground are the ones it reads to find this token; "
                    "the other cells carry no colour.",
              "zh": "每种记法的数组里，黄底的格子是它找到这个 token 时读取的格子；其余格子不着色。",
              "es": "En los arrays de cada notación, las celdas con fondo amarillo son las que lee para encontrar este "
                    "token; las demás no llevan color."},
    "lookup": {"en": "How it finds the token:", "zh": "如何找到这个 token：", "es": "Cómo encuentra el token:"},
    "list_sep": {"en": ", ", "zh": "、", "es": ", "},
    "not_representable": {
        "en": "Cannot be written in this notation: {why}",
        "zh": "无法用这种记法表示：{why}",
        "es": "No se puede escribir en esta notación: {why}",
    },
    "d_vllm": {
        "en": "A 2-D block table, one row per request (int32, 128-token aligned width), plus a slot per new token computed every step.",
        "zh": "二维块表，每个请求一行（int32，宽度按 128 token 对齐），外加每步重算的逐新 token 槽号。",
        "es": "Una tabla de bloques 2-D, una fila por petición (int32, ancho alineado a 128 tokens), más un slot por token nuevo calculado en cada paso.",
    },
    "d_flashinfer": {
        "en": "CSR: the pages of all requests packed one after another; indptr says where each request's pages start; last_page_len how full its last page is.",
        "zh": "CSR：所有请求的页首尾相接；indptr 指出每个请求的页从哪里开始；last_page_len 表示最后一页用了多少。",
        "es": "CSR: las páginas de todas las peticiones, una tras otra; indptr dice dónde empiezan las de cada petición y last_page_len cuánto ocupa su última página.",
    },
    "d_sglang": {
        "en": "Page size 1: req_to_token maps each position straight to its slot — no multiplication, but the table is as wide as the context. Row 0 is a dummy; out_cache_loc lists the slots written this step.",
        "zh": "页大小为 1：req_to_token 把每个位置直接映射到槽号——省掉乘法，但表宽等于上下文长度。第 0 行是占位行；out_cache_loc 列出本步写入的槽。",
        "es": "Página de tamaño 1: req_to_token lleva cada posición directamente a su slot; no hay multiplicación, pero la tabla es tan ancha como el contexto. La fila 0 es ficticia; out_cache_loc lista los slots escritos en este paso.",
    },
    "d_trtllm": {
        "en": "kv_cache_block_offsets[pool, sequence, K|V, block]: separate K and V indices into a pool laid out as [blocks, layers, 2, …]; one layer here, so K = 2·block and V = 2·block + 1.",
        "zh": "kv_cache_block_offsets[池, 序列, K|V, 块]：K 和 V 各有一个下标，指向按 [块, 层, 2, …] 排布的池；这里只有一层，所以 K = 2·块，V = 2·块 + 1。",
        "es": "kv_cache_block_offsets[pool, secuencia, K|V, bloque]: índices separados para K y V en un pool dispuesto como [bloques, capas, 2, …]; aquí hay una capa, así que K = 2·bloque y V = 2·bloque + 1.",
    },
    "d_llamacpp": {
        "en": "No pages: cells tagged with the position they hold. By default (kv_unified = false) every sequence has its own stream of cells (n_ctx / n_seq_max cells each), so a prefix several sequences share is stored once in each stream, as a copy. The slot column is kvviz's, not llama.cpp's: the slot of the canonical batch whose K and V the cell holds.",
        "zh": "不分页：每个单元（cell）标着它存的位置。默认（kv_unified = false）每个序列有自己的一条单元流（每条 n_ctx / n_seq_max 个单元），所以几个序列共享的前缀在每条流里各存一份副本。槽这一列是 kvviz 加的，不是 llama.cpp 的数组：它表示该单元存的是规范批次里哪个槽的 K 和 V。",
        "es": "Sin páginas: celdas etiquetadas con la posición que guardan. Por defecto (kv_unified = false) cada secuencia tiene su propio flujo de celdas (n_ctx / n_seq_max celdas cada uno), así que un prefijo que comparten varias secuencias se guarda una vez en cada flujo, como copia. La columna slot es de kvviz, no de llama.cpp: el slot del lote canónico cuyos K y V guarda la celda.",
    },
    "d_llamacpp_unified": {
        "en": "kv_unified = true (--kv-unified / -kvu; not llama.cpp's default, though recent llama-server versions turn it on when the number of slots, -np, is left on auto): one array of cells for all sequences, one per slot, each tagged with its position and the set of sequence ids that see it. A shared prefix is one cell with several ids.",
        "zh": "kv_unified = true（--kv-unified / -kvu；不是 llama.cpp 的默认值，不过较新的 llama-server 在槽位数 -np 保持自动时会自行打开它）：所有序列共用一个单元数组，每个单元对应一个槽，标着它的位置和能看到它的序列 id 集合。共享前缀就是一个带多个 id 的单元。",
        "es": "kv_unified = true (--kv-unified / -kvu; no es el valor por defecto de llama.cpp, aunque las versiones recientes de llama-server lo activan cuando el número de ranuras, -np, se deja en automático): un solo array de celdas para todas las secuencias, una por slot, cada una etiquetada con su posición y el conjunto de ids de secuencia que la ven. Un prefijo compartido es una celda con varios ids.",
    },
    "kv_unified": {
        "en": "unified KV cache (kv_unified = true; llama.cpp default: false)",
        "zh": "统一 KV 缓存（kv_unified = true；llama.cpp 默认：false）",
        "es": "caché KV unificada (kv_unified = true; por defecto en llama.cpp: false)",
    },
    "kv_unified_help": {
        "en": "Off (llama.cpp's default, kv_unified = false in llama_context_default_params): one stream of cells per sequence, and a shared prefix is copied into each stream. On (--kv-unified / -kvu): one cell array for every sequence, and a shared prefix is one set of cells carrying several sequence ids.",
        "zh": "关闭（llama.cpp 的默认值，llama_context_default_params 里 kv_unified = false）：每个序列一条单元流，共享前缀复制到每条流里。打开（--kv-unified / -kvu）：所有序列共用一个单元数组，共享前缀只存一份，单元上带多个序列 id。",
        "es": "Desactivado (el valor por defecto de llama.cpp, kv_unified = false en llama_context_default_params): un flujo de celdas por secuencia, y un prefijo compartido se copia en cada flujo. Activado (--kv-unified / -kvu): un solo array de celdas para todas las secuencias, y un prefijo compartido es un único conjunto de celdas con varios ids de secuencia.",
    },
    "d_deepinfer": {
        "en": "Fixed 128-token blocks, and per request a list of (start page, length) runs. A run breaks wherever the next logical page is not the next physical page: here after B's shared prefix.",
        "zh": "固定 128 token 的块，每个请求一串（起始页，长度）区间。只要下一个逻辑页不是下一个物理页，区间就断开：这里是在 B 的共享前缀之后。",
        "es": "Bloques fijos de 128 tokens y, por petición, una lista de tramos (página inicial, longitud). Un tramo se corta donde la siguiente página lógica no es la siguiente física: aquí, tras el prefijo compartido de B.",
    },
    "roundtrip": {"en": "Round trips: notation → canonical → notation", "zh": "往返转换：记法 → 规范形式 → 记法",
                  "es": "Idas y vueltas: notación → forma canónica → notación"},
    "roundtrip_help": {
        "en": "Each cell converts the batch from the row's notation back to the canonical form (a slot per token) and into the column's, then counts tokens whose slot changed. Every cell should be 0.",
        "zh": "每个格子把批次从行对应的记法转回规范形式（每个 token 一个槽），再转成列对应的记法，统计槽号变了的 token 数。每格都应为 0。",
        "es": "Cada celda convierte el lote desde la notación de la fila a la forma canónica (un slot por token) y de ahí a la de la columna, y cuenta los tokens cuyo slot cambió. Todas las celdas deberían valer 0.",
    },
    "arrays": {"en": "All arrays (JSON)", "zh": "全部数组（JSON）", "es": "Todos los arrays (JSON)"},

    # --- the arrays' labels and each notation's lookup line (kvviz/notation_views.py) -----------
    "v.row": {"en": "row {r} ({q})", "zh": "第 {r} 行（{q}）", "es": "fila {r} ({q})"},
    "v.dummy": {"en": "0 (dummy)", "zh": "0（占位）", "es": "0 (ficticia)"},
    "v.positions": {"en": "positions", "zh": "位置", "es": "posiciones"},
    "v.cell": {"en": "cell {c}", "zh": "单元 {c}", "es": "celda {c}"},
    "v.cells": {"en": "cells {lo}–{hi} of {n}", "zh": "单元 {lo}–{hi}（共 {n} 个）", "es": "celdas {lo}–{hi} de {n}"},
    "v.ubatch_cell": {"en": "ubatch cell", "zh": "ubatch 单元", "es": "celda del ubatch"},
    "v.run": {"en": "run {k}", "zh": "区间 {k}", "es": "tramo {k}"},
    "v.runs": {"en": "(start_page, length) runs over {p}-token pages", "zh": "（start_page, length）区间，页大小 {p} 个 token",
               "es": "tramos (start_page, length) sobre páginas de {p} tokens"},
    "v.request": {"en": "request", "zh": "请求", "es": "petición"},
    "v.from": {"en": "from", "zh": "从", "es": "desde"},
    "v.to": {"en": "to", "zh": "到", "es": "hacia"},
    "v.slots": {"en": "slots", "zh": "槽", "es": "slots"},
    "v.lookup_trtllm": {
        "en": "kv_cache_block_offsets[0, {i}, K, {j}] = {k} (V {v});  {k} // {l2} = block {b};  {b} × {tpb} + {off} = **{slot}**",
        "zh": "kv_cache_block_offsets[0, {i}, K, {j}] = {k}(V {v});  {k} // {l2} = 块 {b};  {b} × {tpb} + {off} = **{slot}**",
        "es": "kv_cache_block_offsets[0, {i}, K, {j}] = {k} (V {v});  {k} // {l2} = bloque {b};  {b} × {tpb} + {off} = **{slot}**",
    },
    "v.lookup_llamacpp": {
        "en": "the cell with pos = {pos} and seq {i} ∈ {{{ids}}}: cell **{cell}**",
        "zh": "pos = {pos} 且 seq {i} ∈ {{{ids}}} 的单元：单元 **{cell}**",
        "es": "la celda con pos = {pos} y seq {i} ∈ {{{ids}}}: celda **{cell}**",
    },
    "v.lookup_llamacpp_streams": {
        "en": "seq {i} → stream {i}; its cell with pos = {pos}: cell {cell}, which holds the K/V of slot **{slot}**",
        "zh": "seq {i} → 流 {i}；流中 pos = {pos} 的单元：单元 {cell}，其中存的 K/V 属于槽 **{slot}**",
        "es": "seq {i} → flujo {i}; su celda con pos = {pos}: celda {cell}, que guarda el K/V del slot **{slot}**",
    },
    "v.stream": {"en": "stream {s}", "zh": "流 {s}", "es": "flujo {s}"},
    "v.stream_cells": {"en": "stream {s}: cells {lo}–{hi} of {n}", "zh": "流 {s}：单元 {lo}–{hi}（共 {n} 个）",
                       "es": "flujo {s}: celdas {lo}–{hi} de {n}"},
    "v.streams_at": {
        "en": "position {pos} in each stream (the same slot in two streams: two copies of one token)",
        "zh": "各条流里的位置 {pos}（两条流里槽相同：同一个 token 的两份副本）",
        "es": "la posición {pos} en cada flujo (el mismo slot en dos flujos: dos copias de un mismo token)",
    },
    "v.used": {"en": "cells in use", "zh": "已用单元", "es": "celdas en uso"},
    "v.cell_col": {"en": "cell", "zh": "单元", "es": "celda"},
    "v.slot_col": {"en": "slot (kvviz)", "zh": "槽（kvviz）", "es": "slot (kvviz)"},
    "v.ubatch_streams": {
        "en": "ubatch  [{n}]: each cell is inside the stream of its seq_id (llama.cpp splits these tokens into ubatches taking as many tokens from each sequence)",
        "zh": "ubatch  [{n}]：每个单元都在其 seq_id 对应的流里（llama.cpp 会把这些 token 切成每个序列 token 数相同的若干 ubatch）",
        "es": "ubatch  [{n}]: cada celda está dentro del flujo de su seq_id (llama.cpp reparte estos tokens en ubatches que toman el mismo número de tokens de cada secuencia)",
    },
    "v.llama_used_streams": {
        "en": "Cells in use: {n} = {parts}, one stream per sequence ({k} streams). {copies} of them are copies of a prefix another stream also holds; the unified cache would take {m}.",
        "zh": "已用单元：{n} = {parts}，每个序列一条流（共 {k} 条）。其中 {copies} 个是另一条流里也有的前缀的副本；统一缓存只需 {m} 个。",
        "es": "Celdas en uso: {n} = {parts}, un flujo por secuencia ({k} flujos). {copies} de ellas son copias de un prefijo que otro flujo también guarda; la caché unificada ocuparía {m}.",
    },
    "v.llama_used_unified": {
        "en": "Cells in use: {n}, in one array for every sequence; {shared} of them carry several sequence ids. One stream per sequence (llama.cpp's default) would take {m}.",
        "zh": "已用单元：{n}，所有序列共用一个数组；其中 {shared} 个单元带多个序列 id。每个序列一条流（llama.cpp 的默认）则需要 {m} 个。",
        "es": "Celdas en uso: {n}, en un solo array para todas las secuencias; {shared} de ellas llevan varios ids de secuencia. Un flujo por secuencia (lo que hace llama.cpp por defecto) ocuparía {m}.",
    },
    "v.lookup_deepinfer": {
        "en": "run {d} = ({s}, {n}), its page {rp} → page {pg};  {pg} × {ps} + {off} = **{slot}**",
        "zh": "区间 {d} = ({s}, {n})，其中第 {rp} 页 → 页 {pg};  {pg} × {ps} + {off} = **{slot}**",
        "es": "tramo {d} = ({s}, {n}), su página {rp} → página {pg};  {pg} × {ps} + {off} = **{slot}**",
    },
}
