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
from dataclasses import asdict, fields

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
