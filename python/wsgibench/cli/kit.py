"""What every command shares: the consoles, and errors that end in one line and an exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from wsgibench.errors import EXIT_ENVIRONMENT, EXIT_INTERRUPTED, WsgibenchError

P = ParamSpec("P")
R = TypeVar("R")
# Piped output (CI logs, files) gets wide tables instead of columns cut to 80 characters.
console = Console(width=None if sys.stdout.isatty() else 240)
err = Console(stderr=True)


def friendly(fn: Callable[P, R]) -> Callable[P, R]:
    """Bad input and broken environments end with one line and an exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except WsgibenchError as exc:
            err.print(
                f"[bold red]error:[/] {escape(str(exc))}",
                highlight=False,
                markup=True,
                soft_wrap=True,
            )  # escaped: a message may quote "[[load]]"
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except OSError as exc:
            if exc.filename is None:  # not about a path: a bug of ours, said as one
                _internal(exc)
            # A path the command was given, or one it needs, that the system refuses: the
            # machine's, said in one line (a folder that does not exist, no permission, full).
            where = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
            err.print(
                f"[bold red]error:[/] {escape(exc.strerror or str(exc))}: {escape(where)}",
                highlight=False,
            )
            sys.exit(EXIT_ENVIRONMENT)
        except Exception as exc:  # a bug of ours: one line here, the traceback in a file
            _internal(exc)

    return wrapper


def _internal(exc: BaseException) -> NoReturn:
    log = _write_traceback()
    err.print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
        f"(traceback in {log}; please report it)",
        highlight=False,
    )
    sys.exit(1)


def stored_results(fn: Callable[..., R]) -> Callable[..., R]:
    """The results store as RESULTS, or as `--results PATH`, the way `run` and `tune` take it
    (a newcomer's `show --results x.sqlite` after `run --results x.sqlite`)."""

    @functools.wraps(fn)
    def wrapper(*args: object, results: Path | None, results_opt: Path | None, **kw: object) -> R:
        if results and results_opt and results != results_opt:
            raise click.UsageError(f"two stores given: {results} and --results {results_opt}")
        return fn(*args, results=results or results_opt, **kw)

    with_option = click.option(
        "--results",
        "results_opt",
        type=click.Path(path_type=Path),
        help="The results store, as RESULTS (either way).",
    )(wrapper)
    return click.argument("results", required=False, type=click.Path(path_type=Path))(with_option)


def _write_traceback() -> Path:
    import tempfile
    import traceback

    from wsgibench.paths import home

    for folder in (home(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / "last-error.log"
            log.write_text(traceback.format_exc())
            return log
        except OSError:
            continue
    return Path("(nowhere)")
