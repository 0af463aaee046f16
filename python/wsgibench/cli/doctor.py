"""`wsgibench doctor`: the system settings that distort results, checked, with --fix."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from wsgibench.cli.kit import console, err, friendly


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Apply the sysctls that can be applied (root only).")
@friendly
def doctor_command(fix: bool) -> None:
    """Check the system settings that distort results, with recommended values and consequences."""
    from wsgibench.machine.doctor import apply_fixes, findings, is_root

    found = findings(steady=True)
    table = Table(title="wsgibench doctor")
    for col in ("check", "value", "recommended", "", "consequence when not"):
        table.add_column(col, overflow="fold")
    for f in found:
        table.add_row(
            f.name, f.value, f.recommended, "[green]ok[/]" if f.ok else "[red]!![/]", f.consequence
        )
    console.print(table)
    if fix:
        if not is_root():
            err.print("error: --fix needs root")
            sys.exit(2)
        for line in apply_fixes(found) or ["nothing to change"]:
            console.print(f"changed {line}" if "->" in line else line)
