"""An app factory named as gunicorn takes it (`module:create_app()`, literal arguments only): read
from the spec, and the one-line module a server imports to get the app it returns."""

from __future__ import annotations

import ast
from pathlib import Path

from wsgibench.errors import UsageError

# The module written beside a copy of the app's folder when its callable is a factory's call.
SHIM_MODULE = "wsgibench_factory"


def is_call(callable_: str) -> bool:
    """Whether the app's callable is a factory's call (`create_app()`) rather than a name."""
    return "(" in callable_


def check_call(spec: str, attr: str) -> None:
    """A UsageError unless `attr` is a call of a name with literal arguments only."""
    try:
        call = ast.parse(attr, mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise UsageError(f"app {spec!r}: {attr!r} is neither a callable's name nor a call of one")
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        try:
            ast.literal_eval(arg)
        except ValueError:
            raise UsageError(
                f"app {spec!r}: the factory's arguments must be literals "
                f"(strings, numbers, True/False/None), not {ast.unparse(arg)!r}"
            ) from None
    if any(k.arg is None for k in call.keywords):
        raise UsageError(f"app {spec!r}: the factory's arguments must be literals, not **")


def shim_code(module: str, call: str) -> list[str]:
    """The module's two lines that make the app as `gunicorn 'module:call'` would."""
    name = call.partition("(")[0]
    return [f"from {module} import {name} as _factory", f"app = _factory{call[len(name) :]}"]


def shim_source(module: str, call: str) -> str:
    """The whole module, saying who wrote it."""
    lines = [f'"""Written by wsgibench: the app that {module}:{call} returns."""']
    return "\n".join([*lines, *shim_code(module, call)]) + "\n"


def write_shim(folder: Path, module: str, call: str) -> str:
    """Write the shim into the app's (copied) folder; the module name a server imports."""
    (folder / f"{SHIM_MODULE}.py").write_text(shim_source(module, call))
    return SHIM_MODULE
