""""Run on W ranks" (the DCP demo and the Batch page): decode context parallelism on real processes."""
STRINGS = {
    "ui.title": {"en": "Run on W ranks", "zh": "在 W 个 rank 上运行", "es": "Ejecutar en W rangos"},
    "ui.intro": {
        "en": "Start W real processes joined by torch.distributed ({backend}). Each rank writes only its own "
              "share of the positions into its own KV cache (its slot mapping is −1 for the others' tokens), "
              "computes attention over that share with its log-sum-exp (LSE), then the ranks all-gather the "
              "LSEs, rescale their outputs and all-reduce them. The merged result is compared with dense "
              "attention over every position.",
        "zh": "启动 W 个由 torch.distributed（{backend}）连接的真实进程。每个 rank 只把属于自己的那部分位置写入"
              "自己的 KV 缓存（其他 rank 的 token 在它的 slot mapping 中为 −1），在这部分位置上计算注意力及其 "
              "log-sum-exp（LSE），随后各 rank all-gather LSE、重新缩放各自的输出并 all-reduce。合并结果与覆盖"
              "全部位置的稠密注意力进行比较。",
        "es": "Arranca W procesos reales unidos por torch.distributed ({backend}). Cada rango escribe solo su "
              "parte de las posiciones en su propia caché KV (su slot mapping vale −1 para los tokens de los "
              "demás), calcula la atención sobre esa parte con su log-sum-exp (LSE); después los rangos hacen "
              "all-gather de los LSE, reescalan sus salidas y las suman con all-reduce. El resultado combinado "
              "se compara con la atención densa sobre todas las posiciones."},
    "ui.backend_nccl": {"en": "NCCL, one GPU per rank", "zh": "NCCL，每个 rank 一块 GPU",
                        "es": "NCCL, una GPU por rango"},
    "ui.backend_gloo": {"en": "gloo, CPU processes running the Triton interpreter",
                        "zh": "gloo，运行 Triton 解释器的 CPU 进程",
                        "es": "gloo, procesos de CPU con el intérprete de Triton"},
    "ui.world": {"en": "W (ranks)", "zh": "W（rank 数）", "es": "W (rangos)"},
    "ui.world_help": {"en": "The number of ranks: 1 to {top} on this machine. It must equal the batch's DCP "
                            "world size ({declared}).",
                      "zh": "rank 的数量：本机为 1 到 {top}。它必须等于该批次的 DCP world size（{declared}）。",
                      "es": "El número de rangos: de 1 a {top} en esta máquina. Debe ser igual al tamaño de "
                            "mundo DCP del lote ({declared})."},
    "ui.run": {"en": "Run on {w} rank(s)", "zh": "在 {w} 个 rank 上运行", "es": "Ejecutar en {w} rango(s)"},
    "ui.stop": {"en": "Stop", "zh": "停止", "es": "Detener"},
    "ui.running": {"en": "{w} ranks running ({backend}) · {s:.0f} s", "zh": "{w} 个 rank 正在运行（{backend}）· {s:.0f} 秒",
                   "es": "{w} rangos en marcha ({backend}) · {s:.0f} s"},
    "ui.rank_stage": {"en": "rank {r}: {stage}", "zh": "rank {r}：{stage}", "es": "rango {r}: {stage}"},
    "ui.bad": {"en": "Cannot run on {w} ranks: {msg}", "zh": "无法在 {w} 个 rank 上运行：{msg}",
               "es": "No se puede ejecutar en {w} rangos: {msg}"},
    "ui.failed": {"en": "The run on {w} ranks failed: {msg}", "zh": "在 {w} 个 rank 上的运行失败：{msg}",
                  "es": "La ejecución en {w} rangos falló: {msg}"},
    "ui.done_in": {"en": "{w} ranks · {backend} · {device} · {s:.1f} s", "zh": "{w} 个 rank · {backend} · {device} · {s:.1f} 秒",
                   "es": "{w} rangos · {backend} · {device} · {s:.1f} s"},
    "ui.caches_caption": {
        "en": "The same block ids on every rank (rows), but each rank fills only the slots of the positions it "
              "owns (the number in a cell); gray slots belong to another rank's share. Colour = request.",
        "zh": "每个 rank 上的块 id 相同（行），但每个 rank 只填入它所拥有的位置的槽位（格中的数字）；灰色槽位属于"
              "其他 rank 的份额。颜色 = 请求。",
        "es": "Los mismos ids de bloque en cada rango (filas), pero cada rango llena solo los slots de las "
              "posiciones que le tocan (el número de la celda); los slots grises son parte de otro rango. "
              "Color = petición."},
    "ui.blocks_cut": {"en": "The first {shown} of {total} kernel blocks are drawn.",
                      "zh": "只绘制了 {total} 个内核块中的前 {shown} 个。",
                      "es": "Se dibujan los primeros {shown} de {total} bloques de kernel."},
    "ui.stored_once": {"en": "Every one of the {n} positions is stored on exactly one rank.",
                       "zh": "全部 {n} 个位置都恰好存储在一个 rank 上。",
                       "es": "Cada una de las {n} posiciones está guardada en exactamente un rango."},
    "ui.stored_wrong": {"en": "Positions not stored: {missing}; stored on more than one rank: {twice}.",
                        "zh": "未存储的位置：{missing}；存储在多个 rank 上的位置：{twice}。",
                        "es": "Posiciones no guardadas: {missing}; guardadas en más de un rango: {twice}."},
    "ui.ranks_title": {"en": "Each rank: its share, its partial attention, its collectives",
                       "zh": "每个 rank：它的份额、部分注意力与集合通信",
                       "es": "Cada rango: su parte, su atención parcial, sus colectivas"},
    "ui.ranks_caption": {
        "en": "Partial error: the rank's output and LSE against dense fp32 attention over the tokens it holds "
              "(tolerance {tol:g}). Times in µs: {timing}.",
        "zh": "部分误差：该 rank 的输出和 LSE 与其所持 token 上的稠密 fp32 注意力之差（容差 {tol:g}）。时间单位 µs：{timing}。",
        "es": "Error parcial: la salida y el LSE del rango frente a la atención densa fp32 sobre sus tokens "
              "(tolerancia {tol:g}). Tiempos en µs: {timing}."},
    "ui.timing_cpu": {"en": "wall time of one call in the Triton interpreter (teaching figures, not speed)",
                      "zh": "Triton 解释器中一次调用的墙钟时间（用于教学，不代表速度）",
                      "es": "tiempo de reloj de una llamada en el intérprete de Triton (para enseñar, no velocidad)"},
    "ui.timing_gpu": {"en": "median of repeated calls on the GPU", "zh": "GPU 上多次调用的中位数",
                      "es": "mediana de llamadas repetidas en la GPU"},
    "ui.lse_title": {"en": "The merge: each rank's LSE and weight (query head 0)",
                     "zh": "合并：每个 rank 的 LSE 与权重（查询头 0）",
                     "es": "La combinación: LSE y peso de cada rango (cabeza de consulta 0)"},
    "ui.lse_caption": {
        "en": "The merged output is Σ_r w_r · o_r with w_r = exp(LSE_r − LSE), LSE = log Σ_r exp(LSE_r). A rank "
              "that holds none of a request's tokens has LSE −inf and weight 0.",
        "zh": "合并输出为 Σ_r w_r · o_r，其中 w_r = exp(LSE_r − LSE)，LSE = log Σ_r exp(LSE_r)。不持有某请求任何 "
              "token 的 rank，其 LSE 为 −inf，权重为 0。",
        "es": "La salida combinada es Σ_r w_r · o_r con w_r = exp(LSE_r − LSE), LSE = log Σ_r exp(LSE_r). Un "
              "rango sin ningún token de una petición tiene LSE −inf y peso 0."},
    "ui.checks_failed": {"en": "Checks that failed: {names}", "zh": "未通过的检查：{names}",
                         "es": "Comprobaciones fallidas: {names}"},
    "pass": {"en": "Merged output vs dense attention: max error {err} ≤ tolerance {tol} ({dtype}) — pass "
                   "({w} ranks, {backend}).",
             "zh": "合并输出与稠密注意力对比：最大误差 {err} ≤ 容差 {tol}（{dtype}）—— 通过（{w} 个 rank，{backend}）。",
             "es": "Salida combinada frente a la atención densa: error máximo {err} ≤ tolerancia {tol} ({dtype}) — "
                   "correcto ({w} rangos, {backend})."},
    "fail": {"en": "Merged output vs dense attention: max error {err}, tolerance {tol} ({dtype}) — FAIL "
                   "({w} ranks, {backend}).",
             "zh": "合并输出与稠密注意力对比：最大误差 {err}，容差 {tol}（{dtype}）—— 失败（{w} 个 rank，{backend}）。",
             "es": "Salida combinada frente a la atención densa: error máximo {err}, tolerancia {tol} ({dtype}) — "
                   "FALLO ({w} rangos, {backend})."},
    "stage.starting": {"en": "starting", "zh": "启动中", "es": "arrancando"},
    "stage.tables": {"en": "building its tables", "zh": "构建表", "es": "construye sus tablas"},
    "stage.kv_write": {"en": "slot mapping and KV write", "zh": "slot mapping 与 KV 写入",
                       "es": "slot mapping y escritura KV"},
    "stage.partial_attention": {"en": "partial attention", "zh": "部分注意力", "es": "atención parcial"},
    "stage.merge": {"en": "all-gather LSE, all-reduce", "zh": "all-gather LSE、all-reduce",
                    "es": "all-gather de LSE, all-reduce"},
    "stage.check": {"en": "checking", "zh": "检查中", "es": "comprobando"},
    "fig.title": {"en": "The {w} KV caches side by side: which slots each rank filled",
                  "zh": "{w} 个 KV 缓存并排：每个 rank 填入了哪些槽位",
                  "es": "Las {w} cachés KV lado a lado: qué slots llenó cada rango"},
    "fig.rank_title": {"en": "rank {r} · {n} tokens", "zh": "rank {r} · {n} 个 token", "es": "rango {r} · {n} tokens"},
    "fig.block": {"en": "kernel block", "zh": "内核块", "es": "bloque de kernel"},
    "fig.offset": {"en": "offset", "zh": "偏移", "es": "desplazamiento"},
    "fig.request": {"en": "request {q}", "zh": "请求 {q}", "es": "petición {q}"},
    "fig.not_here": {"en": "not on this rank", "zh": "不在此 rank", "es": "no está en este rango"},
    "fig.context": {"en": "earlier context", "zh": "之前的上下文", "es": "contexto anterior"},
    "fig.written_now": {"en": "written this step", "zh": "本步写入", "es": "escrito en este paso"},
    "fig.hover": {"en": "rank {r}, block %{{customdata[0]}}, offset %{{x}}<br>slot %{{customdata[1]}}<br>"
                        "request %{{customdata[2]}}, position %{{customdata[3]}}<br>%{{customdata[4]}}",
                  "zh": "rank {r}，块 %{{customdata[0]}}，偏移 %{{x}}<br>槽位 %{{customdata[1]}}<br>"
                        "请求 %{{customdata[2]}}，位置 %{{customdata[3]}}<br>%{{customdata[4]}}",
                  "es": "rango {r}, bloque %{{customdata[0]}}, desplazamiento %{{x}}<br>slot %{{customdata[1]}}<br>"
                        "petición %{{customdata[2]}}, posición %{{customdata[3]}}<br>%{{customdata[4]}}"},
    "col.rank": {"en": "rank", "zh": "rank", "es": "rango"},
    "col.tokens_held": {"en": "tokens held", "zh": "持有 token", "es": "tokens guardados"},
    "col.bytes_written": {"en": "bytes written", "zh": "写入字节", "es": "bytes escritos"},
    "col.empty_shards": {"en": "empty shards", "zh": "空分片", "es": "fragmentos vacíos"},
    "col.partial_max_error": {"en": "partial output error", "zh": "部分输出误差", "es": "error de la salida parcial"},
    "col.lse_max_error": {"en": "LSE error", "zh": "LSE 误差", "es": "error del LSE"},
    "col.partial_attention_us": {"en": "attention µs", "zh": "注意力 µs", "es": "atención µs"},
    "col.all_gather_lse_us": {"en": "all-gather LSE µs", "zh": "all-gather LSE µs", "es": "all-gather LSE µs"},
    "col.all_reduce_out_us": {"en": "all-reduce out µs", "zh": "all-reduce 输出 µs", "es": "all-reduce salida µs"},
    "col.request": {"en": "request", "zh": "请求", "es": "petición"},
    "col.rank_lse": {"en": "LSE rank {r}", "zh": "rank {r} 的 LSE", "es": "LSE rango {r}"},
    "col.rank_weight": {"en": "weight rank {r}", "zh": "rank {r} 的权重", "es": "peso rango {r}"},
    "col.merged_lse": {"en": "merged LSE", "zh": "合并 LSE", "es": "LSE combinado"},
}
