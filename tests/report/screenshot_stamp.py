"""docs/report-screenshot.png says which report code drew it: the browser test writes a fingerprint of the
report's template, styles, scripts and plot data code into the PNG (a tEXt chunk), and a fast test fails
when the code has changed since, so the screenshot in the docs is never older than the report it shows."""
from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "report-screenshot.png"
#: What decides how a campaign report looks.
SOURCES = ("src/duetbench/report/templates/report.html.j2", "src/duetbench/report/static/report.css",
           "src/duetbench/report/static/charts.js", "src/duetbench/report/static/report.js",
           "src/duetbench/report/html.py", "src/duetbench/report/studies.py",
           "src/duetbench/report/distribution.py")
KEYWORD = b"duetbench-report-sources"
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fingerprint() -> str:
    digest = hashlib.sha256()
    for name in SOURCES:
        # Line endings normalized: a checkout with CRLF endings shows the same report.
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    if not png.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    out, at = [], len(SIGNATURE)
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        out.append((png[at + 4:at + 8], png[at + 8:at + 8 + length]))
        at += 12 + length
    return out


def stamped(png: bytes, value: str) -> bytes:
    """`png` with a tEXt chunk KEYWORD=value right after its header (IHDR must come first)."""
    chunks = _chunks(png)
    if chunks[0][0] != b"IHDR":
        raise ValueError("a PNG starts with its IHDR chunk")
    data = KEYWORD + b"\0" + value.encode("latin-1")
    text = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    ihdr_end = len(SIGNATURE) + 12 + len(chunks[0][1])
    return png[:ihdr_end] + text + png[ihdr_end:]


def stamp_of(png: bytes) -> str | None:
    for kind, data in _chunks(png):
        if kind == b"tEXt" and data.startswith(KEYWORD + b"\0"):
            return data[len(KEYWORD) + 1:].decode("latin-1")
    return None
