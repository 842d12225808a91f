from duetbench.cli import main

main()
