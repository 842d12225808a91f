"""Reading a CSV (plain or gzipped) into named columns of strings, with file:line errors."""
from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np

from duetbench.errors import DuetError


def read_columns(path: Path) -> dict[str, np.ndarray]:
    """Every column of a CSV with a header row, as arrays of str (object); `.gz` is decompressed."""
    try:
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise DuetError(f"{path}: file not found", hint="check the path") from None
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        raise DuetError(f"{path}: cannot read: {e}", hint="give a UTF-8 CSV file, optionally gzipped (.gz)") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise DuetError(f"{path}: not a CSV file: {e}", hint="give a comma-separated file with a header row") from None
    if not rows or not rows[0]:
        raise DuetError(f"{path}: empty CSV file", hint="the first line must name the columns")
    header = [h.strip() for h in rows[0]]
    twice = next((name for k, name in enumerate(header) if name in header[:k]), None)
    if twice is not None:  # columns are chosen by name: one of the two would silently be ignored
        where = [k + 1 for k, name in enumerate(header) if name == twice]
        raise DuetError(f"{path}:1: column {twice!r} appears {len(where)} times in the header "
                        f"(columns {', '.join(map(str, where))})", hint="give each column its own name")
    body = [r for r in rows[1:] if r]
    bad = next((n for n, r in enumerate(body) if len(r) != len(header)), None)
    if bad is not None:
        line = rows.index(body[bad]) + 1
        raise DuetError(f"{path}:{line}: has {len(body[bad])} fields, the header has {len(header)}",
                        hint="every row needs one value per column (quote values that contain commas)")
    if not body:
        raise DuetError(f"{path}: no data rows below the header", hint="the file holds no measurements")
    cells = np.array(body, dtype=object).reshape(len(body), len(header))
    return {name: cells[:, i] for i, name in enumerate(header)}


def require_columns(path: Path, columns: dict[str, np.ndarray], needed: list[str], hint: str) -> None:
    missing = [c for c in needed if c not in columns]
    if missing:
        raise DuetError(f"{path}: missing column(s) {', '.join(missing)} (it has: {', '.join(columns)})", hint=hint)
