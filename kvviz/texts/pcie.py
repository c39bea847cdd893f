"""PCIe bytes page prose."""
STRINGS = {
    "title": {"en": "PCIe bytes per step", "zh": "每步 PCIe 字节数", "es": "Bytes PCIe por paso"},
    "intro": {"en": "Every step the host copies some of the step's tables to the GPU, and what it copies depends on the "
                    "vLLM release and the model runner. **V1** commits the block table at **full width** (a row covers "
                    "the max model length), every row of the batch, even when a request uses a few columns and only one "
                    "row in block_size changes per decode step. **Model Runner V2** copies only the **changed entries** "
                    "(its staged writes) and gathers the rest **on the device**. Below: the chosen release's bytes, then "
                    "what cheaper strategies would move instead of V1's commit.",
              "zh": "每一步主机都把本步的部分表复制到 GPU，复制什么取决于 vLLM 版本和模型运行器。**V1** 以**整行宽度**提交块表"
                    "（一行覆盖最大模型长度），批次的每一行都提交，即使请求只用了几列，且每个解码步每 block_size 行只有一行变化。"
                    "**Model Runner V2** 只复制**变化的条目**（暂存写入），其余在**设备上**收集。下面先是所选版本的字节数，"
                    "然后是比 V1 提交更省的策略会传输多少。",
              "es": "En cada paso el host copia algunas tablas del paso a la GPU, y qué copia depende de la versión de vLLM y "
                    "del ejecutor de modelo (model runner). **V1** confirma la tabla de bloques a **ancho completo** (una fila cubre la longitud "
                    "máxima del modelo), todas las filas del lote, aunque una petición use pocas columnas y solo una fila de "
                    "cada block_size cambie por paso de decodificación. **Model Runner V2** copia solo las **entradas "
                    "cambiadas** (sus escrituras preparadas) y reúne el resto **en el dispositivo**. Abajo: los bytes de la "
                    "versión elegida y lo que moverían estrategias más baratas que la confirmación de V1."},
    "num_reqs": {"en": "Requests in the batch", "zh": "批次中的请求数", "es": "Peticiones en el lote"},
    "context": {"en": "Context length (tokens)", "zh": "上下文长度（token）", "es": "Longitud de contexto (tokens)"},
    "block_size": {"en": "Block size", "zh": "块大小", "es": "Tamaño de bloque"},
    "max_len": {"en": "Max model length", "zh": "最大模型长度", "es": "Longitud máxima del modelo"},
    "query": {"en": "Tokens per request this step (1 = decode)", "zh": "本步每个请求的 token 数（1 = 解码）",
              "es": "Tokens por petición en este paso (1 = decodificación)"},
    "max_reqs": {"en": "Max requests (max_num_seqs)", "zh": "最大请求数（max_num_seqs）",
                 "es": "Peticiones máximas (max_num_seqs)"},
    "max_reqs_help": {"en": "Request-state rows: MRV2 publishes num_blocks for every one and copies query_start_loc "
                            "for every one each step.",
                      "zh": "请求状态行数：MRV2 每步为每一行发布 num_blocks，并为每一行复制 query_start_loc。",
                      "es": "Filas de estado de petición: MRV2 publica num_blocks de cada una y copia query_start_loc "
                            "de cada una en cada paso."},
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
    "s_full": {"en": "full width (vLLM V1)", "zh": "整行宽度（vLLM V1）", "es": "ancho completo (vLLM V1)"},
    "s_v2": {"en": "Model Runner V2 (changed entries)", "zh": "Model Runner V2（仅变化的表项）",
             "es": "Model Runner V2 (solo entradas cambiadas)"},
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
    # --- the chosen release's step (kvviz.core.step_bytes; kvviz.views.pcie) ---
    "release_title": {"en": "This step in vLLM {version}, {runner}", "zh": "vLLM {version}、{runner} 下的这一步",
                      "es": "Este paso en vLLM {version}, {runner}"},
    "col_part": {"en": "what", "zh": "内容", "es": "qué"},
    "col_link": {"en": "moves", "zh": "传输", "es": "se mueve"},
    "link_pcie": {"en": "host → device (PCIe)", "zh": "主机 → 设备（PCIe）", "es": "host → dispositivo (PCIe)"},
    "link_device": {"en": "on the device (no PCIe)", "zh": "设备上（不经 PCIe）", "es": "en el dispositivo (sin PCIe)"},
    "t_staged": {"en": "staged writes (apply_staged_writes)", "zh": "暂存写入（apply_staged_writes）",
                 "es": "escrituras preparadas (apply_staged_writes)"},
    "t_num_blocks": {"en": "num_blocks counts", "zh": "num_blocks 计数", "es": "contadores num_blocks"},
    "t_pos_seq": {"en": "positions, seq_lens", "zh": "positions、seq_lens", "es": "positions, seq_lens"},
    "t_slot_mapping": {"en": "slot mapping", "zh": "slot mapping（槽位映射）", "es": "slot mapping (mapa de slots)"},
    "t_gather": {"en": "gather (state rows → input table)", "zh": "gather（状态行 → 输入表）",
                 "es": "gather (filas de estado → tabla de entrada)"},
    "t_pcie_total": {"en": "host → device total", "zh": "主机 → 设备合计", "es": "total host → dispositivo"},
    "v1_commit": {"en": "V1 commits rows [0, {n}) at full width: {n} × {w} entries × 4 B = {b} B, whether a row "
                        "changed or not (about {d} of {n} rows changed this step).",
                  "zh": "V1 以整行宽度提交行 [0, {n})：{n} × {w} 个条目 × 4 B = {b} B，不论行是否变化"
                        "（本步约 {d}/{n} 行变化）。",
                  "es": "V1 confirma las filas [0, {n}) a ancho completo: {n} × {w} entradas × 4 B = {b} B, haya "
                        "cambiado la fila o no (unas {d} de {n} filas cambiaron en este paso)."},
    "v1_slot_host": {"en": "Before {since} V1 computes the slot mapping on the host and copies it too: {b} B "
                           "(int64 per token).",
                     "zh": "{since} 之前 V1 在主机上计算 slot mapping 并一并复制：{b} B（每个 token 一个 int64）。",
                     "es": "Antes de {since} V1 calcula el slot mapping en el host y también lo copia: {b} B "
                           "(int64 por token)."},
    "v2_staged": {"en": "Model Runner V2's apply_staged_writes copies only the changed entries: {k} staged write(s) "
                        "of {e} id(s) = {w} B (4 B an id, 8 B a write's row and start), plus the num_blocks counts of "
                        "all {m} request states = {c} B: {s} B, the sum the Step through page records for a step.",
                  "zh": "Model Runner V2 的 apply_staged_writes 只复制变化的条目：{k} 个暂存写入共 {e} 个 id = {w} B"
                        "（每个 id 4 B，每个写入的行与起点 8 B），加上全部 {m} 个请求状态的 num_blocks 计数 = {c} B："
                        "共 {s} B，即单步演示页为一步记录的总和。",
                  "es": "apply_staged_writes de Model Runner V2 copia solo las entradas cambiadas: {k} escritura(s) "
                        "preparada(s) de {e} id(s) = {w} B (4 B por id, 8 B por la fila y el inicio de cada escritura), "
                        "más los contadores num_blocks de los {m} estados de petición = {c} B: {s} B, la suma que la "
                        "página Paso a paso registra para un paso."},
    "v2_inputs": {"en": "Its per-step inputs: idx_mapping, {ib} B a request = {i} B, and the whole query_start_loc "
                        "buffer ({m} + 1 int32) = {q} B.",
                  "zh": "每步输入：idx_mapping，每个请求 {ib} B = {i} B；以及整个 query_start_loc 缓冲区"
                        "（{m} + 1 个 int32）= {q} B。",
                  "es": "Sus entradas por paso: idx_mapping, {ib} B por petición = {i} B, y el búfer query_start_loc "
                        "entero ({m} + 1 int32) = {q} B."},
    "v2_gather": {"en": "The gather copies each scheduled state row's first num_blocks entries into the input table "
                        "on the GPU: {g} B read and written there, device bytes, not PCIe bytes. Positions, seq_lens "
                        "and the slot mapping are computed on the device too.",
                  "zh": "gather 在 GPU 上把每个被调度状态行的前 num_blocks 个条目复制到输入表：在那里读写 {g} B，"
                        "是设备字节，不是 PCIe 字节。positions、seq_lens 和 slot mapping 也在设备上计算。",
                  "es": "El gather copia en la GPU las primeras num_blocks entradas de cada fila de estado programada "
                        "a la tabla de entrada: {g} B leídos y escritos allí, bytes del dispositivo, no de PCIe. "
                        "Positions, seq_lens y el slot mapping también se calculan en el dispositivo."},
    "release_total": {"en": "Host → device in all: {b} B (model: {us} µs).",
                      "zh": "主机 → 设备合计：{b} B（模型：{us} µs）。",
                      "es": "Host → dispositivo en total: {b} B (modelo: {us} µs)."},
    "whatif_v2": {"en": "The strategies below are what-ifs for V1's full-width commit (vLLM {version}'s V1); under "
                        "Model Runner V2 this step copies {b} B over PCIe (above).",
                  "zh": "下面的策略是针对 V1 整行宽度提交的假设（vLLM {version} 的 V1）；在 Model Runner V2 下这一步经 "
                        "PCIe 复制 {b} B（见上）。",
                  "es": "Las estrategias de abajo son hipótesis sobre la confirmación a ancho completo de V1 (el V1 de "
                        "vLLM {version}); con Model Runner V2 este paso copia {b} B por PCIe (arriba)."},
    "whatif_no_v1": {"en": "vLLM {version} has no V1 model runner: the what-ifs below follow V1 as it was in {last}, "
                           "the last release with V1; this release's step copies {b} B over PCIe (above).",
                     "zh": "vLLM {version} 没有 V1 模型运行器：下面的假设按最后一个带 V1 的版本 {last} 计算；"
                           "本版本这一步经 PCIe 复制 {b} B（见上）。",
                     "es": "vLLM {version} no tiene el ejecutor de modelo V1: las hipótesis de abajo siguen a V1 tal como era "
                           "en {last}, la última versión con V1; el paso de esta versión copia {b} B por PCIe (arriba)."},
}
