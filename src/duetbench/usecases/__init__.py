"""Use cases: what a command does, apart from how its arguments are parsed and its results printed.

- `compare`: `duet compare` and `duet show` (one comparison of two commands, adaptive);
- `campaign`: `duet run` (a suite from a campaign file), `slurm`: the same as Slurm array jobs;
- `measure`: `duet measure` (EMP: repeated runs with process accounting);
- `scan`: `duet compare -P/-L` (a parameter scan, one comparison per value).
"""
