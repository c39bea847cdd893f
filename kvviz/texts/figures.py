"""Axis titles, legends and hover texts of kvviz.views.figures (plotly %{...} placeholders kept as is)."""
STRINGS = {
    "row": {"en": "request row", "zh": "请求行", "es": "fila de la petición"},
    "column": {"en": "column (kernel block index in the row)", "zh": "列（行内的内核块序号）",
               "es": "columna (bloque de kernel dentro de la fila)"},
    "physical_block": {"en": "physical block", "zh": "物理块", "es": "bloque físico"},
    "padded_rows": {"en": "CUDA-graph padding rows (null block)", "zh": "CUDA graph 填充行（空块）",
                    "es": "filas de relleno de CUDA graph (bloque nulo)"},
    "hover_table": {"en": "row %{y}, column %{x}<br>logical block %{customdata[0]}<br>physical block %{z}",
                    "zh": "行 %{y}，列 %{x}<br>逻辑块 %{customdata[0]}<br>物理块 %{z}",
                    "es": "fila %{y}, columna %{x}<br>bloque lógico %{customdata[0]}<br>bloque físico %{z}"},
    "hover_table_slots": {"en": "<br>slots %{customdata[1]} … %{customdata[2]}",
                          "zh": "<br>槽位 %{customdata[1]} … %{customdata[2]}",
                          "es": "<br>slots %{customdata[1]} … %{customdata[2]}"},
    "hover_table_formula": {"en": "<br>slots %{{z}}×{k} + 0 … {km}", "zh": "<br>槽位 %{{z}}×{k} + 0 … {km}",
                            "es": "<br>slots %{{z}}×{k} + 0 … {km}"},
    "token_index": {"en": "token of the step (flat index)", "zh": "本步的 token（扁平下标）",
                    "es": "token del paso (índice plano)"},
    "slot": {"en": "slot", "zh": "槽位", "es": "slot"},
    "written": {"en": "token → slot", "zh": "token → 槽位", "es": "token → slot"},
    "pad_slot": {"en": "PAD_SLOT_ID (−1): not written", "zh": "PAD_SLOT_ID（−1）：不写入",
                 "es": "PAD_SLOT_ID (−1): no se escribe"},
    "selected": {"en": "selected token", "zh": "选中的 token", "es": "token elegido"},
    "hover_token": {"en": "token %{x}: row %{customdata[0]}, position %{customdata[1]}<br>logical block "
                          "%{customdata[2]} → column %{customdata[3]}<br>physical block %{customdata[4]}, "
                          "offset %{customdata[5]}<br><b>slot %{y}</b>",
                    "zh": "token %{x}：行 %{customdata[0]}，位置 %{customdata[1]}<br>逻辑块 %{customdata[2]} → "
                          "列 %{customdata[3]}<br>物理块 %{customdata[4]}，偏移 %{customdata[5]}<br><b>槽位 %{y}</b>",
                    "es": "token %{x}: fila %{customdata[0]}, posición %{customdata[1]}<br>bloque lógico "
                          "%{customdata[2]} → columna %{customdata[3]}<br>bloque físico %{customdata[4]}, "
                          "desplazamiento %{customdata[5]}<br><b>slot %{y}</b>"},
    "hover_pad": {"en": "token %{x}: slot −1<br>row %{customdata[0]} (−1: CUDA-graph padding), position "
                        "%{customdata[1]}<br>the KV write skips it",
                  "zh": "token %{x}：槽位 −1<br>行 %{customdata[0]}（−1：CUDA graph 填充），位置 %{customdata[1]}"
                        "<br>KV 写入会跳过它",
                  "es": "token %{x}: slot −1<br>fila %{customdata[0]} (−1: relleno de CUDA graph), posición "
                        "%{customdata[1]}<br>la escritura KV lo omite"},
    "offset_in_block": {"en": "offset in block", "zh": "块内偏移", "es": "desplazamiento en el bloque"},
    "free": {"en": "free", "zh": "空闲", "es": "libre"},
    "context": {"en": "earlier context", "zh": "之前的上下文", "es": "contexto anterior"},
    "written_now": {"en": "written this step", "zh": "本步写入", "es": "escrito en este paso"},
    "hover_buffer": {"en": "slot %{customdata[0]} (block %{customdata[1]}, offset %{x})<br>row %{customdata[2]}, "
                           "position %{customdata[3]}<br>%{customdata[4]}<br>rows holding this block: "
                           "%{customdata[5]}",
                     "zh": "槽位 %{customdata[0]}（块 %{customdata[1]}，偏移 %{x}）<br>行 %{customdata[2]}，位置 "
                           "%{customdata[3]}<br>%{customdata[4]}<br>持有此块的行数：%{customdata[5]}",
                     "es": "slot %{customdata[0]} (bloque %{customdata[1]}, desplazamiento %{x})<br>fila "
                           "%{customdata[2]}, posición %{customdata[3]}<br>%{customdata[4]}<br>filas que tienen "
                           "este bloque: %{customdata[5]}"},
    "null": {"en": "null block", "zh": "空块", "es": "bloque nulo"},
    "in_use": {"en": "in use", "zh": "使用中", "es": "en uso"},
    "shared": {"en": "shared (ref ≥ 2)", "zh": "共享（引用 ≥ 2）", "es": "compartido (ref ≥ 2)"},
    "hashed": {"en": "has a hash (prefix cache)", "zh": "有哈希（前缀缓存）", "es": "tiene hash (caché de prefijos)"},
    "free_cached": {"en": "free, still cached", "zh": "空闲，仍在缓存中", "es": "libre, aún en caché"},
    "ref_count": {"en": "ref count", "zh": "引用计数", "es": "contador de referencias"},
    "hover_ref": {"en": "block %{x}: ref count %{y:.0f}<br>%{customdata[0]}<br>place in free queue "
                        "%{customdata[1]} (−1: not queued)<br>hash %{customdata[2]}",
                  "zh": "块 %{x}：引用计数 %{y:.0f}<br>%{customdata[0]}<br>空闲队列位置 %{customdata[1]}（−1：不在队列）"
                        "<br>哈希 %{customdata[2]}",
                  "es": "bloque %{x}: referencias %{y:.0f}<br>%{customdata[0]}<br>puesto en la cola libre "
                        "%{customdata[1]} (−1: no está)<br>hash %{customdata[2]}"},
    "hover_queue": {"en": "place %{x} of the free queue: block %{text}<br>hash %{customdata}",
                    "zh": "空闲队列第 %{x} 位：块 %{text}<br>哈希 %{customdata}",
                    "es": "puesto %{x} de la cola libre: bloque %{text}<br>hash %{customdata}"},
    "queue_axis": {"en": "free queue: front (allocated next) → back (evicted last)",
                   "zh": "空闲队列：队首（下一个分配）→ 队尾（最后驱逐）",
                   "es": "cola libre: frente (se asigna primero) → final (se desaloja al final)"},
    "hover_indptr": {"en": "indptr[%{x}] = %{text}", "zh": "indptr[%{x}] = %{text}", "es": "indptr[%{x}] = %{text}"},
    "hover_indices": {"en": "indices[%{x}] = page %{text} (request %{customdata})",
                      "zh": "indices[%{x}] = 页 %{text}（请求 %{customdata}）",
                      "es": "indices[%{x}] = página %{text} (petición %{customdata})"},
    "hover_lpl": {"en": "last_page_len[%{{x}}] = %{{text}} (page size {p})",
                  "zh": "last_page_len[%{{x}}] = %{{text}}（页大小 {p}）",
                  "es": "last_page_len[%{{x}}] = %{{text}} (tamaño de página {p})"},
    "hover_memory": {"en": "byte %{customdata[0]}: %{customdata[1]}, block %{customdata[2]}, offset %{customdata[3]} "
                           "(slot %{customdata[4]}), head %{customdata[5]}, dim %{customdata[6]}",
                     "zh": "字节 %{customdata[0]}：%{customdata[1]}，块 %{customdata[2]}，偏移 %{customdata[3]}"
                           "（槽位 %{customdata[4]}），头 %{customdata[5]}，维 %{customdata[6]}",
                     "es": "byte %{customdata[0]}: %{customdata[1]}, bloque %{customdata[2]}, desplazamiento "
                           "%{customdata[3]} (slot %{customdata[4]}), cabeza %{customdata[5]}, dim %{customdata[6]}"},
    "memory_line": {"en": "memory line ({n} bytes each)", "zh": "内存行（每行 {n} 字节）",
                    "es": "línea de memoria ({n} bytes cada una)"},
    "element_in_line": {"en": "element within the line", "zh": "行内元素", "es": "elemento dentro de la línea"},
    "bytes_per_step": {"en": "bytes per step (host → device)", "zh": "每步字节数（主机 → 设备）",
                       "es": "bytes por paso (host → dispositivo)"},
    "logical_block": {"en": "logical block", "zh": "逻辑块", "es": "bloque lógico"},
    "hover_share": {"en": "row %{y}, logical block %{x}<br>physical block %{text}<br>ref count %{z}",
                    "zh": "行 %{y}，逻辑块 %{x}<br>物理块 %{text}<br>引用计数 %{z}",
                    "es": "fila %{y}, bloque lógico %{x}<br>bloque físico %{text}<br>referencias %{z}"},
    # Model Runner V2's tables
    "state_index": {"en": "request-state index", "zh": "请求状态索引", "es": "índice de estado"},
    "batch_position": {"en": "batch position", "zh": "批次位置", "es": "posición en el lote"},
    "stale_tail": {"en": "stale tail (left by an earlier step, never read: harmless)",
                   "zh": "过期尾部（之前步骤留下，从不读取：无害）",
                   "es": "cola obsoleta (la dejó un paso anterior, nunca se lee: inofensiva)"},
    "hover_stale_tail": {"en": "row %{y}, column %{x}: stale tail<br>past the row's num_blocks: an id an earlier "
                               "step left here;<br>gather does not clear it and no kernel reads it",
                         "zh": "行 %{y}，列 %{x}：过期尾部<br>超出该行的 num_blocks：之前步骤留下的块号；"
                               "<br>gather 不清除它，也没有内核读取它",
                         "es": "fila %{y}, columna %{x}: cola obsoleta<br>más allá de num_blocks de la fila: un id que "
                               "dejó un paso anterior;<br>gather no lo borra y ningún kernel lo lee"},
    "unused_rows": {"en": "not in this step's batch (left as they were)", "zh": "不在本步批次中（保持原样）",
                    "es": "fuera del lote de este paso (quedan como estaban)"},
}

STRINGS.update({
    "block_boundary": {"en": "block boundary", "zh": "块边界", "es": "límite de bloque"},
    "legend_row": {"en": "request row {r}", "zh": "请求行 {r}", "es": "fila de petición {r}"},
})
