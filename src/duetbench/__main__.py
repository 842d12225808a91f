from duetbench.cli.main import main

main()
