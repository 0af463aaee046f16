from wsgibench.cli import main

main()
