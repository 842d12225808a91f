"""The results schema, declared once for SQLite and PostgreSQL (SQLAlchemy Core).

This is the current shape; `migrations.py` brings any older database to it. Integers that can
outgrow 32 bits (ns timestamps, counters, seeds) are BIGINT: PostgreSQL's INTEGER is 32-bit, SQLite's
is not. Ids are AUTOINCREMENT on SQLite (never reused, as before) and SERIAL on PostgreSQL.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()


def _process_columns(*, side_is_key: bool) -> list[Column[Any]]:
    """What one process measured: the fields of `model.invocation.Invocation`, with `activity` (per-run
    noise attribution as JSON) and `cgroup_wait_s` (run-queue wait) nullable: filled by newer writers."""
    return [
        Column("side", Text, primary_key=side_is_key, nullable=False), Column("index", Integer, nullable=False),
        Column("pair", Integer, nullable=False), Column("warmup", Boolean, nullable=False),
        Column("status", Text, nullable=False), Column("exit_code", Integer), Column("signal", Integer),
        Column("start_ns", BigInteger), Column("end_ns", BigInteger), Column("wall_s", Float),
        Column("cpu_s", Float), Column("user_s", Float), Column("sys_s", Float), Column("cgroup_cpu_s", Float),
        Column("maxrss_kb", BigInteger), Column("nvcsw", BigInteger), Column("nivcsw", BigInteger),
        Column("minflt", BigInteger), Column("majflt", BigInteger), Column("cpu_requested", Integer),
        Column("cpu_seen", Integer), Column("orphans_reaped", Integer), Column("steal_s", Float),
        Column("error", Text), Column("stderr_tail", Text), Column("activity", Text),
        Column("cgroup_wait_s", Float),
    ]


schema_migrations = Table(
    "schema_migrations", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False),
    Column("applied", Float, nullable=False),
)

comparisons = Table(
    "comparisons", metadata,
    Column("id", Integer, primary_key=True),
    Column("created", Float, nullable=False), Column("finished", Float), Column("status", Text, nullable=False),
    Column("method", Text, nullable=False), Column("name_a", Text, nullable=False),
    Column("name_b", Text, nullable=False), Column("command_a", Text, nullable=False),
    Column("command_b", Text, nullable=False), Column("seed", BigInteger, nullable=False),
    Column("options", Text, nullable=False), Column("host", Text, nullable=False),
    Column("tool_version", Text, nullable=False),
    # Identifies a comparison across databases (merge). Nullable only because SQLite cannot add a NOT
    # NULL column to existing rows; the store always fills it.
    Column("uid", String(36)),
    Index("comparisons_uid", "uid", unique=True),
    sqlite_autoincrement=True,
)

invocations = Table(
    "invocations", metadata,
    Column("comparison_id", Integer, ForeignKey("comparisons.id"), primary_key=True, autoincrement=False),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    *_process_columns(side_is_key=False),
)

campaigns = Table(
    "campaigns", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False), Column("path", Text, nullable=False),
    Column("source_sha256", Text, nullable=False), Column("source_text", Text, nullable=False),
    Column("created", Float, nullable=False), Column("finished", Float), Column("status", Text, nullable=False),
    Column("seed", BigInteger, nullable=False), Column("schedule", Text, nullable=False),
    Column("plan", Text, nullable=False), Column("run_dir", Text, nullable=False),
    Column("options", Text, nullable=False), Column("host", Text, nullable=False),
    Column("artifacts", Text, nullable=False), Column("tool_version", Text, nullable=False),
    Column("uid", String(36)),  # see comparisons.uid
    Index("campaigns_uid", "uid", unique=True),
    sqlite_autoincrement=True,
)

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("campaign_id", Integer, ForeignKey("campaigns.id"), nullable=False),
    Column("key", Text, nullable=False), Column("position", Integer, nullable=False),
    Column("benchmark", Text, nullable=False), Column("method", Text, nullable=False),
    Column("repetition", Integer, nullable=False), Column("launch_order", Text, nullable=False),
    Column("status", Text, nullable=False), Column("error", Text, nullable=False),
    Column("started", Float, nullable=False), Column("finished", Float, nullable=False),
    Column("run_dir", Text, nullable=False), Column("clock", Text, nullable=False),
    Column("notes", Text, nullable=False),
    # JSON: how dynamic warmup ended this run (execute/live.py `LiveWarmup.outcome`); NULL: it was off.
    Column("adaptive_warmup", Text),
    UniqueConstraint("campaign_id", "key"),
    Index("runs_by_campaign", "campaign_id", "benchmark", "method"),
    sqlite_autoincrement=True,
)

run_sides = Table(
    "run_sides", metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True, autoincrement=False),
    *_process_columns(side_is_key=True),
)

iterations = Table(
    "iterations", metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True, autoincrement=False),
    Column("side", Text, primary_key=True), Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("name", Text, nullable=False), Column("value_s", Float, nullable=False),
    Column("start_ns", BigInteger), Column("end_ns", BigInteger), Column("warmup", Boolean, nullable=False),
)

#: Columns each migration after the first two adds to tables that already exist: (table, column).
ADDED_COLUMNS: dict[int, list[tuple[Table, str]]] = {
    3: [(campaigns, "uid"), (comparisons, "uid"), (invocations, "activity"), (run_sides, "activity")],
    4: [(runs, "adaptive_warmup")],
    5: [(invocations, "cgroup_wait_s"), (run_sides, "cgroup_wait_s")],
}
