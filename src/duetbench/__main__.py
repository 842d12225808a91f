from duetbench.cli.main import entry

entry()
