"""The CLI is declared once; every command's --help runs."""

import pytest
from click.testing import CliRunner

from wsgibench.cli import cli


def _commands():
    return sorted(cli.commands)


def test_commands_exist():
    assert {"servers", "install", "run", "show", "export", "check", "studies"} <= set(_commands())


@pytest.mark.parametrize("name", [None, *_commands()])
def test_help_runs(name):
    args = [name, "--help"] if name else ["--help"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
