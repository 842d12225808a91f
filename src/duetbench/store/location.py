"""Where the results live: a SQLite file (a path, the default) or a PostgreSQL database (a URL).

A `StoreLocation` carries the URL with its password for connecting, but shows itself only with the
password masked (``str``, ``repr``, every error message), so credentials reach neither the terminal
nor the results. A PostgreSQL URL may leave the password (or host, user, database) out: libpq then
takes them from ``PGPASSWORD``/``~/.pgpass``/``PGHOST``… as any PostgreSQL client does.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

from duetbench.errors import DuetError

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
# user:password@ inside any URL-looking text; the password part is replaced when scrubbing. One slash
# counts too: a URL that went through a Path (a campaign file "not found") has lost one. No word boundary
# before the scheme: a URL glued to other text ("3postgresql://u:pw@h", "A_postgresql://...", found by
# bench/fuzz.py in a campaign value) must be masked too.
# The password runs to the last '@' before a space, slashes included: a generated password ("Zq/Xy+Wv=")
# often holds one, and one with an '@' not written %40 is refused as --db but may be in other text. Every
# part has a bound: unbounded, a long value with many "x://y:" in it took seconds per 20 kB (each match
# attempt scanned the rest of it), and a match may start anywhere, so a bound drops no glued URL.
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,31}:/{1,2}[^/\s:@]{0,256}:)(\S{1,256})(@)")
# password=... among a URL's query parameters, which libpq reads as the password too
# (postgresql:///db?host=h&password=pw).
_QUERY_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,31}:/{1,2}[^\s?#]{0,1024}\?(?:[^\s#&]{0,1024}&){0,32}"
                             r"password=)([^&\s#]{1,256})", re.IGNORECASE)
_POSTGRES_SCHEMES = {"postgresql", "postgres"}
#: Where files that belong beside a server database (raw run outputs) go: it has no directory of its own.
SERVER_LOCAL_DIR = Path(".duet")


def is_url(text: object) -> bool:
    """Whether a --db value names a database by URL (a `StoreLocation` of a server counts too)."""
    return bool(_SCHEME.match(str(text)))


def mask_credentials(text: str) -> str:
    """`text` with the password of every ``scheme://user:password@`` (or ``?password=``) in it replaced by ``***``."""
    if "@" in text:  # the cheap test first: most text (a command, a stderr tail) holds no URL password
        text = _URL_PASSWORD.sub(r"\1***\3", text)
    if "password=" in text.lower():
        text = _QUERY_PASSWORD.sub(r"\1***", text)
    return text


def scrub_credentials(value: Any) -> Any:
    """A JSON-like value with every URL password in its strings masked: what callers put into a
    campaign's or comparison's ``options``/``host`` must never carry a password into the results."""
    if isinstance(value, str):
        return mask_credentials(value)
    if isinstance(value, StoreLocation):
        return str(value)
    if isinstance(value, dict):
        return {k: scrub_credentials(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_credentials(v) for v in value]
    return value


class StoreLocation(msgspec.Struct, frozen=True, eq=False):
    """A parsed results-database location. Construct with `StoreLocation.parse`."""

    kind: str  # "sqlite" | "postgresql"
    url: URL  # what the engine connects to (driver-qualified, with the password)
    path: Path | None  # the SQLite file; None for a server
    shown: URL | None = None  # the URL as the user wrote it, for display (password masked on render)

    @classmethod
    def parse(cls, where: str | Path | StoreLocation) -> StoreLocation:
        if isinstance(where, StoreLocation):
            return where
        text = str(where)
        if not is_url(text):
            return cls.sqlite(Path(text))
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(text)
        except (ArgumentError, ValueError):
            raise DuetError(f"--db {mask_credentials(text)}: not a valid database URL",
                            hint="use a file path, or postgresql://USER@HOST[:PORT]/DATABASE (a password after "
                                 "USER: percent-encoded)") from None
        if url.host is not None and "@" in url.host:
            # A password's '@' would be taken as part of the host name, and shown as such in every error.
            scheme, _, rest = text.partition("://")
            raise DuetError(f"--db {scheme}://***@{rest.rpartition('@')[2]}: more than one '@' in the URL",
                            hint="write an '@' in the user name or password as %40") from None
        backend = url.get_backend_name()
        if backend == "sqlite":
            if not url.database or url.database == ":memory:":
                raise DuetError(f"--db {text}: the results need a file",
                                hint="use a path such as results.db or sqlite:///results.db")
            return cls.sqlite(Path(url.database))
        if backend in _POSTGRES_SCHEMES:
            return cls("postgresql", url.set(drivername="postgresql+psycopg"), None, url)
        raise DuetError(f"--db {url.render_as_string(hide_password=True)}: unsupported database '{backend}'",
                        hint="use a SQLite file path or a postgresql:// URL")

    @classmethod
    def sqlite(cls, path: Path) -> StoreLocation:
        from sqlalchemy.engine import URL

        return cls("sqlite", URL.create("sqlite", database=str(path)), path)

    @property
    def is_server(self) -> bool:
        return self.kind != "sqlite"

    @property
    def parent(self) -> Path:
        """The local directory for files kept beside the results (a campaign's raw outputs): the
        SQLite file's directory, or ``.duet`` in the working directory for a server database."""
        return self.path.parent if self.path is not None else SERVER_LOCAL_DIR

    def exists(self) -> bool:
        """Whether there is a database to read: a server database is assumed to exist (opening it
        tells, with a clear error, when it does not)."""
        return self.path.exists() if self.path is not None else True

    @property
    def password(self) -> str | None:
        return None if self.url.password is None else str(self.url.password)

    def __str__(self) -> str:
        if self.path is not None:
            return str(self.path)
        return mask_credentials((self.shown or self.url).render_as_string(hide_password=True))

    def __repr__(self) -> str:
        return f"StoreLocation({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreLocation) and self.url == other.url

    def __hash__(self) -> int:
        return hash(str(self.url))

    def same_place(self, other: StoreLocation) -> bool:
        if self.path is not None and other.path is not None:
            return self.path.resolve() == other.path.resolve()
        return self.url == other.url
