"""Regenerate .streamlit/config.toml's [[theme.fontFaces]] from a @fontsource/noto-sans-sc package.

    npm pack @fontsource/noto-sans-sc@5.3.0 && tar xzf fontsource-noto-sans-sc-5.3.0.tgz
    python scripts/font_faces.py package/          # copies the 400-weight woff2 subsets and OFL.txt

The font is SIL OFL 1.1 (package/LICENSE, copied as static/fonts/noto-sans-sc/OFL.txt).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "static" / "fonts" / "noto-sans-sc"
HEADER = """# kvviz's Streamlit settings (read by `streamlit run app.py` from this directory).
# The app serves its own CJK font (Noto Sans SC, SIL OFL 1.1, from the @fontsource/noto-sans-sc 5.3.0
# npm package: static/fonts/noto-sans-sc/, OFL.txt beside it), so Chinese renders on a browser with no
# CJK font installed. Each face covers a unicode range: a browser fetches only the files the page's
# characters need. Regenerate with scripts/font_faces.py.

[server]
enableStaticServing = true
# a classroom server: no file watcher (it walks .venv's ~4,200 folders and, with files changing nearby,
# rescans in a loop at ~0.9 of a core); restart the app after editing it
fileWatcherType = "none"

[runner]
# no full gc.collect(2) after every script run: it was 53-55% of the page threads' time with 30
# sessions (BENCHMARKS.md, Classroom load); Python still collects on its own schedule
postScriptGC = false

[theme]
font = "Source Sans, Noto Sans SC"
"""


def main(package: str) -> None:
    pkg = Path(package)
    css = (pkg / "400.css").read_text()
    faces = re.findall(r"src: url\(\./files/(noto-sans-sc-[\w-]+?-400-normal)\.woff2\).*?unicode-range: ([^;]+);",
                       css, re.S)
    DEST.mkdir(parents=True, exist_ok=True)
    out = [HEADER]
    for name, rng in faces:
        shutil.copyfile(pkg / "files" / f"{name}.woff2", DEST / f"{name}.woff2")
        out.append(f'[[theme.fontFaces]]\nfamily = "Noto Sans SC"\nurl = "app/static/fonts/noto-sans-sc/{name}.woff2"\n'
                   f'weight = "400"\nstyle = "normal"\nunicodeRange = "{rng.strip()}"\n')
    shutil.copyfile(pkg / "LICENSE", DEST / "OFL.txt")
    tmp = ROOT / ".streamlit" / "config.toml.tmp"
    tmp.parent.mkdir(exist_ok=True)
    tmp.write_text("\n".join(out))
    os.replace(tmp, ROOT / ".streamlit" / "config.toml")
    print(f"{len(faces)} faces")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "package")
