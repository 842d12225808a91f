"""The command line: parses arguments, calls a use case (`duetbench.usecases`), prints what it returns.

`main.py` holds the `duet` group (the `duet` script is `duetbench.cli.program:entry`, which runs it); every
other command lives in its own module here and is imported only when it is called, so `duet --version`
and `duet --help` stay fast (docs/notes/overhead.md).
"""
