"""Chinese text uses full-width punctuation (，；：？！（）). ``ascii_punctuation(zh)`` finds an ASCII
``, ; : ? ! ( )`` written next to a Chinese character; ``full_width(zh)`` rewrites them.

Left alone, being notation rather than prose: code spans (`` `...` ``), URLs, ``{placeholders}``,
a function call or indexing written as code or maths (``ceil(S / B)``, ``exp(LSE_r − LSE)``,
``H(父哈希, 本块 token)``: a ``(`` right after a name (``log2``) or ``]``, not
after a bare number, with everything inside it) and intervals (``[0, {rows})``). Punctuation between ASCII words and numbers (``(0, 2, 1)``
inside a Chinese sentence: the commas) stays ASCII; only the parentheses that hug Chinese text
become full-width. No strings here: this module is not one of ``i18n.TEXT_MODULES``.
"""
from __future__ import annotations

import re

CJK = "\u3400-\u9fff\u3000-\u303f\uff00-\uffef"
_CJK = re.compile(f"[{CJK}]")
_IDEO = re.compile("[\u3400-\u9fff]")   # a parenthesis hugs ideographs (a tuple may sit before a "，")
FULL = {",": "，", ";": "；", ":": "：", "?": "？", "!": "！", "(": "（", ")": "）"}
_PROTECT = [re.compile(r"`[^`]*`"), re.compile(r"https?://\S+"), re.compile(r"\{[^{}]*\}"),
            re.compile(r"\[[^\[\]]*[\])]")]                              # code, URLs, {x}, [a, b) intervals
_CALL = re.compile(r"(?:[A-Za-z_]\w*|\])\([^()]*\)")                         # f(x), a call or maths


def _mask(s: str) -> str:
    """``s`` with the protected spans blanked (neutral: not CJK, not punctuation), same length."""
    out = s
    for rx in _PROTECT:   # "\x00", not a letter: "{blocks}(" is no call
        out = rx.sub(lambda m: "\x00" * len(m.group()), out)
    while True:   # innermost calls first, so f(g(x)) goes whole
        nxt = _CALL.sub(lambda m: "0" * len(m.group()), out)
        if nxt == out:
            return out
        out = nxt


def _cjk(c: str) -> bool:
    return bool(c) and bool(_CJK.match(c))


def _ideo(c: str) -> bool:
    return bool(c) and bool(_IDEO.match(c))


def _flagged(m: str, k: int) -> bool:
    """Whether the ASCII mark at ``m[k]`` (masked text) touches Chinese text: the character before
    it, or the one after it (past one space) for everything but ``(``; for ``(`` the one before it
    (past one space) or the one right after it."""
    c = m[k]
    before = m[k - 1] if k else ""
    before_sp = m[k - 2] if k >= 2 and before == " " else before
    after = m[k + 1] if k + 1 < len(m) else ""
    after_sp = m[k + 2] if k + 2 < len(m) and after == " " else after
    if c == "(":
        return _ideo(before_sp) or _ideo(after)
    if c == ")":
        return _ideo(before) or _ideo(after_sp)
    return _cjk(before) or _cjk(after_sp)


def _marks(s: str) -> list[int]:
    """Flagged marks, and both parentheses of a pair that holds Chinese text."""
    m = _mask(s)
    out = {k for k, c in enumerate(m) if c in FULL and _flagged(m, k)}
    out |= {k for o, c in _pairs(m).items() if o < c and _IDEO.search(m[o:c]) for k in (o, c)}
    return sorted(out)


def ascii_punctuation(s: str) -> list[str]:
    """Each ASCII mark of ``s`` that should be full-width, with a character of context each side."""
    return [s[max(0, k - 1):k + 2] for k in _marks(s)]


def _pairs(m: str) -> dict[int, int]:
    """Matching ``(`` ``)`` positions (both ways) among the unmasked characters."""
    out, stack = {}, []
    for k, c in enumerate(m):
        if c == "(":
            stack.append(k)
        elif c == ")" and stack:
            o = stack.pop()
            out[o], out[k] = k, o
    return out


def full_width(s: str) -> str:
    """``s`` with every flagged mark full-width (a parenthesis's partner too) and the ASCII spaces
    that hugged them dropped (full-width marks carry their own); again until nothing changes (a
    ``;`` after a ``)`` is flagged once the ``)`` is full-width)."""
    while (nxt := _full_width_once(s)) != s:
        s = nxt
    return s


def _full_width_once(s: str) -> str:
    m = _mask(s)
    pairs = _pairs(m)
    todo = set(_marks(s))
    todo |= {pairs[k] for k in todo if k in pairs}
    chars = list(s)
    for k in todo:
        chars[k] = FULL[s[k]]
    for k in sorted(todo, reverse=True):   # spaces: after any full mark but "(", before "("
        if chars[k] != "（" and k + 1 < len(chars) and chars[k + 1] == " ":
            chars[k + 1] = ""
        if chars[k] == "（" and k and chars[k - 1] == " ":
            chars[k - 1] = ""
        if chars[k] == "）" and k and chars[k - 1] == " " and k >= 2 and _cjk(chars[k - 2]):
            chars[k - 1] = ""
    return "".join(chars)
