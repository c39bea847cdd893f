"""Links that reopen the same view: page state <-> URL query parameters.

Query parameters are untrusted: every value is bounded and validated; a bad one
is replaced by its default and reported as a warning, never raised.

Batch page:  ?bs=4&nb=48&kbs=4&len=64&dcp=1&rank=0&cg=0&heads=2&hdim=8&dtype=float16
             &reqs=10.0.10.sys,13.0.13.sys,7.7.1&tok=3
             one request = prompt_len.computed.new_tokens[.prefix_group]
Scenario pages: ?sc=<built-in scenario name>&step=<index>[&vllm=<version>][&runner=auto|v1|v2]
Demos page:  ?demo=<demo key>&step=<index>&lang=<code>&presenter=0|1&vllm=<release>&fig=<figure>
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields

from kvviz.texts.i18n import LANGS
from kvviz.views import demo_catalogue as demos
from kvviz.views.batch import BatchConfig, RequestRow, default_rows

MAX_PARAM_CHARS = 8192
MAX_SHARED_REQS = 256
GROUP_RE = re.compile(r"^[A-Za-z0-9_]{1,16}$")

# query key -> (BatchConfig field, low, high)
INT_KEYS = {"bs": ("block_size", 1, 1024), "nb": ("num_blocks", 2, 1 << 20),
            "kbs": ("kernel_block_size", 1, 1024), "len": ("max_model_len", 1, 1 << 18),
            "dcp": ("dcp_world_size", 1, 16), "rank": ("dcp_rank", 0, 15),
            "heads": ("num_kv_heads", 1, 64), "hdim": ("head_dim", 1, 512)}
DTYPES = ("float16", "bfloat16", "fp8")
TRUE = ("1", "true", "on", "yes")


def _first(params, key):
    v = params.get(key)
    if isinstance(v, (list, tuple)):
        v = v[0] if v else None
    return v


def _bounded_int(text, lo: int, hi: int):
    if text is None or len(str(text)) > 12 or not re.fullmatch(r"-?\d+", str(text).strip()):
        return None
    v = int(text)
    return v if lo <= v <= hi else None


def encode_batch(rows: list[RequestRow], config: BatchConfig, token: int | None = None) -> dict[str, str]:
    out = {k: str(getattr(config, f)) for k, (f, _, _) in INT_KEYS.items()}
    out["cg"] = "1" if config.cudagraph else "0"
    out["dtype"] = config.dtype
    parts = []
    for r in rows[:MAX_SHARED_REQS]:
        p = f"{r.prompt_len}.{r.computed}.{r.new_tokens}"
        if r.prefix_group and GROUP_RE.match(r.prefix_group):
            p += "." + r.prefix_group
        parts.append(p)
    out["reqs"] = ",".join(parts)
    if token is not None:
        out["tok"] = str(int(token))
    return out


def link_losses(rows: list[RequestRow]) -> dict:
    """What encode_batch cannot carry: {"dropped_groups": [...], "rows_cut": n} (empty if nothing)."""
    out = {}
    bad = sorted({r.prefix_group for r in rows[:MAX_SHARED_REQS] if r.prefix_group and not GROUP_RE.match(r.prefix_group)})
    if bad:
        out["dropped_groups"] = bad
    if len(rows) > MAX_SHARED_REQS:
        out["rows_cut"] = len(rows) - MAX_SHARED_REQS
    return out


def decode_batch(params) -> tuple[list[RequestRow] | None, BatchConfig | None, int | None, list[str]]:
    """(rows, config, token, warnings) from query parameters; None for what the link does
    not carry (the page keeps its current value)."""
    warnings: list[str] = []
    if not any(_first(params, k) is not None for k in (*INT_KEYS, "cg", "dtype", "reqs", "tok")):
        return None, None, None, warnings
    cfg = BatchConfig()
    vals = asdict(cfg)
    for key, (field, lo, hi) in INT_KEYS.items():
        raw = _first(params, key)
        if raw is None:
            continue
        v = _bounded_int(raw, lo, hi)
        if v is None:
            warnings.append(f"link parameter {key}={str(raw)[:20]!r} is not a whole number in "
                            f"[{lo}, {hi}]; using {vals[field]}")
        else:
            vals[field] = v
    cg = _first(params, "cg")
    if cg is not None:
        if cg in ("0", "1"):
            vals["cudagraph"] = cg == "1"
        else:
            warnings.append(f"link parameter cg={str(cg)[:20]!r} must be 0 or 1; using 0")
    dt = _first(params, "dtype")
    if dt is not None:
        if dt in DTYPES:
            vals["dtype"] = dt
        else:
            warnings.append(f"link parameter dtype={str(dt)[:20]!r} is not one of {', '.join(DTYPES)}")
    if vals["block_size"] % vals["kernel_block_size"]:
        warnings.append(f"link: kernel block size {vals['kernel_block_size']} does not divide block size "
                        f"{vals['block_size']}; using {vals['block_size']}")
        vals["kernel_block_size"] = vals["block_size"]
    if vals["dcp_rank"] >= vals["dcp_world_size"]:
        warnings.append(f"link: DCP rank {vals['dcp_rank']} is outside a world of {vals['dcp_world_size']}; using 0")
        vals["dcp_rank"] = 0
    cfg = BatchConfig(**{f.name: vals[f.name] for f in fields(BatchConfig)})

    rows = None
    raw = _first(params, "reqs")
    if raw is not None:
        rows = _decode_rows(str(raw), warnings)
    tok = None
    raw_tok = _first(params, "tok")
    if raw_tok is not None:
        tok = _bounded_int(raw_tok, 0, 1 << 20)
        if tok is None:
            warnings.append(f"link parameter tok={str(raw_tok)[:20]!r} is not a token index; using 0")
    return rows, cfg, tok, warnings


def _decode_rows(raw: str, warnings: list[str]) -> list[RequestRow]:
    if len(raw) > MAX_PARAM_CHARS:
        warnings.append(f"link parameter reqs is longer than {MAX_PARAM_CHARS} characters; "
                        "using the default batch")
        return default_rows()
    rows, bad = [], 0
    for part in raw.split(",")[:MAX_SHARED_REQS]:
        bits = part.split(".")
        if len(bits) not in (3, 4):
            bad += 1
            continue
        nums = [_bounded_int(b, 0, 1 << 17) for b in bits[:3]]
        group = bits[3] if len(bits) == 4 else ""
        if any(n is None for n in nums) or (group and not GROUP_RE.match(group)):
            bad += 1
            continue
        rows.append(RequestRow(nums[0], nums[1], nums[2], group))
    if len(raw.split(",")) > MAX_SHARED_REQS:
        warnings.append(f"link carries more than {MAX_SHARED_REQS} requests; the rest were dropped")
    if bad:
        warnings.append(f"{bad} request(s) in the link were not prompt.computed.new[.group] and were skipped")
    if not rows:
        warnings.append("the link has no usable request; using the default batch")
        return default_rows()
    return rows


def encode_scenario(name: str, step: int, vllm: str | None = None, runner: str | None = None) -> dict[str, str]:
    """The scenario pages' link: scenario and step, and the version and runner selectors when they are
    not the defaults (main, auto)."""
    return {"sc": name, "step": str(int(step)), **encode_version_runner(vllm, runner)}


def encode_version_runner(vllm: str | None = None, runner: str | None = None) -> dict[str, str]:
    """A page's ``vllm`` and ``runner`` link parameters, each only when it is not the default (main, auto)."""
    out = {}
    if vllm is not None and vllm != "main":
        out["vllm"] = vllm
    if runner is not None and runner != "auto":
        out["runner"] = runner
    return out


def decode_version_runner(params) -> tuple[str | None, str | None, list[str]]:
    """(version, runner, warnings) from a link's ``vllm`` and ``runner``: a known version (as the
    selector lists it) and auto/v1/v2; anything else is dropped with a warning."""
    from kvviz.core.versions import NEWEST, RUNNERS, VERSIONS, beyond_newest_note, newer_than_known

    warnings: list[str] = []
    vllm, runner = _first(params, "vllm"), _first(params, "runner")
    if vllm is not None and vllm not in VERSIONS and newer_than_known(vllm):
        warnings.append(f"link parameter vllm: {beyond_newest_note(vllm)}")
        vllm = NEWEST
    elif vllm is not None and vllm not in VERSIONS:
        warnings.append(f"link parameter vllm={str(vllm)[:20]!r} is not a vLLM version kvviz lists; showing main")
        vllm = None
    if runner is not None and runner not in ("auto", *RUNNERS):
        warnings.append(f"link parameter runner={str(runner)[:20]!r} is not auto, v1 or v2; showing auto")
        runner = None
    return vllm, runner, warnings


def decode_scenario(params, names, num_steps_of) -> tuple[str | None, int | None, list[str]]:
    """(scenario name, step, warnings). ``names``: the built-in names; ``num_steps_of(name)``:
    how many steps that scenario has (the step is clamped into it)."""
    warnings: list[str] = []
    name = _first(params, "sc")
    if name is None:
        return None, None, warnings
    if name not in names:
        warnings.append(f"link scenario {str(name)[:40]!r} is unknown; showing {names[0]!r}")
        name = names[0]
    step = None
    raw = _first(params, "step")
    if raw is not None:
        n = num_steps_of(name)
        step = _bounded_int(raw, 0, 1 << 20)
        if step is None:
            warnings.append(f"link parameter step={str(raw)[:20]!r} is not a step number; showing step 0")
            step = 0
        elif step >= n:
            warnings.append(f"link step {step} is past the last step ({n - 1}); showing the last one")
            step = n - 1
    return name, step, warnings


def query_string(params: dict) -> str:
    """The link's query part as the pages print it: ``?k=v&k=v`` (values as they are)."""
    return "?" + "&".join(f"{k}={v}" for k, v in params.items())


def encode_demo(key: str, step: int, lang: str, presenter: bool, release: str | None = None,
                fig: int = 0) -> dict[str, str]:
    """A demos link; ``release`` (``vllm=``) and, in presenter mode, the figure shown (``fig=``, 0 =
    the step's own screen) when given."""
    out = {"demo": key, "step": str(step), "lang": lang, "presenter": "1" if presenter else "0"}
    if release is not None:
        out["vllm"] = release
    if presenter and fig:
        out["fig"] = str(fig)
    return out


def decode_demo(params, with_release: bool = False) -> tuple:
    """(demo key, step, presenter mode, what was refused) from a demos link: an unknown demo is
    the first one, the step is clamped into the demo, and ``bad`` lists (cut short) every value
    that was not taken as it stands, comma-separated ("" when the link was good).
    ``with_release``: (demo key, step, presenter mode, release, figure, bad), the release a vLLM
    version kvviz lists (default, and for a link of before releases were in it: the newest), the
    figure a number from 0 (the page clamps it to the step's figures)."""
    bad = []
    key = params.get("demo", demos.DEMO_KEYS[0])
    if key not in demos.DEMOS:
        bad.append(f"demo={str(key)[:40]}")
        key = demos.DEMO_KEYS[0]
    raw_step = params.get("step", "0")
    step = demos.clamp_step(key, raw_step)
    if str(raw_step).strip() != str(step):
        bad.append(f"step={str(raw_step)[:20]}")
    raw_lang = params.get("lang")
    if raw_lang is not None and raw_lang not in LANGS:
        bad.append(f"lang={str(raw_lang)[:20]}")
    presenter = str(params.get("presenter", "0")).lower() in TRUE
    if not with_release:
        return key, step, presenter, ", ".join(bad)
    release = str(params.get("vllm", demos.DEFAULT_RELEASE))
    if release not in demos.VERSIONS:
        bad.append(f"vllm={release[:20]}")
        release = demos.DEFAULT_RELEASE
    raw_fig = str(params.get("fig", "0")).strip()
    fig = int(raw_fig) if raw_fig.isdigit() and len(raw_fig) <= 3 else 0
    if raw_fig != str(fig):
        bad.append(f"fig={raw_fig[:20]}")
    return key, step, presenter, release, fig, ", ".join(bad)


# --- whole-page links: every selection of a page as one flat list of fields ---------------------------

IDENT_RE = r"[A-Za-z0-9_.:+\- ×x]{1,64}"     # a choice whose options the page knows only later (a run's kernels)


@dataclass(frozen=True)
class Field:
    """One selection in a page's link: query key ``param``, session-state key ``key``, its ``default``.
    ``kind``: "int" (``lo``..``hi``), "bool", "choice" (one of ``options``, matched as text), "text"
    (a full match of ``pattern``, the page checks it further), "version" (a vLLM version kvviz lists),
    "runner" (auto, v1, v2)."""
    param: str
    key: str
    default: object
    kind: str = "choice"
    lo: int = 0
    hi: int = 0
    options: tuple = ()
    pattern: str = IDENT_RE


def int_field(param, key, default, lo, hi) -> Field:
    return Field(param, key, default, "int", lo=lo, hi=hi)


def bool_field(param, key, default) -> Field:
    return Field(param, key, default, "bool")


def choice_field(param, key, default, options) -> Field:
    return Field(param, key, default, "choice", options=tuple(options))


def text_field(param, key, default, pattern=IDENT_RE) -> Field:
    return Field(param, key, default, "text", pattern=pattern)


def version_fields(prefix: str) -> list[Field]:
    """The ``vllm`` and ``runner`` fields of a page with ``ui.version_runner(prefix)``."""
    return [Field("vllm", f"{prefix}.vllm", "main", "version"), Field("runner", f"{prefix}.runner", "auto", "runner")]


def _encode_value(f: Field, v) -> str:
    if f.kind == "bool":
        return "1" if v else "0"
    return str(int(v)) if f.kind == "int" else str(v)


def encode_fields(fields, values) -> dict[str, str]:
    """{param: text} of every field: its value in ``values`` (a mapping by session key), else its
    default; a field whose value is None (a control left empty) is left out."""
    out = {}
    for f in fields:
        v = values[f.key] if f.key in values else f.default
        if v is not None:
            out[f.param] = _encode_value(f, v)
    return out


def _decode_value(f: Field, raw: str):
    """(value, None) or (None, why) for one field's text."""
    raw = str(raw)
    if f.kind == "int":
        v = _bounded_int(raw, f.lo, f.hi)
        return (v, None) if v is not None else (None, f"is not a whole number in [{f.lo}, {f.hi}]")
    if f.kind == "bool":
        low = raw.strip().lower()
        if low in TRUE or low in ("0", "false", "off", "no"):
            return low in TRUE, None
        return None, "must be 0 or 1"
    if f.kind == "choice":
        by_text = {str(o): o for o in f.options}
        return (by_text[raw], None) if raw in by_text else (None, "is not one of the choices")
    if f.kind == "text":
        return (raw, None) if len(raw) <= 256 and re.fullmatch(f.pattern, raw) else (None, "is not a valid choice")
    vllm, runner, warns = decode_version_runner({"vllm": raw} if f.kind == "version" else {"runner": raw})
    return (vllm if f.kind == "version" else runner), (warns[0] if warns else None)


def decode_fields(fields, params) -> tuple[dict, list[str]]:
    """({session key: value}, warnings) for the fields a link carries: a bad value is left out (the
    page keeps its default) with one warning naming the parameter and the default."""
    values, warnings = {}, []
    for f in fields:
        raw = _first(params, f.param)
        if raw is None:
            continue
        v, why = _decode_value(f, raw)
        if v is not None:
            values[f.key] = v
        if why is not None and f.kind in ("version", "runner"):   # decode_version_runner's own sentence
            warnings.append(why)
        elif why is not None:
            warnings.append(f"link parameter {f.param}={str(raw)[:20]!r} {why}; using {f.default}")
    return values, warnings


# --- each page's fields (the session keys are the page's widget keys) -------------------------------

def layout_fields() -> list[Field]:
    from kvviz.views import layout as lay

    ints = [("blocks", "lay.blocks", 2, 1, 4096), ("bs", "lay.bs", 4, 1, 256), ("heads", "lay.heads", 2, 1, 64),
            ("dim", "lay.dim", 4, 1, 256), ("block", "lay.block", 1, 0, 4095), ("off", "lay.off", 2, 0, 255),
            ("head", "lay.head", 1, 0, 63), ("d", "lay.d", 0, 0, 255), ("layers", "lay.layers", 2, 1, 16),
            ("layer", "lay.layer", 0, 0, 15)]
    return [Field("vllm", "lay.vllm", lay.DEFAULT_VERSION, "version"), *(int_field(*i) for i in ints),
            choice_field("dtype", "lay.dtype", "float16", ("float16", "bfloat16", "float32", "fp8")),
            choice_field("kv", "lay.kv", "k", ("k", "v")), choice_field("backend", "lay.backend", lay.DEFAULT_BACKEND,
                                                                         lay.BACKEND_CHOICES),
            choice_field("family", "lay.family", lay.AUTO, lay.FAMILY_CHOICES), text_field("order", "lay.order", "LBNHC"),
            text_field("as", "lay.as", "NHD"), text_field("byte", "lay.byte", "0", r"[0-9a-fA-FxX]{0,24}"),
            bool_field("sm10x", "lay.sm10x", False)]


def pcie_fields() -> list[Field]:
    from kvviz.gpu.traffic import BLOCK_SIZES

    return [*version_fields("pcie"), int_field("reqs", "pcie.reqs", 64, 1, 4096),
            int_field("ctx", "pcie.ctx", 2048, 1, 1 << 20), choice_field("bs", "pcie.bs", 16, BLOCK_SIZES),
            int_field("len", "pcie.len", 32768, 1, 1 << 21), int_field("q", "pcie.q", 1, 1, 8192),
            int_field("maxreqs", "pcie.maxreqs", 256, 1, 4096), bool_field("host", "pcie.host", False)]


def csr_fields(sources) -> list[Field]:
    from kvviz.views.csr import RULE_CHOICES

    return [*version_fields("csr"), choice_field("src", "csr.src", sources[0], sources),
            int_field("empty", "csr.empty", 2, 0, 8), choice_field("rule", "csr.rule", "release", RULE_CHOICES),
            int_field("req", "csr.req", 0, 0, 1 << 16)]


def notations_fields(ids, default_req) -> list[Field]:
    return [choice_field("page", "notations_page_size", 16, (16, 32, 64, 128)),
            choice_field("req", "notations_req", default_req, ids),
            int_field("pos", "notations_pos", 255, 0, 1 << 20),
            bool_field("unified", "notations_kv_unified", False),
            choice_field("sglang", "notations_sglang_ps", 16, (1, 16))]   # SGLang's own run: page size


def kernel_lab_fields(runs, default_source) -> list[Field]:
    """The source, the quick toggle, the recorded run, and the choices made on the result (the page
    checks them against the run it shows)."""
    return [choice_field("source", "lab.source", default_source, ("run", "recorded", "upload")),
            bool_field("quick", "lab.quick", True), choice_field("run", "lab.recorded", runs[0] if runs else None, runs),
            text_field("kernel", "lab.kernel", None), text_field("timing", "lab.timing", None),
            bool_field("more", "lab.more_columns", False), text_field("shape", "lab.tl_shape", None),
            int_field("groups", "lab.tl_groups", None, 1, 64), text_field("runner", "lab.tl_runner", None)]


def dumps_fields() -> list[Field]:
    """Where the dumps come from and every choice about them (never an upload's or a paste's content)."""
    from kvviz.views import dumps as view

    d = view.widget_defaults()
    examples = view.example_names()
    return [choice_field("source", "dumps.source", d["source"], view.SOURCES),
            choice_field("bug", "dumps.bug", d["bug"], view.BUGS), choice_field("sim", "dumps.sim_sc", d["sim_sc"],
                                                                                view.sim_sources()),
            choice_field("fault", "dumps.fault", d["fault"], view.FAULT_OPTIONS),
            int_field("a", "dumps.step_a", d["step_a"], 0, 1 << 16), int_field("b", "dumps.step_b", d["step_b"], 0, 1 << 16),
            int_field("group", "dumps.group", d["group"], 0, 64), bool_field("healthy", "dumps.a_healthy", d["a_healthy"]),
            choice_field("ex_a", "dumps.ex_a", d["ex_a"], examples), choice_field("ex_b", "dumps.ex_b", d["ex_b"], examples),
            choice_field("table", "dumps.table", d["table"], view.TABLES),
            choice_field("profile", "dumps.profile", d["profile"], view.PROFILE_CHOICES),
            bool_field("all", "dumps.all_rows", d["all_rows"])]


def batch_token_fields() -> list[Field]:
    """The Batch page's selections beside the batch itself (``encode_batch``): the token's head, dim,
    K/V and the NHD/HND layout the kernels run."""
    return [int_field("head", "batch.head", 0, 0, 63), int_field("dim", "batch.dim", 0, 0, 511),
            choice_field("kv", "batch.kv", "k", ("k", "v")), choice_field("layout", "batch.layout", "NHD", ("NHD", "HND"))]


def scenario_view_fields(prefix: str) -> list[Field]:
    """A scenario page's views beside scenario and step (``encode_scenario``): the pool's moment and,
    on Step through, the tables before / after the commit."""
    out = [choice_field("pool", f"{prefix}.pool", "after", ("after", "launch"))]
    if prefix == "step":
        out += [bool_field("after", "step.after", False), bool_field("after_v2", "step.after_v2", True)]
    return out
