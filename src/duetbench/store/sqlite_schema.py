"""The current schema of a SQLite results database, as plain data for the direct store (store/direct.py).

Generated from the SQLAlchemy metadata (store/schema.py) and the migrations (store/migrations.py) by
``python -m duetbench.store.generate_sqlite_schema``: do not edit; tests/store/test_direct.py fails
when it differs from what they generate."""

#: The schema version of the last migration (migrations.HEAD).
HEAD = 5

#: (version, name) of every migration, as `schema_migrations` records them.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, 'comparisons and their invocations'),
    (2, 'campaigns, runs, run sides, iterations'),
    (3, 'uids of campaigns and comparisons; activity of invocations and run sides'),
    (4, 'adaptive-warmup outcome of campaign runs'),
    (5, 'run-queue wait of invocations and run sides'),
)

#: Every table's columns, in order.
COLUMNS: dict[str, tuple[str, ...]] = {
    'campaigns': (
        'id', 'name', 'path', 'source_sha256', 'source_text', 'created', 'finished', 'status', 'seed', 'schedule',
        'plan', 'run_dir', 'options', 'host', 'artifacts', 'tool_version', 'uid',
    ),
    'comparisons': (
        'id', 'created', 'finished', 'status', 'method', 'name_a', 'name_b', 'command_a', 'command_b', 'seed',
        'options', 'host', 'tool_version', 'uid',
    ),
    'schema_migrations': (
        'version', 'name', 'applied',
    ),
    'invocations': (
        'comparison_id', 'seq', 'side', 'index', 'pair', 'warmup', 'status', 'exit_code', 'signal', 'start_ns',
        'end_ns', 'wall_s', 'cpu_s', 'user_s', 'sys_s', 'cgroup_cpu_s', 'maxrss_kb', 'nvcsw', 'nivcsw', 'minflt',
        'majflt', 'cpu_requested', 'cpu_seen', 'orphans_reaped', 'steal_s', 'error', 'stderr_tail', 'activity',
        'cgroup_wait_s',
    ),
    'runs': (
        'id', 'campaign_id', 'key', 'position', 'benchmark', 'method', 'repetition', 'launch_order', 'status',
        'error', 'started', 'finished', 'run_dir', 'clock', 'notes', 'adaptive_warmup',
    ),
    'iterations': (
        'run_id', 'side', 'seq', 'name', 'value_s', 'start_ns', 'end_ns', 'warmup',
    ),
    'run_sides': (
        'run_id', 'side', 'index', 'pair', 'warmup', 'status', 'exit_code', 'signal', 'start_ns', 'end_ns',
        'wall_s', 'cpu_s', 'user_s', 'sys_s', 'cgroup_cpu_s', 'maxrss_kb', 'nvcsw', 'nivcsw', 'minflt', 'majflt',
        'cpu_requested', 'cpu_seen', 'orphans_reaped', 'steal_s', 'error', 'stderr_tail', 'activity',
        'cgroup_wait_s',
    ),
}

#: What creates them on a new database, in order.
DDL: tuple[str, ...] = (
    (
        'CREATE TABLE campaigns (\n'
        '\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n'
        '\tname TEXT NOT NULL, \n'
        '\tpath TEXT NOT NULL, \n'
        '\tsource_sha256 TEXT NOT NULL, \n'
        '\tsource_text TEXT NOT NULL, \n'
        '\tcreated FLOAT NOT NULL, \n'
        '\tfinished FLOAT, \n'
        '\tstatus TEXT NOT NULL, \n'
        '\tseed BIGINT NOT NULL, \n'
        '\tschedule TEXT NOT NULL, \n'
        '\t"plan" TEXT NOT NULL, \n'
        '\trun_dir TEXT NOT NULL, \n'
        '\toptions TEXT NOT NULL, \n'
        '\thost TEXT NOT NULL, \n'
        '\tartifacts TEXT NOT NULL, \n'
        '\ttool_version TEXT NOT NULL, \n'
        '\tuid VARCHAR(36)\n'
        ')'
    ),
    (
        'CREATE UNIQUE INDEX campaigns_uid ON campaigns (uid)'
    ),
    (
        'CREATE TABLE comparisons (\n'
        '\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n'
        '\tcreated FLOAT NOT NULL, \n'
        '\tfinished FLOAT, \n'
        '\tstatus TEXT NOT NULL, \n'
        '\tmethod TEXT NOT NULL, \n'
        '\tname_a TEXT NOT NULL, \n'
        '\tname_b TEXT NOT NULL, \n'
        '\tcommand_a TEXT NOT NULL, \n'
        '\tcommand_b TEXT NOT NULL, \n'
        '\tseed BIGINT NOT NULL, \n'
        '\toptions TEXT NOT NULL, \n'
        '\thost TEXT NOT NULL, \n'
        '\ttool_version TEXT NOT NULL, \n'
        '\tuid VARCHAR(36)\n'
        ')'
    ),
    (
        'CREATE UNIQUE INDEX comparisons_uid ON comparisons (uid)'
    ),
    (
        'CREATE TABLE schema_migrations (\n'
        '\tversion INTEGER NOT NULL, \n'
        '\tname TEXT NOT NULL, \n'
        '\tapplied FLOAT NOT NULL, \n'
        '\tPRIMARY KEY (version)\n'
        ')'
    ),
    (
        'CREATE TABLE invocations (\n'
        '\tcomparison_id INTEGER NOT NULL, \n'
        '\tseq INTEGER NOT NULL, \n'
        '\tside TEXT NOT NULL, \n'
        '\t"index" INTEGER NOT NULL, \n'
        '\tpair INTEGER NOT NULL, \n'
        '\twarmup BOOLEAN NOT NULL, \n'
        '\tstatus TEXT NOT NULL, \n'
        '\texit_code INTEGER, \n'
        '\tsignal INTEGER, \n'
        '\tstart_ns BIGINT, \n'
        '\tend_ns BIGINT, \n'
        '\twall_s FLOAT, \n'
        '\tcpu_s FLOAT, \n'
        '\tuser_s FLOAT, \n'
        '\tsys_s FLOAT, \n'
        '\tcgroup_cpu_s FLOAT, \n'
        '\tmaxrss_kb BIGINT, \n'
        '\tnvcsw BIGINT, \n'
        '\tnivcsw BIGINT, \n'
        '\tminflt BIGINT, \n'
        '\tmajflt BIGINT, \n'
        '\tcpu_requested INTEGER, \n'
        '\tcpu_seen INTEGER, \n'
        '\torphans_reaped INTEGER, \n'
        '\tsteal_s FLOAT, \n'
        '\terror TEXT, \n'
        '\tstderr_tail TEXT, \n'
        '\tactivity TEXT, \n'
        '\tcgroup_wait_s FLOAT, \n'
        '\tPRIMARY KEY (comparison_id, seq), \n'
        '\tFOREIGN KEY(comparison_id) REFERENCES comparisons (id)\n'
        ')'
    ),
    (
        'CREATE TABLE runs (\n'
        '\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n'
        '\tcampaign_id INTEGER NOT NULL, \n'
        '\t"key" TEXT NOT NULL, \n'
        '\tposition INTEGER NOT NULL, \n'
        '\tbenchmark TEXT NOT NULL, \n'
        '\tmethod TEXT NOT NULL, \n'
        '\trepetition INTEGER NOT NULL, \n'
        '\tlaunch_order TEXT NOT NULL, \n'
        '\tstatus TEXT NOT NULL, \n'
        '\terror TEXT NOT NULL, \n'
        '\tstarted FLOAT NOT NULL, \n'
        '\tfinished FLOAT NOT NULL, \n'
        '\trun_dir TEXT NOT NULL, \n'
        '\tclock TEXT NOT NULL, \n'
        '\tnotes TEXT NOT NULL, \n'
        '\tadaptive_warmup TEXT, \n'
        '\tUNIQUE (campaign_id, "key"), \n'
        '\tFOREIGN KEY(campaign_id) REFERENCES campaigns (id)\n'
        ')'
    ),
    (
        'CREATE INDEX runs_by_campaign ON runs (campaign_id, benchmark, method)'
    ),
    (
        'CREATE TABLE iterations (\n'
        '\trun_id INTEGER NOT NULL, \n'
        '\tside TEXT NOT NULL, \n'
        '\tseq INTEGER NOT NULL, \n'
        '\tname TEXT NOT NULL, \n'
        '\tvalue_s FLOAT NOT NULL, \n'
        '\tstart_ns BIGINT, \n'
        '\tend_ns BIGINT, \n'
        '\twarmup BOOLEAN NOT NULL, \n'
        '\tPRIMARY KEY (run_id, side, seq), \n'
        '\tFOREIGN KEY(run_id) REFERENCES runs (id)\n'
        ')'
    ),
    (
        'CREATE TABLE run_sides (\n'
        '\trun_id INTEGER NOT NULL, \n'
        '\tside TEXT NOT NULL, \n'
        '\t"index" INTEGER NOT NULL, \n'
        '\tpair INTEGER NOT NULL, \n'
        '\twarmup BOOLEAN NOT NULL, \n'
        '\tstatus TEXT NOT NULL, \n'
        '\texit_code INTEGER, \n'
        '\tsignal INTEGER, \n'
        '\tstart_ns BIGINT, \n'
        '\tend_ns BIGINT, \n'
        '\twall_s FLOAT, \n'
        '\tcpu_s FLOAT, \n'
        '\tuser_s FLOAT, \n'
        '\tsys_s FLOAT, \n'
        '\tcgroup_cpu_s FLOAT, \n'
        '\tmaxrss_kb BIGINT, \n'
        '\tnvcsw BIGINT, \n'
        '\tnivcsw BIGINT, \n'
        '\tminflt BIGINT, \n'
        '\tmajflt BIGINT, \n'
        '\tcpu_requested INTEGER, \n'
        '\tcpu_seen INTEGER, \n'
        '\torphans_reaped INTEGER, \n'
        '\tsteal_s FLOAT, \n'
        '\terror TEXT, \n'
        '\tstderr_tail TEXT, \n'
        '\tactivity TEXT, \n'
        '\tcgroup_wait_s FLOAT, \n'
        '\tPRIMARY KEY (run_id, side), \n'
        '\tFOREIGN KEY(run_id) REFERENCES runs (id)\n'
        ')'
    ),
)
