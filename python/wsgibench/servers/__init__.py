"""The server catalog: every adapter module in this package contributes RECIPES."""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from functools import cache

from .._errors import UsageError
from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

__all__ = ["Command", "Flavour", "LaunchContext", "PythonEnv", "ServerRecipe", "catalog",
           "fault_catalog", "get"]


@cache
def catalog() -> dict[str, ServerRecipe]:
    """All recipes by name, in module order; adding a server means adding one module."""
    recipes: dict[str, ServerRecipe] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "launchers":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for recipe in module.RECIPES:
            if recipe.name in recipes:
                raise RuntimeError(f"duplicate server recipe {recipe.name!r}")
            recipes[recipe.name] = recipe
    return recipes


@cache
def fault_catalog() -> dict[str, ServerRecipe]:
    """The `fault-*` test servers (wsgibench.faults): resolvable by name, never listed in catalog()."""
    from ..faults import RECIPES

    return {r.name: r for r in RECIPES}


def get(name: str) -> ServerRecipe:
    recipes = fault_catalog() if name.startswith("fault-") else catalog()
    if name in recipes:
        return recipes[name]
    near = difflib.get_close_matches(name, recipes, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else " (see `wsgibench servers`)"
    raise UsageError(f"unknown server {name!r}{hint}")
