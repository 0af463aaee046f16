"""Run by run/appcheck.py in a server's Python (`python -I`, the standard library only): import one's
app (and its ASGI side), print each callable's kind and how long the app took to be ready, its
import and, for one's own app's ASGI side, its lifespan start-up (a model loaded there), as a
server would run it. A start-up that fails, is not offered or does not finish in time counts nothing: servers meet
it themselves."""

import asyncio
import importlib
import inspect
import json
import sys
import time
from typing import Any

LIFESPAN_LIMIT_S = 60.0


def is_asgi(o: Any) -> bool:
    """A coroutine function, or an object whose class's __call__ is one."""
    if inspect.iscoroutinefunction(o):
        return True
    call = None if inspect.isclass(o) else getattr(type(o), "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def takes_nothing(o: Any) -> bool:
    """A callable that takes no arguments (an app factory named without its call)."""
    try:
        sig = inspect.signature(o)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind(1, 2)
        return False
    except TypeError:
        pass
    try:
        sig.bind()
        return True
    except TypeError:
        return False


async def _lifespan(app: Any) -> float | None:
    """Seconds the app's lifespan start-up took (None: failed, not offered, or over the limit);
    its shutdown is sent after, as a server stopping would."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    said: dict[str, Any] = {}
    ready = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        said[message["type"]] = message
        if message["type"].startswith("lifespan.startup."):
            ready.set()

    scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
    inbox.put_nowait({"type": "lifespan.startup"})
    started = time.perf_counter()
    task = asyncio.ensure_future(app(scope, inbox.get, send))
    waiter = asyncio.ensure_future(ready.wait())
    await asyncio.wait({task, waiter}, timeout=LIFESPAN_LIMIT_S, return_when="FIRST_COMPLETED")
    took = time.perf_counter() - started
    waiter.cancel()
    if "lifespan.startup.complete" not in said:
        task.cancel()
        return None
    inbox.put_nowait({"type": "lifespan.shutdown"})
    try:
        await asyncio.wait_for(task, 10.0)
    except BaseException:  # noqa: BLE001 - its shutdown is the app's business
        pass
    return took


def lifespan_s(app: Any) -> float | None:
    try:
        return asyncio.run(_lifespan(app))
    except BaseException:  # noqa: BLE001 - an app that breaks here breaks in the server too
        return None


def main() -> None:
    started = time.perf_counter()
    folder, paths, targets, lifespan = json.loads(sys.argv[1])
    sys.path[:0] = [folder, *paths]
    kinds: list[bool] = []
    apps: list[Any] = []
    try:
        for module, name in targets:
            fname, call, args = name.partition("(")
            obj = getattr(importlib.import_module(module), fname, None)
            if obj is None or not callable(obj):
                raise SystemExit(f"{module} has no callable {fname!r}")
            if call:  # a factory: the app is what it returns (literal arguments, checked before)
                obj = eval("_factory(" + args, {"__builtins__": {}}, {"_factory": obj})
                if not callable(obj):
                    raise SystemExit(f"{module}:{name} returned {type(obj).__name__}, not an app")
            elif takes_nothing(obj):
                raise SystemExit(
                    f"{module}:{name} takes no arguments: an app factory? "
                    f"name its call, {module}:{name}()"
                )
            kinds.append(is_asgi(obj))
            apps.append(obj)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - said in one line, as the run stops
        raise SystemExit(f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
    took = time.perf_counter() - started
    asgi = [a for a, kind in zip(apps, kinds, strict=True) if kind and lifespan]
    started_up = [s for s in map(lifespan_s, asgi) if s is not None]
    took += max(started_up, default=0.0)
    print(json.dumps([kinds, took, bool(started_up)]))


if __name__ == "__main__":
    main()
