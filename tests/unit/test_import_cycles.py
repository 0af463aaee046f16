"""No two modules of the package import each other, however indirectly: every import counts,
those under TYPE_CHECKING and those inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "wsgibench"
# The one cycle this test found when it was written, an import inside judge() that breaks it at
# run time: the seed rules and the seed verdicts still share their types. Not to be added to.
KNOWN = {("wsgibench.results.seed_verdicts", "wsgibench.results.seed_rules")}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    found.add(inner if inner in modules else node.module)
        graph[name] = {m for m in found if m in modules and m != name and (name, m) not in KNOWN}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle, as the modules along it, or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_import_cycle():
    assert _cycle(_graph()) == []


def test_the_cycle_check_sees_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []
