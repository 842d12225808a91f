"""Issue 16 item 9: no command prints a database password, whatever place the URL was given in."""
from __future__ import annotations

import pytest

URL = "postgresql://user:s3cr3tpw@nohost.invalid/db"


@pytest.mark.parametrize("args", [
    ("merge", URL, "--db", "m.db"),
    ("merge", "x.db", "--db", URL),
    ("merge", URL + "x", URL),
    ("show", "--db", URL),
    ("show", "--db", "postgresql://user:s3cr3tpw@host:notaport/db"),
    ("analyze", "--db", URL),
    ("compare", URL, "true", "--db", "r.db"),
    ("run", URL, "--db", "r.db"),
    ("import", "hyperfine", URL, "--db", "r.db"),
])
def test_no_command_prints_a_password(duet, tmp_path, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "x.db").write_bytes(b"")
    proc = duet(*args, timeout=60)
    assert proc.returncode != 0
    assert "s3cr3tpw" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
