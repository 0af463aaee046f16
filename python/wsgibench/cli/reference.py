"""The command-line reference (docs/cli.md), written from the click commands themselves, so that the
page and the program cannot disagree: `python -m wsgibench.cli.reference > docs/cli.md`."""

from __future__ import annotations

import click

INTRO = """\
# Command line

Every `wsgibench` command, its arguments and its options, as the program itself defines them.
This page is written from the code (`python -m wsgibench.cli.reference > docs/cli.md`); a test
fails when the two differ. `wsgibench COMMAND --help` says the same in a terminal. Every key of a
study file is in [Study files](studies.md); exit codes are in
[When things go wrong](robustness.md#exit-codes).
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# click's mark of a default not given (click 8.3 and later; None before).
_UNSET = getattr(click.core, "UNSET", None)


def _default(param: click.Parameter, ctx: click.Context) -> str:
    """A default as the reader types it; none for flags off, callables and empty values."""
    value = param.get_default(ctx, call=False)
    if value is _UNSET or callable(value) or value in (None, (), False, ""):
        return ""
    if value is True:
        return "on"
    if isinstance(value, (list, tuple)):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def _takes(param: click.Option, ctx: click.Context) -> str:
    if param.is_flag and not param.secondary_opts:
        return "flag"
    if param.is_flag:
        return "flag (" + " / ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts)) + ")"
    kind = param.type
    if isinstance(kind, click.Choice):
        return " \\| ".join(f"`{c}`" for c in kind.choices)
    return _cell(param.make_metavar(ctx)).lower()


def _options(command: click.Command, ctx: click.Context) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden or "--help" in param.opts:
            continue
        names = ", ".join(f"`{o}`" for o in param.opts)
        said = "multiple times: " if param.multiple else ""
        rows.append(
            f"| {names} | {_takes(param, ctx)} | {_default(param, ctx)} | {said}{_cell(param.help or '')} |"
        )
    if not rows:
        return []
    return ["| option | takes | default | what |", "|---|---|---|---|", *rows, ""]


def _arguments(command: click.Command) -> str:
    names = [
        p.human_readable_name + ("…" if p.nargs == -1 else "")
        for p in command.params
        if isinstance(p, click.Argument)
    ]
    return ", ".join(f"`{n}`" for n in names)


def command_markdown(name: str, command: click.Command, parent: click.Context) -> list[str]:
    ctx = click.Context(command, parent=parent, info_name=name)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [
        f"## `wsgibench {name}`",
        "",
        _cell(command.help or "").replace("\\|", "|"),
        "",
        f"```\nwsgibench {name} {usage}\n```",
        "",
    ]
    if arguments := _arguments(command):
        lines += [f"Arguments: {arguments}.", ""]
    return lines + _options(command, ctx)


def reference_markdown() -> str:
    """Every command of the `wsgibench` group, in alphabetical order."""
    from wsgibench.cli.main import cli

    root = click.Context(cli, info_name="wsgibench")
    names = cli.list_commands(root)
    lines = [INTRO, "Commands: " + ", ".join(f"[`{n}`](#wsgibench-{n})" for n in names) + ".", ""]
    for name in names:
        command = cli.get_command(root, name)
        if command is not None and not command.hidden:
            lines += command_markdown(name, command, root)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    click.echo(reference_markdown(), nl=False)
