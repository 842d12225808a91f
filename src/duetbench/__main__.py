from duetbench.cli.program import entry

entry()
