"""The shape docs/architecture.md promises: layers import one way, no two modules import each other,
small modules and functions, one folder per server, every folder registered, every layer
documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from wsgibench.servers import catalog, folders

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "wsgibench"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

# Layers, top to bottom: a module may import from its own layer and the layers below it, never
# from one above. `report` is a side branch: it renders what `results` holds and nothing else.
LAYERS = (
    ("cli", {"cli", "__main__"}),
    ("run", {"run"}),
    ("report", {"report"}),
    ("study", {"study"}),
    ("traffic", {"traffic"}),
    ("results", {"results", "databases"}),
    ("servers", {"servers"}),
    ("machine", {"machine"}),
    ("base", {"errors", "paths", "baseline", "apps", ""}),
)
REPORT_MAY_IMPORT = {"report", "results", "base"}
# No two modules may import each other, directly or through others. Every import statement counts:
# at the top, under `if TYPE_CHECKING:`, or inside a function. A late or type-only import hides a
# cycle from Python's import machinery, not from a reader: the two modules still need each other,
# so neither can be read, tested or moved alone. An import names the deepest module it reaches
# (`from wsgibench.servers import recipe` is wsgibench.servers.recipe); the parent packages Python
# initialises on the way are not edges (a package's __init__ re-exporting its modules would be a
# cycle with each of them), nor is importlib (the catalog importing each server folder).
# Code that runs inside a server's own venv: it may import nothing of wsgibench.
IN_SERVER_VENV = re.compile(r"(servers/[a-z_]+/launch[a-z_]*\.py|servers/_launchkit/.*|apps/.*)$")


def _layer_of(package: str) -> str:
    for name, packages in LAYERS:
        if package in packages:
            return name
    raise AssertionError(f"wsgibench.{package} belongs to no layer: add it to LAYERS and the doc")


def _rank(layer: str) -> int:
    return [name for name, _ in LAYERS].index(layer)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _top(path: Path) -> str:
    """The sub-package a module belongs to ("" for wsgibench/__init__.py and friends)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem.replace("__init__", "")


def _is_module(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").exists()


def _imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; use wsgibench.<layer>.<module>"
            names = [node.module or ""]
            if node.module == "wsgibench":  # `from wsgibench import databases, __version__`
                names = [
                    f"wsgibench.{a.name}" if _is_module(a.name) else "wsgibench" for a in node.names
                ]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            if name == "wsgibench" or name.startswith("wsgibench."):
                found.add(name.split(".")[1] if "." in name else "")
    return found


def test_every_package_is_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    for package in packages:
        _layer_of(package)


def test_imports_run_one_way():
    wrong = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        imported = _imported_packages(path)
        if IN_SERVER_VENV.search(rel):
            wrong += [f"{rel} (runs in a server venv) imports wsgibench.{p}" for p in imported]
            continue
        layer = _layer_of(_top(path))
        for package in imported:
            target = _layer_of(package)
            upward = _rank(target) < _rank(layer)
            if upward or (layer == "report" and target not in REPORT_MAY_IMPORT):
                wrong.append(f"{rel} ({layer}) imports wsgibench.{package} ({target})")
    assert wrong == []


def test_the_import_check_sees_an_upward_import(tmp_path):
    """The check above can fail: a machine module importing the run layer is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("from wsgibench.run.cell import run_cell\nimport wsgibench.cli\n")
    assert _imported_packages(bad) == {"run", "cli"}
    assert _rank(_layer_of("run")) < _rank(_layer_of("machine"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _deepest(name: str, modules: set[str]) -> str | None:
    """The module an import reaches: `wsgibench.a.b.X` is wsgibench.a.b when X is no module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """Every wsgibench module `path` imports, wherever the import statement stands."""
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {
                _deepest(a.name, modules) for a in node.names if a.name.startswith("wsgibench")
            }
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wsgibench"):
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                found.add(whole if whole in modules else _deepest(node.module or "", modules))
    return {m for m in found if m}


def _import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports."""
    paths = {_module_name(p): p for p in _modules()}
    return {name: _imported_modules(path, set(paths)) - {name} for name, path in paths.items()}


def _cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan): each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    cycles = _cycles(_import_graph())
    assert sorted(sorted(c) for c in cycles) == []


def test_the_cycle_check_sees_late_and_type_only_imports(tmp_path):
    """The check above can fail: a function-level and a TYPE_CHECKING import are edges."""
    modules = {"wsgibench.a", "wsgibench.b", "wsgibench.c", "wsgibench.c.d"}
    late = tmp_path / "late.py"
    late.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from wsgibench.a import Thing\n"
        "def f():\n    from wsgibench.c import d, e\n    import wsgibench.b.x\n"
    )
    assert _imported_modules(late, modules) == {
        "wsgibench.a",
        "wsgibench.b",
        "wsgibench.c",
        "wsgibench.c.d",
    }
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(graph) == {frozenset({"a", "b", "c"})}


@pytest.mark.parametrize("root", [PACKAGE, ROOT / "tests"], ids=["package", "tests"])
def test_small_modules_and_functions(root: Path):
    big = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            big.append(f"{path.relative_to(ROOT)}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    big.append(
                        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines"
                    )
    assert big == []


def test_no_rust_file_over_the_limit():
    big = [
        f"{p.relative_to(ROOT)}: {n}"
        for p in sorted((ROOT / "engine").rglob("*.rs"))
        if "target" not in p.parts and (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert big == []


def test_every_module_says_what_it_is_for():
    silent = [
        p.relative_to(PACKAGE).as_posix()
        for p in _modules()
        if p.read_text().strip() and not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert silent == []


def test_every_server_folder_is_registered_and_every_server_has_a_folder():
    recipes = catalog().values()
    homes = {r.module.removeprefix("wsgibench.servers.") for r in recipes}
    assert homes == set(folders())  # each folder contributes at least one recipe
    for folder in folders():
        path = PACKAGE / "servers" / folder
        assert (path / "__init__.py").exists()
        # Every launcher script in the folder is started by the folder's own recipe.
        recipe_source = (path / "__init__.py").read_text()
        for launcher in path.glob("launch*.py"):
            named = launcher.name in recipe_source
            default = launcher.name == "launch.py" and "here(__file__)" in recipe_source
            assert named or default, f"servers/{folder}/{launcher.name} is started by no recipe"
    stray = [
        p.name
        for p in (PACKAGE / "servers").glob("*.py")
        if p.name not in ("__init__.py", "recipe.py", "versions.py", "parity.py", "fronts.py")
    ]
    assert stray == [], (
        "server code lives in servers/<name>/, shared code in servers/recipe.py (a server at "
        "a release in servers/versions.py, a server behind nginx in servers/fronts.py, the "
        "recipes' parity audit in servers/parity.py)"
    )


def test_architecture_doc_names_every_layer_and_server_folder():
    doc = ARCHITECTURE.read_text()
    for _, packages in LAYERS:
        for package in packages - {""}:
            if package != "__main__":
                assert f"`{package}/`" in doc or f"`{package}.py`" in doc, package
    for folder in folders():
        assert f"`{folder}/`" in doc, f"docs/architecture.md does not list servers/{folder}/"
