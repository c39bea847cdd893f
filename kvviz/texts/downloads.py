"""Download-button labels shared by the pages, keyed by their English text (what the file is, then
its format; the format names stay as they are)."""

STRINGS = {
    "tokens CSV": {"en": "tokens CSV", "zh": "token CSV", "es": "tokens CSV"},
    "requests CSV": {"en": "requests CSV", "zh": "请求 CSV", "es": "peticiones CSV"},
    "step JSON": {"en": "step JSON", "zh": "本步 JSON", "es": "paso JSON"},
    "events CSV": {"en": "events CSV", "zh": "事件 CSV", "es": "eventos CSV"},
    "table HTML": {"en": "table HTML", "zh": "表 HTML", "es": "tabla HTML"},
    "slots HTML": {"en": "slots HTML", "zh": "槽位 HTML", "es": "slots HTML"},
    "buffer HTML": {"en": "buffer HTML", "zh": "缓冲区 HTML", "es": "búfer HTML"},
    "figure HTML": {"en": "figure HTML", "zh": "图 HTML", "es": "figura HTML"},
    "model vs measured CSV": {"en": "model vs measured CSV", "zh": "模型与实测 CSV", "es": "modelo frente a medida CSV"},
}
