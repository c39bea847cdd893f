"""The CJK font the app serves: every face in .streamlit/config.toml names a file that exists, its
unicode range parses, and together they cover every Chinese character of kvviz's own texts."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _faces():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["enableStaticServing"] is True
    assert cfg["theme"]["font"].startswith("Source Sans") and "Noto Sans SC" in cfg["theme"]["font"]
    return cfg["theme"]["fontFaces"]


def _ranges(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.strip()[2:].partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def test_every_face_is_served_and_the_license_ships_with_them():
    faces = _faces()
    assert len(faces) >= 90
    for f in faces:
        assert f["family"] == "Noto Sans SC" and f["url"].startswith("app/static/")
        path = ROOT / f["url"][len("app/"):]
        assert path.is_file() and path.read_bytes()[:4] == b"wOF2", f["url"]
        assert _ranges(f["unicodeRange"])
    assert "Open Font License" in (ROOT / "static" / "fonts" / "noto-sans-sc" / "OFL.txt").read_text()


def test_the_faces_cover_every_chinese_character_kvviz_writes():
    from kvviz.texts import i18n

    covered = [r for f in _faces() for r in _ranges(f["unicodeRange"])]
    chars = set()
    for path in (ROOT / "kvviz" / "texts").glob("*.py"):
        chars |= set(re.findall(r"[\u3000-\u9fff\uff00-\uffef]", path.read_text()))
    missing = sorted(c for c in chars if not any(lo <= ord(c) <= hi for lo, hi in covered))
    assert chars and missing == [], missing[:20]
    assert i18n.LANGS
