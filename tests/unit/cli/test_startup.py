"""The CLI starts without the libraries only some commands need: altair (charts, half a second a
start) and trustme/cryptography (TLS certificates) are imported by the code that uses them, so a
`wsgibench` call that writes no report and starts no TLS server does not load them, nor does the
summary a run prints. Read from the
source: the modules that importing wsgibench.cli.main runs, through their module-level imports."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "python" / "wsgibench"
LATE = {"altair", "trustme", "cryptography"}


def _file(module: str) -> Path | None:
    rel = Path(*module.split(".")[1:])
    for path in (PACKAGE / rel / "__init__.py", (PACKAGE / rel).with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _eager(body: list[ast.stmt]) -> list[str]:
    """Modules a module's top level imports (not in functions, nor under `if TYPE_CHECKING`)."""
    out: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            out += _eager(node.body) + _eager(node.orelse)
        elif isinstance(node, ast.Try):
            out += _eager(node.body)
    return out


def loaded_at_start(start: str) -> set[str]:
    """Every module (and each package above it) that importing `start` runs."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            module = ".".join(parts[:i])
            if module in seen:
                continue
            seen.add(module)
            path = _file(module) if parts[0] == "wsgibench" else None
            if path is not None:
                todo += _eager(ast.parse(path.read_text()).body)
    return seen


def test_the_cli_imports_neither_charts_nor_tls_libraries():
    loaded = loaded_at_start("wsgibench.cli.main")
    assert "wsgibench.cli.run" in loaded and "wsgibench.run.tls" in loaded  # the walk reaches them
    assert not {m.split(".")[0] for m in loaded} & LATE, sorted(
        m for m in loaded if m.split(".")[0] in LATE
    )
    # and the charts are still there for what writes a report
    assert "altair" in {m.split(".")[0] for m in loaded_at_start("wsgibench.report.write")}


def test_the_summary_every_run_prints_imports_no_charts():
    # `run` ends with `show`'s tables, which format figures with report.format and report.capacity:
    # importing those must not run the report package's writer.
    loaded = loaded_at_start("wsgibench.cli.show")
    assert "wsgibench.report.capacity" in loaded  # the walk reaches the report package
    assert "altair" not in {m.split(".")[0] for m in loaded}, sorted(
        m for m in loaded if m.startswith(("altair", "wsgibench.report"))
    )
