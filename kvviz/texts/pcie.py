"""PCIe bytes page prose."""
STRINGS = {
    "title": {"en": "PCIe bytes per step", "zh": "每步 PCIe 字节数", "es": "Bytes PCIe por paso"},
    "intro": {"en": "Every step the host copies the step's tables to the GPU. The block table is committed at **full "
                    "width** (a row covers max model length), even when a request uses a few columns and only one "
                    "row in block_size changes per decode step. These are the bytes, and what cheaper strategies "
                    "would move.",
              "zh": "每一步主机都把本步的表复制到 GPU。块表以**整行宽度**提交（一行覆盖最大模型长度），即使请求只用了几列，"
                    "且每个解码步每 block_size 行只有一行变化。下面是这些字节数，以及更省的策略会传输多少。",
              "es": "En cada paso el host copia las tablas del paso a la GPU. La tabla de bloques se confirma a **ancho "
                    "completo** (una fila cubre la longitud máxima del modelo), aunque una petición use pocas columnas "
                    "y solo una fila de cada block_size cambie por paso de decodificación. Estos son los bytes, y lo que "
                    "moverían estrategias más baratas."},
    "num_reqs": {"en": "Requests in the batch", "zh": "批次中的请求数", "es": "Peticiones en el lote"},
    "context": {"en": "Context length (tokens)", "zh": "上下文长度（token）", "es": "Longitud de contexto (tokens)"},
    "block_size": {"en": "Block size", "zh": "块大小", "es": "Tamaño de bloque"},
    "max_len": {"en": "Max model length", "zh": "最大模型长度", "es": "Longitud máxima del modelo"},
    "query": {"en": "Tokens per request this step (1 = decode)", "zh": "本步每个请求的 token 数（1 = 解码）",
              "es": "Tokens por petición en este paso (1 = decodificación)"},
    "host_idx": {"en": "CSR indices copied from the host (older path)", "zh": "CSR indices 从主机复制（旧路径）",
                 "es": "indices del CSR copiados desde el host (ruta antigua)"},
    "bad": {"en": "These sizes do not make a step: {msg}", "zh": "这些尺寸无法构成一步：{msg}",
            "es": "Estos tamaños no forman un paso: {msg}"},
    "width": {"en": "Table width: {w} columns ({t} tokens per row); {u} used per request; about {d} of {n} rows "
                    "change per step.",
              "zh": "表宽：{w} 列（每行 {t} 个 token）；每个请求用 {u} 列；每步约 {d}/{n} 行发生变化。",
              "es": "Ancho de la tabla: {w} columnas ({t} tokens por fila); {u} usadas por petición; unas {d} de {n} "
                    "filas cambian por paso."},
    "components": {"en": "Bytes per table and strategy", "zh": "按表和策略划分的字节数", "es": "Bytes por tabla y estrategia"},
    "stacked": {"en": "Bytes per step, by strategy", "zh": "按策略的每步字节数", "es": "Bytes por paso, por estrategia"},
    "vs_batch": {"en": "…as the batch grows", "zh": "……随批次增大", "es": "…al crecer el lote"},
    "vs_context": {"en": "…as the context grows", "zh": "……随上下文增长", "es": "…al crecer el contexto"},
    "vs_block": {"en": "…as the block size changes", "zh": "……随块大小变化", "es": "…al cambiar el tamaño de bloque"},
    "measured": {"en": "Measured on this GPU", "zh": "在此 GPU 上实测", "es": "Medido en esta GPU"},
    "measure": {"en": "Measure the copies", "zh": "测量复制时间", "es": "Medir las copias"},
    "no_gpu_cell": {"en": "—, no GPU here", "zh": "—，此处无 GPU", "es": "—, sin GPU aquí"},
    "not_measured_cell": {"en": "— (press Measure the copies)", "zh": "—（按“测量复制时间”）", "es": "— (pulse Medir las copias)"},
    "no_gpu": {"en": "No GPU here, so no copy to time: the model below assumes {g} GB/s and {l} µs per copy.",
               "zh": "此处没有 GPU，无法计时：下面的模型假设 {g} GB/s、每次复制 {l} µs。",
               "es": "Aquí no hay GPU, así que no hay copia que medir: el modelo supone {g} GB/s y {l} µs por copia."},
    "model_note": {"en": "Model: {l} µs + bytes at {g} GB/s (pinned host memory).",
                   "zh": "模型：{l} µs + 以 {g} GB/s 传输字节（锁页主机内存）。",
                   "es": "Modelo: {l} µs + bytes a {g} GB/s (memoria del host fijada)."},
    # the four strategies (traffic.STRATEGIES, in that order) and the tables' labels
    "s_full": {"en": "full width (vLLM)", "zh": "整行宽度（vLLM）", "es": "ancho completo (vLLM)"},
    "s_prefix": {"en": "valid prefix only", "zh": "仅有效前缀", "es": "solo el prefijo válido"},
    "s_dirty": {"en": "dirty rows only", "zh": "仅变化的行", "es": "solo filas cambiadas"},
    "s_dirty_prefix": {"en": "dirty rows, valid prefix", "zh": "变化的行，有效前缀", "es": "filas cambiadas, prefijo válido"},
    "col_table": {"en": "table", "zh": "表", "es": "tabla"},
    "col_strategy": {"en": "strategy", "zh": "策略", "es": "estrategia"},
    "col_bytes": {"en": "bytes", "zh": "字节", "es": "bytes"},
    "col_model": {"en": "model µs", "zh": "模型 µs", "es": "µs del modelo"},
    "col_measured": {"en": "measured µs", "zh": "实测 µs", "es": "µs medidos"},
    "t_block_table": {"en": "block table", "zh": "块表", "es": "tabla de bloques"},
    "t_positions": {"en": "positions", "zh": "positions（位置）", "es": "positions (posiciones)"},
    "t_total": {"en": "total", "zh": "合计", "es": "total"},
}
