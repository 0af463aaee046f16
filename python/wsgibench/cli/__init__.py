"""The command line: every click command, thin, forwarding to the typed functions below it."""

from wsgibench.cli.main import cli, main

__all__ = ["cli", "main"]
