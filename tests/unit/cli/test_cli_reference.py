"""docs/cli.md is the command-line reference the code writes: every command, argument and option of
`wsgibench` as click defines it, so that the page and the program cannot disagree."""

from __future__ import annotations

from pathlib import Path

import click

from wsgibench.cli import cli
from wsgibench.cli.reference import reference_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def test_the_doc_is_what_the_code_writes():
    assert DOC.read_text() == reference_markdown(), (
        "docs/cli.md differs from the commands: regenerate it with "
        "`python -m wsgibench.cli.reference > docs/cli.md`"
    )


def test_every_command_and_option_is_on_the_page():
    page = reference_markdown()
    root = click.Context(cli, info_name="wsgibench")
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        assert command is not None and f"## `wsgibench {name}`" in page
        section = page.split(f"## `wsgibench {name}`")[1].split("\n## ")[0]
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert f"`{param.opts[0]}`" in section, (name, param.opts)
            if isinstance(param, click.Argument):
                assert param.human_readable_name in section, (name, param.name)
