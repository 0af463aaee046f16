"""Before the first cell: each request kind of each load sent once to the load's first server,
started as a cell starts it, and its reply judged by the engine against the kind's `expect`; a
wrong reply stops the run before any load (exit 2), quoting what was wrong and the reply's first
bytes. A load whose kinds another load already checked on the same app is not checked again."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace

from wsgibench.baseline import BASELINE
from wsgibench.errors import EngineError, StartupError, UsageError
from wsgibench.machine.process import RunningServer
from wsgibench.results.engine_plan import EnginePlan, LoadModel
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.wrong_replies import escaped
from wsgibench.run import tls
from wsgibench.run.cell import CellContext, Prepared, ca_pem, prepare
from wsgibench.run.serve import start
from wsgibench.servers import get
from wsgibench.study.loads import Load, RequestKind
from wsgibench.study.plan import CellPlan

# Errors that are a reply judged wrong; others (a timeout, a reset) are said, not stopped on.
WRONG = ("bad_status", "bad_body", "protocol_error")
BODY_SHOWN = 200  # bytes of a wrong reply's body the message quotes


class WrongReply(UsageError):
    """A request kind's reply, sent once before the load, was not what its `expect` says."""


def checked_loads(ctx: CellContext) -> list[Load]:
    """The loads whose replies are checked: not the WebSocket ones (their messages are checked by
    the engine as they echo), one per app and request mix."""
    seen: set[tuple[str, str, str, bool]] = set()
    out = []
    for load in ctx.study.loads:
        key = (ctx.app(load).name, repr(ctx.study.requests_of(load)), load.protocol, load.tls)
        if load.websocket or key in seen:
            continue
        seen.add(key)
        out.append(load)
    return out


def check_replies(ctx: CellContext, say: Callable[[str], None] = lambda _m: None) -> None:
    """Each kind of each checked load, once, on the load's first server that takes it; raises
    `WrongReply` (exit 2) on the first wrong reply."""
    try:
        for load in checked_loads(ctx):
            _check_load(load, ctx, say)
    finally:
        ctx.databases.stop()  # the cells start their load's database afresh


def _candidates(load: Load, ctx: CellContext) -> list[str]:
    """The load's servers in the study's order, those that run the app first (not the nginx
    ceiling, nor a fault-injection server, which misbehaves on purpose)."""
    servers = list(ctx.study.servers_of(load))
    return [s for s in servers if s != BASELINE and not get(s).hidden]


def _check_load(load: Load, ctx: CellContext, say: Callable[[str], None]) -> None:
    level = min(load.levels) if load.levels else (load.capacity.start_rate if load.capacity else 1)
    for position, server in enumerate(_candidates(load, ctx)):
        ready = prepare(CellPlan(position, server, load, level), ctx)
        if not isinstance(ready, Prepared):
            continue
        try:
            running, workdir = start(ready.recipe, ready.options)
        except StartupError:
            continue  # its cells will say why; the next server may start
        try:
            say(f"{load.name}: each request kind once on {server}, judged by its expect")
            for kind in ctx.study.requests_of(load):
                _judge(kind, load, server, ctx.engine.run(_plan(load, kind, ready, running)))
        except EngineError as exc:
            say(f"{load.name}: the replies were not checked: {exc}")
        finally:
            running.stop()
            tls.forget(running.host, running.port)
            shutil.rmtree(workdir, ignore_errors=True)
        return
    say(f"{load.name}: no server of the load started: its replies are not checked before it")


def _plan(load: Load, kind: RequestKind, ready: Prepared, server: RunningServer) -> EnginePlan:
    """One request of `kind` alone, on one connection, as the load would send it."""
    plan = load.plan(
        level=1,
        port=server.port,
        requests=[replace(kind, weight=1.0)],
        cpus=ready.placement.engine_cpus,
        seed=0,
        host=server.host,
        tls_ca_pem=ca_pem(server) if load.tls else None,
    )
    return replace(plan, model=LoadModel(kind="count", level=1, requests=1), threads=1)


def _judge(kind: RequestKind, load: Load, server: str, result: EngineResult) -> None:
    """Raise WrongReply when the reply was wrong, quoting it."""
    errors = {k: n for k, n in result.totals.errors.items() if n}
    if not errors.keys() & set(WRONG):
        return
    where = (
        f"load {load.name}, request kind {kind.name} ({kind.method} {kind.path}) on {server}, "
        "sent once before the load"
    )
    quoted = result.wrong_replies
    if not quoted:
        raise WrongReply(f"{where}: {', '.join(errors)} (the engine quoted no reply)")
    w = quoted[0]
    body = ""
    if w.body is not None:
        cut = "…" if len(w.body) > BODY_SHOWN or w.body_cut else ""
        body = f'; its body: "{escaped(w.body[:BODY_SHOWN])}"{cut}'
    raise WrongReply(
        f"{where}: {escaped(w.reason)}{body}; the study's expect for kind {kind.name}, or the "
        "app, is wrong"
    )
