"""What a kernel check found: one kernel's result, a backend run's results, and a result's detail in
the page's language."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


class KernelMismatch(RuntimeError):
    """A kernel's output differs from its reference."""


# --- results ----------------------------------------------------------------------------------

@dataclass
class KernelResult:
    name: str
    passed: bool
    max_error: float            # max |kernel - reference| (0 for exact matches)
    detail: str                 # what was compared, and the first differences on a failure
    us: float | None = None     # median µs (GPU) or one interpreted call's wall time (CPU)
    output: object = None       # numpy array(s) the kernel produced


@dataclass
class BackendResult:
    label: dict
    kernels: dict = field(default_factory=dict)   # name -> KernelResult
    params: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(k.passed for k in self.kernels.values())

    def rows(self, lang: str = "en") -> list[dict]:
        """One dict a kernel; ``detail`` in ``lang`` (the JSON and the CLI keep English)."""
        return [{"kernel": k.name, "passed": k.passed, "max_error": k.max_error, "us": k.us,
                 "detail": detail_text(k.detail, lang)} for k in self.kernels.values()]

    def failures(self) -> list[str]:
        return [f"{k.name}: {k.detail}" for k in self.kernels.values() if not k.passed]

    def to_json(self) -> dict:
        return {"label": self.label, "passed": self.passed, "params": self.params, "kernels": self.rows()}


# --- the details in the page's language -----------------------------------------------------------
# A detail is English text built from a few phrases ("; "-separated); each phrase is matched back
# to its template and rebuilt in the language asked for (kvviz/texts/kernel_lab.py "detail.*").

_WHAT = [(re.compile(r"^(?P<n>\d+) slots$"), "what_slots"),
         (re.compile(r"^entries past indptr\[-1\] left alone$"), "what_tail"),
         (re.compile(r"^cache bytes \((?P<layout>[^,]+), (?P<dtype>[^,)]+)(?P<note>.*)\)$"), "what_cache"),
         (re.compile(r"^(?P<r>\d+) requests x (?P<h>\d+) heads over (?P<t>\d+) cached tokens$"), "what_attn")]
_PHRASES = [(re.compile(r"^(?P<what>.+): (?P<n>\d+) entries identical$"), "identical"),
            (re.compile(r"^MISMATCH: (?P<what>.+): (?P<k>\d+) of (?P<n>\d+) entries differ: (?P<first>.*)$"), "differ"),
            (re.compile(r"^MISMATCH: (?P<what>.+): shape (?P<got>.+) != reference (?P<want>.+)$"), "shape"),
            (re.compile(r"^(?P<what>.+) vs dense float64 attention, max \|err\| (?P<err>\S+) "
                        r"\(atol (?P<atol>[^,]+), rtol (?P<rtol>[^)]+)\)$"), "close")]
_SLOTS = re.compile(r"^slots from (?P<design>\S+(?: \(auto\))?)(?P<rest>.*)$")


def detail_text(detail: str, lang: str = "en") -> str:
    """A kernel's check detail (English, as the harness writes it) in ``lang``; a phrase this does not
    know stays as it is."""
    if lang == "en" or not detail:
        return detail
    from kvviz.texts.i18n import t

    def tr(key, **kw):
        return t("kernel_lab", "detail." + key, lang, **kw)

    def what(text):
        for pat, key in _WHAT:
            m = pat.match(text)
            if m:
                kw = m.groupdict()
                if key == "what_cache":
                    kw["note"] = {"": "", ", quantised in the kernel": tr("quant_kernel")}.get(
                        kw["note"], tr("quant_torch") if kw["note"].startswith(", quantised by torch") else kw["note"])
                return tr(key, **kw)
        return text

    def phrase(text):
        mismatch = text.startswith("MISMATCH: ") and " vs dense float64 attention" in text
        body = text.removeprefix("MISMATCH: ") if mismatch else text
        for pat, key in _PHRASES:
            m = pat.match(body)
            if m:
                out = tr(key, **{**m.groupdict(), "what": what(m["what"])})
                return tr("mismatch", text=out) if mismatch else out
        m = _SLOTS.match(text)
        if m:
            out = tr("slots_from", design=m["design"])
            for note in re.findall(r"\[([^\]]+)\]", m["rest"]):
                w = re.match(r"^the slot mapping it used \((\S+)\) was wrong$", note)
                o = re.match(r"^(\d+) of its slots lie outside the cache and were not written$", note)
                out += " [" + (tr("slots_wrong", design=w[1]) if w else tr("slots_outside", n=o[1]) if o else note) + "]"
            return out
        return text

    return tr("sep").join(phrase(p) for p in detail.split("; "))   # zh: a full-width "；"
