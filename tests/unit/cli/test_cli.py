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


def test_a_store_is_named_as_run_names_it_or_as_an_argument(tmp_path):
    # `run --results x.sqlite` then `show --results x.sqlite`: both ways read the same store.
    from unit.synthetic import build_store

    path = str(build_store(tmp_path / "x.sqlite"))
    for command in (["show"], ["export"], ["report", "--out", str(tmp_path / "r"), "--no-png"]):
        by_option = CliRunner().invoke(cli, [*command, "--results", path])
        by_argument = CliRunner().invoke(cli, [*command, path])
        assert by_option.exit_code == 0, by_option.output
        assert by_option.output == by_argument.output and by_option.output
    both = CliRunner().invoke(cli, ["show", path, "--results", "y.sqlite"])
    assert both.exit_code == 2 and "two stores given" in both.output


def test_a_path_the_system_refuses_is_one_line_not_an_internal_error(tmp_path):
    from unit.synthetic import build_store

    path = str(build_store(tmp_path / "x.sqlite"))
    (tmp_path / "file").write_text("")
    nowhere = tmp_path / "file" / "below"  # a folder under a file: ENOTDIR, whoever runs it
    for argv in (
        ["report", path, "--out", str(nowhere), "--no-png"],
        ["export", path, "--out", str(nowhere / "x.csv")],
        ["history", path, "--html", str(nowhere / "h.html")],
    ):
        said = CliRunner().invoke(cli, argv)
        assert said.exit_code == 3, (argv, said.output)
        assert "error: Not a directory: " in said.output and "internal error" not in said.output


def test_checks_options_for_ones_own_app_need_the_app():
    for given in (["--path", "/x"], ["--app-env", "MODE=prod"]):
        said = CliRunner().invoke(cli, ["check", "waitress", *given])
        assert said.exit_code == 2 and "go with --app: your app" in said.output
