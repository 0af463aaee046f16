"""The server catalog: one folder per server project, each contributing RECIPES (hidden ones too:
the fault servers of servers/faults/, named like any entry, never listed)."""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from pathlib import Path

from wsgibench.errors import UsageError
from wsgibench.servers import fronts, versions
from wsgibench.servers.recipe import (
    Binary,
    Command,
    Flavour,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

__all__ = [
    "Binary",
    "Command",
    "Flavour",
    "LaunchContext",
    "PythonEnv",
    "ServerRecipe",
    "binary_versions",
    "catalog",
    "folders",
    "get",
    "listed",
    "resolve",
]


def folders() -> list[str]:
    """The server folders (sub-packages) of this package, sorted: each holds one server project."""
    return sorted(
        m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")
    )


@cache
def catalog() -> dict[str, ServerRecipe]:
    """All recipes by name, hidden ones included, in folder order; adding a server means adding
    one folder."""
    recipes: dict[str, ServerRecipe] = {}
    lock_of: dict[str, Path] = {}
    for folder in folders():
        module = importlib.import_module(f"{__name__}.{folder}")
        home = Path(module.__file__ or "").parent
        for recipe in module.RECIPES:
            if recipe.name in recipes:
                raise RuntimeError(f"duplicate server recipe {recipe.name!r}")
            env = recipe.env
            if env is not None and env.requirements and env.lock is None:
                # Its lock lives in the folder of the first server that uses it, named after the
                # env (cherrypy's recipe uses the venv cheroot's folder defines and locks).
                lock = lock_of.setdefault(env.name, home / f"{env.name}.lock")
                env = replace(env, lock=lock)
            recipes[recipe.name] = replace(recipe, module=module.__name__, env=env)
    return recipes


def listed(hidden: bool = False) -> dict[str, ServerRecipe]:
    """The entries `wsgibench servers` lists and `*` names; hidden=True: the hidden ones instead
    (`wsgibench servers --faults`)."""
    return {n: r for n, r in catalog().items() if r.hidden == hidden}


# `server#tag`: a second entry of the same server (its recipe, venv and settings), another name:
# what A/A calibration runs against itself (`wsgibench calibrate`).
TWIN = "#"


def get(name: str) -> ServerRecipe:
    """The recipe of a catalog name, of `name@version` (the server at that release), of
    `name+nginx` (the server behind nginx, servers/fronts.py), or of `name#tag` (the same server
    as another entry: A/A calibration)."""
    recipes = catalog()
    if name in recipes:
        return recipes[name]
    if TWIN in name:
        return _twin(*name.split(TWIN, 1))
    base, fronted = fronts.split(name)
    if f"{fronts.SUFFIX}@" in name:
        raise UsageError(f"{name!r}: a server at a release behind nginx is SERVER@VERSION+nginx")
    if fronted:
        return _behind_nginx(base)
    base, version = versions.split(name)
    if version is not None:
        return _at_version(base, version)
    raise UsageError(f"unknown server {name!r}{_hint(name, list(recipes))}")


@cache
def _twin(base: str, tag: str) -> ServerRecipe:
    if not base or not tag or TWIN in tag:
        raise UsageError(f"{base + TWIN + tag!r}: a second entry of a server is SERVER{TWIN}TAG")
    return replace(get(base), name=f"{get(base).name}{TWIN}{tag}")


@cache
def _at_version(base: str, version: str) -> ServerRecipe:
    return versions.at_version(get(base), version)


@cache
def _behind_nginx(base: str) -> ServerRecipe:
    return fronts.behind_nginx(get(base))


def _hint(name: str, names: list[str]) -> str:
    """The entries of a family (`gunicorn` -> every gunicorn-*), else the nearest name."""
    family = [n for n in names if n.startswith(f"{name}-") or n.split("-")[0] == name]
    if family:
        return f"; the {name} entries are {', '.join(family)} ('{name}-*' names them all)"
    near = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {near[0]!r}?)" if near else " (see `wsgibench servers`)"


def resolve(names: list[str]) -> list[str]:
    """Catalog names in the order given: `*` is every listed entry, a glob (`gunicorn-*`) every
    listed entry it matches, in catalog order, or, when it matches none, every hidden one it
    matches (`fault-*`); a name twice counts once; an unknown name is a UsageError."""
    out: list[str] = []
    for name in names:
        if name == "*":
            found = list(listed())
        elif any(c in name for c in "*?["):
            found = fnmatch.filter(listed(), name) or fnmatch.filter(listed(hidden=True), name)
            if not found:
                raise UsageError(f"{name!r} matches no server (see `wsgibench servers`)")
        else:
            found = [get(name).name]
        out += [n for n in found if n not in out]
    return out


def binary_versions(names: Iterable[str]) -> dict[str, str | None]:
    """The versions of the system binaries these entries need (nginx, Apache), each asked of the
    recipe that needs it, under the key the environment stores it by ("nginx_version")."""
    found: dict[str, str | None] = {}
    for name in names:
        found.update(get(name).binary_versions())
    return found
