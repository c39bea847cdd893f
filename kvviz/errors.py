class BadInput(ValueError):
    """Input a user or a file supplied that kvviz refuses, with a one-line reason."""


def parse_json(raw: bytes, name: str, *, not_text: str | None = None):
    """Untrusted JSON bytes -> object, or BadInput with one sentence naming ``name``."""
    import json

    try:
        obj = json.loads(raw.decode("utf-8"))
        # lone surrogates ("\ud800") parse but cannot be encoded for display later: refuse them now
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
        return obj
    except UnicodeDecodeError:
        raise BadInput(not_text or f"{name} is not UTF-8 text") from None
    except UnicodeEncodeError:
        raise BadInput(f"{name} holds an escaped lone surrogate (like \\ud800), which is not text") from None
    except json.JSONDecodeError as err:
        raise BadInput(f"{name} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise BadInput(f"{name} is nested too deeply") from None
    except ValueError as err:  # e.g. an integer literal past Python's 4300-digit conversion limit
        raise BadInput(f"{name} is not usable JSON: {str(err).splitlines()[0][:120]}") from None


class ScenarioNotDump(BadInput):
    """A kvviz scenario handed over where a table dump was expected (the Debug dumps page says where
    to open it instead)."""


def size_text(n: int) -> str:
    """A size in bytes for people: "812 bytes", "3.5 KiB", "65.4 MiB", "64 MiB" (one decimal, none
    when whole)."""
    n = int(n)
    if n < 1024:
        return f"{n} bytes"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = round(n / (1 << shift), 1)
            return f"{v:g} {unit}" if v < 1e6 else f"{v:.0f} {unit}"
    raise AssertionError(n)
