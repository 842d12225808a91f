"""The screenshot in docs/report.md shows the report as the current code draws it (see screenshot_stamp)."""
from __future__ import annotations

import struct
import zlib

import pytest
from tests.report.screenshot_stamp import SCREENSHOT, SIGNATURE, fingerprint, stamp_of, stamped


def _tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b"")


def test_stamp_round_trip() -> None:
    png = _tiny_png()
    assert stamp_of(png) is None
    marked = stamped(png, "abc123")
    assert stamp_of(marked) == "abc123" and marked.endswith(png[-12:]) and len(marked) > len(png)
    with pytest.raises(ValueError):
        stamped(b"GIF89a", "x")


def test_docs_screenshot_is_current() -> None:
    stamp = stamp_of(SCREENSHOT.read_bytes())
    assert stamp == fingerprint(), (
        "docs/report-screenshot.png was drawn by other report code than the current one: regenerate it with "
        "scripts/report-screenshot (headless Chromium)")
