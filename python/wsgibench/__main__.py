"""`python -m wsgibench`: the command line."""

from wsgibench.cli import main

main()
