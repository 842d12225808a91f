"""Versioned schema migrations, run when a store opens, the same on SQLite and PostgreSQL.

Applied versions are recorded in the table ``schema_migrations``. A SQLite file written before that
table existed kept its version in ``PRAGMA user_version`` (1: comparisons, 2: campaigns); those
versions are taken as applied. All pending migrations run in one transaction that excludes other
migrating processes (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so many processes may
open a new database at once.

Migrations 1 and 2 create their tables in the current shape (``schema.py``); later migrations add
what is missing to tables that already exist, so a new database and an upgraded one end the same.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Table, inspect, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.schema import CreateColumn

from duetbench.errors import DuetError
from duetbench.store import schema
from duetbench.store.connect import write_transaction

#: pg_advisory_xact_lock key: the ASCII bytes of "duetbenc", unlikely to be any other application's lock.
_PG_LOCK_KEY = 0x6475657462656E63


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _create(*tables: Table) -> Callable[[Connection], None]:
    def apply(conn: Connection) -> None:
        for table in tables:
            table.create(conn, checkfirst=True)  # with its indexes
    return apply


def _add_columns(conn: Connection, version: int) -> None:
    """Add the columns `schema.ADDED_COLUMNS[version]` to tables that lack them."""
    inspector = inspect(conn)
    for table, column_name in schema.ADDED_COLUMNS[version]:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        if column_name not in present:
            ddl = CreateColumn(table.c[column_name]).compile(dialect=conn.dialect)
            conn.execute(text(f"ALTER TABLE {conn.dialect.identifier_preparer.format_table(table)} ADD COLUMN {ddl}"))


def _add_uids_and_activity(conn: Connection) -> None:
    _add_columns(conn, 3)
    for table in (schema.campaigns, schema.comparisons):
        ids = conn.execute(select(table.c.id).where(table.c.uid.is_(None))).scalars().all()
        for id_ in ids:
            conn.execute(table.update().where(table.c.id == id_).values(uid=str(uuid.uuid4())))
        for index in table.indexes:
            index.create(conn, checkfirst=True)


MIGRATIONS: list[Migration] = [
    Migration(1, "comparisons and their invocations", _create(schema.comparisons, schema.invocations)),
    Migration(2, "campaigns, runs, run sides, iterations",
              _create(schema.campaigns, schema.runs, schema.run_sides, schema.iterations)),
    Migration(3, "uids of campaigns and comparisons; activity of invocations and run sides", _add_uids_and_activity),
    Migration(4, "adaptive-warmup outcome of campaign runs", lambda conn: _add_columns(conn, 4)),
    Migration(5, "run-queue wait of invocations and run sides", lambda conn: _add_columns(conn, 5)),
]
HEAD = MIGRATIONS[-1].version


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table(schema.schema_migrations.name):
        return 0
    return int(conn.execute(select(schema.schema_migrations.c.version).order_by(
        schema.schema_migrations.c.version.desc()).limit(1)).scalar() or 0)


def migrate(engine: Engine) -> int:
    """Bring the database to `HEAD`; return the version it was at."""
    with engine.connect() as conn:
        version = current_version(conn)
        conn.rollback()
    if version == HEAD:
        return version  # the common case takes no write lock
    _refuse_newer(version)
    with write_transaction(engine) as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        version = current_version(conn)  # again: another process may have migrated meanwhile
        _refuse_newer(version)
        if version == 0:
            schema.schema_migrations.create(conn, checkfirst=True)
            version = _legacy_version(conn)
            for m in MIGRATIONS[:version]:
                conn.execute(schema.schema_migrations.insert(), dict(
                    version=m.version, name=f"{m.name} (before schema_migrations)", applied=time.time()))
        started_at = version
        for m in MIGRATIONS[version:]:
            m.apply(conn)
            conn.execute(schema.schema_migrations.insert(), dict(version=m.version, name=m.name,
                                                                  applied=time.time()))
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql(f"PRAGMA user_version={HEAD}")  # what older duetbench versions read
    return started_at


def refuse_foreign_database(engine: Engine, where: object) -> None:
    """Refuse a server database that holds tables but no duet ``schema_migrations`` (every duet database on a
    server has one: migrations came with server support), before migrating adds duet's tables to it: another
    program's database, given by mistake (as `sqlite_file.refuse_foreign` for a SQLite file)."""
    from duetbench.store.sqlite_file import MIGRATION_COLUMNS, NotADatabase

    with engine.connect() as conn:
        inspector = inspect(conn)
        tables = sorted(inspector.get_table_names())
        if not tables or (schema.schema_migrations.name in tables and MIGRATION_COLUMNS.issubset(
                c["name"] for c in inspector.get_columns(schema.schema_migrations.name))):
            return
    shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
    raise NotADatabase(f"{where}: a database of another program (tables: {shown}), not duet results",
                       hint="give --db a results database duet wrote, or an empty one (createdb NAME)")


def _legacy_version(conn: Connection) -> int:
    if conn.dialect.name != "sqlite":
        return 0
    return min(int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0), 2)


class NewerSchema(DuetError):
    """A database written by a newer duetbench, which this one must not migrate (or read as its own)."""


def _refuse_newer(version: int) -> None:
    if version > HEAD:
        raise NewerSchema(f"the results database is at schema version {version}, newer than this duetbench "
                        f"understands ({HEAD})", hint="upgrade duetbench, or use another --db")
