"""Chinese strings use full-width punctuation: no ASCII , ; : ? ! ( ) next to a Chinese character in
any zh string of kvviz/texts (code spans, URLs, placeholders, calls and intervals excepted)."""
import pytest

from kvviz.texts.i18n import TEXT_MODULES, _table
from kvviz.texts.punctuation import ascii_punctuation, full_width


@pytest.mark.parametrize("module", TEXT_MODULES)
def test_every_zh_string_uses_full_width_punctuation(module):
    bad = {key: ascii_punctuation(entry["zh"]) for key, entry in _table(module).items() if entry.get("zh")}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"kvviz/texts/{module}.py: ASCII punctuation in zh (scripts/zh_punctuation.py --fix {module}): {bad}"


@pytest.mark.parametrize("text, hits", [
    ("选一个 token:它在每种记法里都会高亮,每种", [" token:它"[-3:], "亮,每"]),
    ("存在哪里?——只是", ["里?—"]),
    ("第 {r} 行({q})", ["行({"]),
    ("因此 (K/V, 块) 的", [" (K", "V, ", "块) "]),
    ("{blocks}({tokens} 个 token 不必重算)", ["}({", "算)"]),
])
def test_the_rule_catches_ascii_marks_in_chinese(text, hits):
    assert ascii_punctuation(text) == hits


@pytest.mark.parametrize("text", [
    "持有 ceil(S / B) 个块",                       # a call
    "exp(LSE_r − LSE)，LSE = log",                  # maths
    "哈希 H(父哈希, 本块 token)；新请求",           # a function of two arguments
    "提交复制了第 [0, {rows}) 行",                  # an interval
    "用 `kvviz check a.json:3` 检查",               # a code span
    "见 https://github.com/vllm-project/vllm/pull/25438，其中",
    "区间 {d} = ({s}, {n})，其中",                  # a tuple of placeholders
    "逻辑形状 `[B, 2, N, H, D]` 按步长顺序（0, 2, 1, 3, 4）分配",   # ASCII commas between numbers
])
def test_notation_is_left_alone(text):
    assert ascii_punctuation(text) == []
    assert full_width(text) == text


def test_full_width_rewrites_and_drops_the_hugging_spaces():
    assert full_width("这个批次:A 和 B 共享提示(两个页,B 命中);A 解码") == "这个批次：A 和 B 共享提示（两个页，B 命中）；A 解码"
    assert full_width("按步长顺序 (0, 2, 1) 分配") == "按步长顺序（0, 2, 1）分配"
    assert full_width("自动 ({family})") == "自动（{family}）"
    assert ascii_punctuation(full_width("存在哪里? 只是, 数组")) == []
