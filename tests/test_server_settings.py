"""The classroom server's settings (.streamlit/config.toml): measured choices, kept (BENCHMARKS.md,
Classroom load): no full garbage collection after every script run, no file watcher."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_classroom_server_settings():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["runner"]["postScriptGC"] is False
    assert cfg["server"]["fileWatcherType"] == "none"
    script = (ROOT / "scripts" / "font_faces.py").read_text()       # regenerating keeps them
    assert "postScriptGC = false" in script and 'fileWatcherType = "none"' in script
