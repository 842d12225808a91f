"""The test PostgreSQL server as the store tests see it (started by the `pg_server` fixture)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PgServer:
    url: str  # postgresql://duet:PASSWORD@127.0.0.1:PORT/duet
    directory: Path

    @property
    def password(self) -> str:
        return str(re.search(r"://duet:([^@]+)@", self.url).group(1))  # type: ignore[union-attr]

    def database_url(self, name: str) -> str:
        return self.url.rsplit("/", 1)[0] + "/" + name

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def query(self, url: str, sql: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute(sql).fetchall()  # type: ignore[arg-type]
