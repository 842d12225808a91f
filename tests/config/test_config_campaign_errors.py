"""Every kind of mistake in a campaign file is reported at its file:line:column, with a hint, all at once.

Line and column numbers below were counted by hand from the test texts (1-based; the key's position for
unknown or missing keys, the value's position for bad values).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from duetbench.config.campaign import CampaignError, load_campaign, parse_campaign
from duetbench.errors import DuetError

SEED_HINT = "omit it to let duet run draw a seed (it is recorded with the results)"
RUNS_HINT = "e.g. duet: 10"
WARMUP_HINT = 'a count (e.g. 5), a percentage (e.g. "20%") or a fraction below 1 (e.g. 0.2)'
BRACES = "write {{ and }} for literal braces"


def test_unknown_keys_at_every_level_with_suggestions(problems) -> None:
    assert problems("""\
        campaign: c
        methds: {duet: 2}
        benchmarks:
          fib:
            comand: x
            A: {comand: y}
        """) == [
        "campaign.yml:2:1: methds: unknown campaign key 'methds' — hint: did you mean 'methods'?",
        "campaign.yml:4:3: benchmarks.fib: side A has no command — hint: add 'command:' to the benchmark "
        "(for both sides), to A, or to the campaign",
        "campaign.yml:5:5: benchmarks.fib.comand: unknown benchmark key 'comand' — hint: did you mean 'command'?",
        "campaign.yml:6:9: benchmarks.fib.A.comand: unknown side key 'comand' — hint: did you mean 'command'?",
    ]


def test_unknown_key_without_a_close_match_lists_the_known_ones(problems) -> None:
    [line] = problems("campaign: c\nbenchmarks:\n  x:\n    command: y\n    container: {image: i, zzz: 1}\n")
    assert line == ("campaign.yml:5:27: benchmarks.x.container.zzz: unknown container key 'zzz' — "
                    "hint: known keys: image, options")


def test_bad_value_is_reported_at_the_value(problems) -> None:
    assert problems("""\
        campaign: c
        benchmarks:
          fib:
            command: x
            timeout: fast
        """) == ['campaign.yml:5:14: benchmarks.fib.timeout: must be a number > 0 (got "fast") '
                 "— hint: seconds, e.g. 300"]


def test_benchmark_settings_cannot_differ_per_side(problems) -> None:
    assert problems("""\
        campaign: c
        benchmarks:
          fib:
            command: x
            A:
              timeout: 3
            B: {command: y, methods: {duet: 1}}
        """) == [
        "campaign.yml:6:7: benchmarks.fib.A.timeout: 'timeout' cannot be set for one side: both sides of a run "
        "share it — hint: set it on the benchmark (benchmarks.fib.timeout) or the campaign",
        "campaign.yml:7:21: benchmarks.fib.B.methods: 'methods' cannot be set for one side: both sides of a run "
        "share it — hint: set it on the benchmark (benchmarks.fib.methods) or the campaign",
    ]


# One line of the campaign level (line 2 of the file) and the error it must give.
TOP_LEVEL_CASES = [
    ("seed: -1", f"2:7: seed: must be an integer from 0 to 2**63-1 (got -1) — hint: {SEED_HINT}"),
    ("seed: true", f"2:7: seed: must be an integer from 0 to 2**63-1 (got true) — hint: {SEED_HINT}"),
    ("schedule: random", '2:11: schedule: must be rmit or ordered (got "random") — hint: rmit: all runs in random '
                         "order (default); ordered: benchmark by benchmark"),
    ("schedule: ordred", "2:11: schedule: must be rmit or ordered (got \"ordred\") — hint: did you mean 'ordered'?"),
    ("methods: {duet: yes}", f"2:17: methods.duet: must be a number of runs, an integer from 0 to 1000000 (got true) — hint: "
                             f"{RUNS_HINT}"),
    ("methods: {duet: 1.5}", f"2:17: methods.duet: must be a number of runs, an integer from 0 to 1000000 (got 1.5) — hint: "
                             f"{RUNS_HINT}"),
    ("methods: {duet: }", f"2:16: methods.duet: must be a number of runs, an integer from 0 to 1000000 (got null) — hint: "
                          f"{RUNS_HINT}"),
    ("methods: {duett: 1}", "2:11: methods.duett: unknown method key 'duett' — hint: did you mean 'duet'?"),
    ("methods: [duet]", "2:10: methods: must be a mapping of method to number of runs (got a list) — hint: "
                        "e.g. methods: {duet: 10, sequential: 5}"),
    ("methods: {duet: 0, aduet: 0}", "2:10: methods: no runs at all for the benchmarks inheriting this — hint: "
                                     "give at least one method a number of runs > 0, e.g. duet: 10"),
    ("warmup: 100%", f'2:9: warmup: a percentage must be below 100% (got "100%") — hint: {WARMUP_HINT}'),
    ("warmup: 1.0", "2:9: warmup: a fraction must be >= 0 and < 1 (got 1.0) — hint: for a count write an integer, "
                    "e.g. 5"),
    ("warmup: -2", f"2:9: warmup: must not be negative (got -2) — hint: {WARMUP_HINT}"),
    ("warmup: lots", f'2:9: warmup: must be a count, a percentage or a fraction (got "lots") — hint: {WARMUP_HINT}'),
    ("timeout: 0", "2:10: timeout: must be a number > 0 (got 0) — hint: seconds, e.g. 300"),
    ("timeout: .inf", "2:10: timeout: must be a number > 0 (got inf) — hint: seconds, e.g. 300"),
    ('barrier_timeout: "60"', '2:18: barrier_timeout: must be a number > 0 (got "60") — hint: seconds, e.g. 60'),
    ('shell: "yes"', '2:8: shell: must be true or false (got "yes") — hint: true: run the command with /bin/sh -c; '
                     "false: split it like a shell and run it directly"),
    ("env: {X: ~}", '2:10: env.X: must be a string or number (got null) — hint: write "" for an empty value'),
    ("env: {X: [1]}", '2:10: env.X: must be a string or number (got a list) — hint: write "" for an empty value'),
    ("env: [X]", "2:6: env: must be a mapping of variable names to values (got a list) — hint: e.g. env: {LC_ALL: C}"),
    ("env: {DUET_SIDE: A}", "2:7: env.DUET_SIDE: DUET_SIDE is reserved: duet run sets the DUET_* variables itself "
                            "— hint: see docs/hooks.md; use barrier_timeout for DUET_BARRIER_TIMEOUT_MS"),
    ('env: {"A-B": x}', '2:7: env.A-B: "A-B" is not a valid environment variable name — hint: letters, digits '
                        "and '_', not starting with a digit"),
    ("env: {X: '{sid}'}", f"2:10: env.X: unknown placeholder {{sid}} — hint: did you mean {{side}}?; {BRACES}"),
    ('artifacts: {uname: ""}', '2:20: artifacts.uname: must be a shell command (got "") — hint: e.g. uname: uname -a'),
    ('artifacts: {"a b": x}', '2:13: artifacts.a b: artifact name "a b" is not a valid name — hint: use letters, '
                              "digits, '.', '_' and '-' only (it becomes a file name)"),
    ("parser: 3", "2:9: parser: must be a parser name or a mapping with 'name' (got 3) — hint: e.g. parser: jmh, "
                  "or parser: {name: regex, pattern: '...'}"),
    ("parser: {nam: csv}", "2:9: parser: the parser mapping needs 'name', a parser name (got null) — hint: "
                           "e.g. parser: {name: csv, column: 2}"),
    ("results: 5", "2:10: results: must be a list of file paths (got 5) — hint: e.g. results: [out/result.json]"),
    ('results: ["a{side}", "{outdri}/x"]', f"2:22: results[1]: unknown placeholder {{outdri}} — hint: did you mean "
                                   f"{{outdir}}?; {BRACES}"),
    ("results: ['{outdir']", "2:11: results[0]: unmatched '{' at character 1 — hint: write {{ or }} for a literal "
                             "brace"),
    ("container: 5", "2:12: container: must be an image name or a mapping with 'image' (got 5) — hint: "
                     "e.g. container: docker.io/library/python:3.12"),
    ('container: {image: ""}', '2:20: container.image: must be an image name (got "") — hint: '
                               "e.g. image: docker.io/library/python:3.12"),
    ("container: {image: i, options: x}", '2:32: container.options: must be a list of container engine arguments '
                                          '(got "x") — hint: e.g. options: ["--memory=2g"]'),
    ("container: {}", "2:1: container.image: missing required key 'image' — hint: "
                      "e.g. image: docker.io/library/python:3.12"),
    # would silently put both sides of a duet on CPU 1, the database still saying each had its own
    ('container: {image: i, options: ["--memory=1g", "--cpuset-cpus", "1"]}',
     "2:48: container.options[1]: --cpuset-cpus is set by duet run (it pins each side to its own CPU(s), as "
     "cpus_per_command says); a second one would override it — hint: remove it"),
    ('container: {image: i, options: ["--pull=always"]}',
     "2:33: container.options[0]: --pull is set by duet run (runs never pull: images are pulled before the first "
     "run); a second one would override it — hint: remove it"),
    ("command: \"awk '{print $1}'\"", f"2:10: command: unknown placeholder {{print $1}} — hint: placeholders are "
                                      f"{{outdir}}, {{side}}, {{benchmark}}, {{method}}, {{run}}; {BRACES}"),
    ("command: 42", "2:10: command: must be a command line (got 42) — hint: e.g. command: python3 bench.py --n 20"),
    ("A: x", "2:1: A: 'A' is a side of a benchmark — hint: move it into a benchmark, e.g. benchmarks: {fib: {A: ...}}"),
    ("campaign: again", "2:1: campaign: duplicate key 'campaign' (first at line 1) — hint: YAML would silently keep "
                        "only the last one; remove or rename one of them"),
]


@pytest.mark.parametrize("line, expected", TOP_LEVEL_CASES, ids=[c[0] for c in TOP_LEVEL_CASES])
def test_campaign_level_values(problems, line: str, expected: str) -> None:
    assert problems(f"campaign: c\n{line}\nbenchmarks: {{x: ./run}}\n") == [f"campaign.yml:{expected}"]


def test_commands_are_split_like_a_shell_would_where_they_are_used(problems) -> None:
    # the campaign's command is used by x only; y has its own
    assert problems("campaign: c\ncommand: \"a 'b\"\nbenchmarks: {x: {}, y: ./run}\n") == [
        "campaign.yml:2:10: command: cannot split the command like a shell would: No closing quotation — "
        "hint: fix the quoting, or set shell: true to run it with /bin/sh -c"]


def test_shell_commands_may_hold_any_quoting(load) -> None:
    campaign = load("campaign: c\nshell: true\ncommand: \"echo 'unbalanced\"\nbenchmarks: {x: {}}\n")
    assert campaign.benchmarks[0].sides["A"].shell is True


# One line of a benchmark (line 3 of the file, indented by two) and the errors it must give.
BENCHMARK_CASES = [
    ('"a b": x', ['3:3: benchmarks.a b: benchmark name "a b" is not a valid name — hint: use letters, digits, '
                  "'.', '_' and '-' only (it becomes a file name)"]),
    ("..: x", ['3:3: benchmarks...: benchmark name ".." is not a valid name — hint: use letters, digits, '
               "'.', '_' and '-' only (it becomes a file name)"]),
    ("x: 5", ["3:6: benchmarks.x: must be a mapping of settings or a command (got 5) — hint: "
              "e.g. fib: {command: python3 fib.py}"]),
    ("x: {command: y, seed: 1}", ["3:19: benchmarks.x.seed: 'seed' can only be set at the top level of the campaign "
                                  "— hint: move it to the top of the file"]),
    ("x: {B: y}", ["3:3: benchmarks.x: side A has no command — hint: add 'command:' to the benchmark (for both sides), "
                   "to A, or to the campaign"]),
    ("x: {A: y, B: ~}", ["3:16: benchmarks.x.B: must be a command or a mapping of settings (got null) — hint: "
                         "omit B altogether for an A/A benchmark (B a copy of A)"]),
    ("x: {A: [y]}", ["3:10: benchmarks.x.A: must be a command or a mapping of settings (got a list) — hint: "
                     "omit B altogether for an A/A benchmark (B a copy of A)"]),
    ("x: {command: y, methods: {sequential: 0}}", ["3:28: benchmarks.x.methods: no runs at all for this benchmark — "
                                                   "hint: give at least one method a number of runs > 0, "
                                                   "e.g. duet: 10"]),
    ("x: {command: ''}", ["3:16: benchmarks.x.command: must be a command line (got \"\") — hint: "
                          "e.g. command: python3 bench.py --n 20"]),
]


@pytest.mark.parametrize("line, expected", BENCHMARK_CASES, ids=[c[0] for c in BENCHMARK_CASES])
def test_benchmark_level_values(problems, line: str, expected: list[str]) -> None:
    assert problems(f"campaign: c\nbenchmarks:\n  {line}\n") == [f"campaign.yml:{e}" for e in expected]


def test_cwd_must_be_an_existing_directory(problems, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    assert problems("campaign: c\ncwd: nowhere\nbenchmarks:\n  x: {command: y, cwd: afile}\n") == [
        f"campaign.yml:2:6: cwd: directory {tmp_path}/nowhere does not exist — hint: relative paths are relative "
        f"to the campaign file's directory ({tmp_path})",
        f"campaign.yml:4:24: benchmarks.x.cwd: {tmp_path}/afile is not a directory — hint: cwd is the directory "
        "the command runs in",
    ]


def test_parser_name_and_options_are_checked_by_the_parser_registry(problems) -> None:
    lines = problems("""\
        campaign: c
        parser: jmhh
        benchmarks:
          x:
            command: y
            parser: {name: regex, patern: x}
        """)
    assert len(lines) == 3
    assert lines[0].startswith("campaign.yml:2:9: parser: ") and "jmhh" in lines[0]
    assert lines[0].endswith("— hint: did you mean 'jmh'?")
    # the missing required option is shown at the 'parser' key, the unknown one at its own key
    assert lines[1].startswith("campaign.yml:6:5: benchmarks.x.parser.pattern: ") and "pattern" in lines[1]
    assert lines[2].startswith("campaign.yml:6:27: benchmarks.x.parser.patern: ") and "patern" in lines[2]


def test_parser_option_values_are_located(problems) -> None:
    [line] = problems("campaign: c\nparser: {name: regex, pattern: 'no group'}\nbenchmarks: {x: y}\n")
    assert line.startswith("campaign.yml:2:32: parser.pattern: ") and "value" in line


def test_several_errors_of_every_kind_are_all_reported(problems) -> None:
    lines = problems("""\
        campaign: c
        seed: x
        benchmarks:
          a: {command: y, timeout: -1}
          b: {A: "{oops}"}
          a: {B: z}
        """)
    assert [line.split(": ")[0] for line in lines] == [
        "campaign.yml:2:7",   # seed
        "campaign.yml:5:10",  # b.A placeholder
        "campaign.yml:6:3",   # duplicate a (the second a is the one kept)
        "campaign.yml:6:3",   # ... whose side A has no command
    ]
    assert "duplicate key 'a' (first at line 4)" in lines[2] and "side A has no command" in lines[3]


def test_top_level_shapes(problems) -> None:
    assert problems("- a\n- b\n") == [
        "campaign.yml:1:1: the file must be a mapping of settings (got a list) — hint: start with 'campaign: NAME' "
        "and 'benchmarks:', see docs/campaign-format.md"]
    assert problems("seed: 1\n") == [
        "campaign.yml:1:1: benchmarks: missing required key 'benchmarks' — hint: list what to run, e.g. "
        "benchmarks: {fib: {command: python3 fib.py}}",
        "campaign.yml:1:1: campaign: missing required key 'campaign' — hint: name the campaign, e.g. "
        "campaign: my-suite"]
    assert problems("campaign: c\nbenchmarks: {}\n") == [
        "campaign.yml:2:13: benchmarks: must be a non-empty mapping of benchmark name to benchmark (got {}) — "
        "hint: e.g. benchmarks: {fib: {command: python3 fib.py}}"]


@pytest.mark.parametrize("text", ["", "\n\n", "# nothing but a comment\n", "---\n"])
def test_empty_file(problems, text: str) -> None:
    assert problems(text) == ["campaign.yml: the campaign file is empty — hint: start with 'campaign: NAME' and "
                              "'benchmarks:', see docs/campaign-format.md"]


def test_yaml_syntax_errors_name_the_place(problems) -> None:
    assert problems("campaign: c\nbenchmarks: [a\nseed: 1\n") == [
        "campaign.yml:3:5: not valid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence at "
        "line 2, column 13) — hint: check indentation and quoting around this place"]
    assert problems("campaign: c\nbenchmarks:\n\tx: y\n") == [
        "campaign.yml:3:1: not valid YAML: found character '\\t' that cannot start any token — hint: check "
        "indentation and quoting around this place"]
    [line] = problems("campaign: c\x01\n")
    assert line.startswith("campaign.yml:1:12: not valid YAML: character #x0001 is not allowed")


def test_yaml_tags_and_recursive_aliases_are_errors_not_crashes(problems) -> None:
    assert problems("campaign: c\nseed: !int 3\nbenchmarks: {x: y}\n") == [
        "campaign.yml:2:7: seed: cannot read this value: could not determine a constructor for the tag '!int' — "
        "hint: remove the YAML tag (the word starting with '!') or quote the value"]
    # an alias has no position of its own in PyYAML's node tree: the mapping it names is shown
    assert problems("campaign: c\nbenchmarks: &b {x: *b}\n") == [
        "campaign.yml:2:13: benchmarks.x: an alias refers to a mapping or list that contains it — hint: campaign "
        "files cannot be recursive; copy the settings instead"]


def test_positions_past_the_end_are_moved_onto_the_last_line(problems) -> None:
    # PyYAML places the empty value of the last key after the final newline
    lines = problems("benchmarks: {x: y}\ncampaign:")
    assert lines == ["campaign.yml:2:10: campaign: must be a name (got null) — hint: quote it if it is a number, "
                     'e.g. "42"']


def test_load_campaign_file_problems(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match=r"missing\.yml: campaign file not found — hint: check the path"):
        load_campaign(tmp_path / "missing.yml")
    with pytest.raises(CampaignError, match="is a directory"):
        load_campaign(tmp_path)
    (tmp_path / "latin1.yml").write_bytes(b"campaign: caf\xe9\n")
    with pytest.raises(CampaignError, match=r"latin1\.yml: not UTF-8 text .* at byte 13"):
        load_campaign(tmp_path / "latin1.yml")


def test_error_is_a_duet_error_with_the_cli_exit_code(tmp_path: Path) -> None:
    with pytest.raises(DuetError) as info:
        parse_campaign("campaign: c\n", tmp_path / "c.yml")
    assert info.value.exit_code == 2 and info.value.hint is None
    assert isinstance(info.value, CampaignError) and len(info.value.problems) == 1


def test_many_errors_are_capped(problems) -> None:
    env = ", ".join(f"V{i}: ~" for i in range(60))
    lines = problems(f"campaign: c\nenv: {{{env}}}\nbenchmarks: {{x: y}}\n")
    assert len(lines) == 51 and lines[-1] == "campaign.yml: ... and 10 more problems"


def test_stopping_keys_and_values_are_named_as_stopping_settings_with_hints(problems) -> None:
    # Unknown keys listed the campaign's keys; bad values had pydantic's wording and no hint; infinite
    # thresholds were accepted here and refused only when the campaign started, without a line.
    assert problems("""\
        campaign: c
        stopping: {foo: 1, runs: CV, target_width: 1.5, cv_threshold: .inf}
        benchmarks:
          x:
            command: y
            stopping: {mi: yes, window_runs: 1}
        """) == [
        "campaign.yml:2:12: stopping.foo: unknown stopping key 'foo' — hint: known keys: cv_threshold, f_min, "
        "kld_threshold, mi, min_runs, rciw_threshold, runs, target_width, warmup, wi_max, wi_min, "
        "window_iterations, window_runs",
        "campaign.yml:2:26: stopping.runs: must be cv, rciw or kld (got \"CV\") — hint: did you mean 'cv'?",
        "campaign.yml:2:44: stopping.target_width: must be a number > 0 and < 1 (got 1.5) "
        "— hint: e.g. target_width: 0.01 (1% of B/A)",
        "campaign.yml:2:63: stopping.cv_threshold: must be a finite number >= 0 (got inf) "
        "— hint: e.g. cv_threshold: 0.01",
        "campaign.yml:6:20: benchmarks.x.stopping.mi: must be an integer from 1 to 1000000 (got true) "
        "— hint: e.g. mi: 50 (measured iterations after warmup)",
        "campaign.yml:6:38: benchmarks.x.stopping.window_runs: must be an integer from 2 to 1000000 (got 1) "
        "— hint: e.g. window_runs: 2",
    ]


def test_stopping_settings_that_do_not_fit_together_once_merged_are_found_at_load(problems, load) -> None:
    # wi_max below the warmup window was refused only when the run started ("benchmark x: stopping: ..."),
    # without the file's line; it is reported where it is written, per benchmark inheriting it.
    hint = "hint: raise wi_max or use a fixed warmup count instead of dynamic warmup"
    assert problems("""\
        campaign: c
        stopping: {warmup: kld, wi_max: 3}
        benchmarks:
          x: y
          z:
            command: y
            stopping: {wi_max: 100, wi_min: 120}
        """) == [
        f"campaign.yml:2:33: stopping.wi_max: wi_max=3 is below the minimum warmup iterations (6 for kld) — {hint}",
        "campaign.yml:7:24: benchmarks.z.stopping.wi_max: wi_max=100 is below the minimum warmup iterations "
        f"(120 for kld) — {hint}",
    ]
    # f_max is the method's planned runs, not the paper's default 5: f_min above 5 is valid; a benchmark
    # switches off a criterion it would inherit with null.
    campaign = load("""\
        campaign: c
        methods: {duet: 20}
        stopping: {runs: cv, f_min: 10, warmup: cv, target_width: 0.01}
        benchmarks:
          x:
            command: y
            stopping: {warmup: null, target_width: null}
        """)
    assert campaign.benchmarks[0].stopping == {"runs": "cv", "f_min": 10, "warmup": None, "target_width": None}


def test_a_parser_file_that_is_not_a_declared_result_is_found_at_load(problems) -> None:
    # Loaded fine, then every run of the benchmark failed with "option file ... is not a declared result file".
    assert problems("""\
        campaign: c
        parser: {name: csv, file: "{outdir}/out.csv", value: t}
        results: ["{outdir}/out.csv"]
        benchmarks:
          fine: y
          other:
            command: y
            results: ["{outdir}"]
          own:
            command: y
            parser: {name: jmh, file: out.json}
        """) == [
        "campaign.yml:8:14: benchmarks.other.results: does not declare '{outdir}/out.csv', the file the "
        "campaign's parser reads — hint: add it, or give this benchmark its own parser",
        "campaign.yml:11:31: benchmarks.own.parser.file: 'out.json' is not one of the benchmark's results "
        "(declared: '{outdir}/out.csv') — hint: add it to 'results', or write it here exactly as it is written there",
    ]


def test_a_result_file_both_sides_of_a_duet_would_write_is_refused(problems, load) -> None:
    # Both sides wrote /tmp/x.csv at once; each parsed whichever was written last, so A was stored with B's
    # times (and the runs were "ok"). Under {outdir}, with {side}, or in runs that never overlap: fine.
    hint = "hint: write it under {outdir} (e.g. {outdir}/result.json), or add {side} to its name"
    assert problems("""\
        campaign: c
        methods: {duet: 2}
        parser: {name: csv, file: /tmp/x.csv, value: t}
        results: /tmp/x.csv
        benchmarks:
          x:
            A: ./a
            B: ./b
          aa:
            command: ./a
            methods: {aduet: 1}
            parser: {name: csv, file: out.csv, value: t}
            results: [out.csv, "{outdir}/y.csv"]
        """) == [
        "campaign.yml:4:10: results: benchmark x: A and B both write /tmp/x.csv when they run together (duet): "
        f"each side would read the file the other wrote last — {hint}",
        "campaign.yml:13:15: benchmarks.aa.results[0]: A and B both write out.csv when they run together (aduet): "
        f"each side would read the file the other wrote last — {hint}",
    ]
    load("""\
        campaign: c
        parser: {name: csv, file: "/tmp/x-{side}.csv", value: t}
        results: ["/tmp/x-{side}.csv", "{outdir}/y.csv"]
        benchmarks:
          x: ./a
          apart:
            command: ./a
            methods: {sequential: 2}
            parser: {name: csv, file: /tmp/x.csv, value: t}
            results: /tmp/x.csv
          elsewhere:
            command: ./a
            B: {cwd: /}
            parser: {name: csv, file: out.csv, value: t}
            results: out.csv
        """)


def test_the_text_stored_with_results_reads_back_without_the_checks_before_a_run(tmp_path: Path) -> None:
    # `duet analyze` reads the stored file for its warmup rule: a deleted cwd, or a check added since the
    # campaign ran (here: a result file both sides of a duet write), must not make it unreadable.
    text = "campaign: c\nwarmup: 3\ncwd: gone\nresults: out.json\nbenchmarks: {x: ./a}\n"
    with pytest.raises(CampaignError):
        parse_campaign(text, tmp_path / "campaign.yml")
    campaign = parse_campaign(text, tmp_path / "campaign.yml", stored=True)
    assert campaign.benchmarks[0].warmup.discard(10) == 3 and campaign.benchmarks[0].sides["A"].cwd == tmp_path / "gone"
