"""The built-in scenarios' descriptions (kvviz/views/scenarios.py keeps the English one in the
scenario itself; a scenario a user loads is shown with its own text, untranslated)."""

STRINGS = {
    "desc.lifecycle": {
        "en": "Arrivals, prefill, decode, a finish that leaves a hole (condense moves a row), a preemption when "
              "the pool runs dry, and a fork.",
        "zh": "到达、预填充、解码、一次留下空洞的结束（压缩会移动一行）、池耗尽时的一次抢占，以及一次分叉。",
        "es": "Llegadas, prefill, decode, un final que deja un hueco (la compactación mueve una fila), una "
              "expulsión cuando el pool se agota y una bifurcación.",
    },
    "desc.lifecycle.v2": {
        "en": "Arrivals, prefill, decode, a finish that frees its request-state row (Model Runner V2 has no condense: "
              "rows stay where their state index puts them), a preemption when the pool runs dry, and a fork.",
        "zh": "到达、预填充、解码、一次释放其请求状态行的结束（Model Runner V2 没有压缩：各行留在其状态索引所在的位置）、"
              "池耗尽时的一次抢占，以及一次分叉。",
        "es": "Llegadas, prefill, decode, un final que libera su fila de estado (Model Runner V2 no compacta: cada fila "
              "queda donde la pone su índice de estado), una expulsión cuando el pool se agota y una bifurcación.",
    },
    "desc.prefixes": {
        "en": "Three requests with one system prompt. A and B share its full blocks; B forks (copy-on-write of the "
              "partial last block). B and its fork finish: the prompt's blocks stay cached in the free queue, freed "
              "last so evicted last. D, a long unrelated prompt, runs the pool dry and evicts a cached block; then C "
              "arrives and hits the system prompt's blocks that the finished requests left free but cached (and "
              "evicts one more to allocate its own).",
        "zh": "三个请求共用一个系统提示词。A 和 B 共享它的满块；B 分叉（对部分填充的最后一块做写时复制）。B 和它的分叉"
              "结束后，提示词的块仍缓存在空闲队列中：最后释放，因此最后被驱逐。D 是一个不相关的长提示词，它耗尽池并驱逐一个"
              "已缓存的块；随后 C 到达，命中了已结束请求留下的、空闲但仍缓存的系统提示词块（并再驱逐一个块来分配自己的块）。",
        "es": "Tres peticiones con un mismo prompt de sistema. A y B comparten sus bloques llenos; B se bifurca "
              "(copia en escritura del último bloque parcial). B y su bifurcación terminan: los bloques del prompt "
              "siguen en caché en la cola libre, liberados al final y por eso desalojados al final. D, un prompt largo "
              "sin relación, agota el pool y desaloja un bloque en caché; después llega C y acierta en los bloques del "
              "prompt de sistema que las peticiones terminadas dejaron libres pero en caché (y desaloja uno más para "
              "asignar el suyo).",
    },
    # the part of a cached block's token span (the prefixes page's hash chain)
    "span.prompt": {"en": "prompt", "zh": "提示词", "es": "prompt"},
    "span.prompt_output": {"en": "prompt + output", "zh": "提示词 + 输出", "es": "prompt + salida"},
    "span.output": {"en": "output", "zh": "输出", "es": "salida"},
}
