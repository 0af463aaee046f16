"""The fault catalogue: small stdlib servers that each misbehave in one way, as `fault-<kind>` recipes.

Hidden recipes: kept out of `wsgibench servers`, `*` and the `all` study, named like any server
(`servers.get("fault-…")`, `servers = ["fault-crash"]`); `wsgibench servers --faults` lists them.
They run with wsgibench's own interpreter (no venv). FAULTS says what wsgibench records for each;
docs/robustness.md ("The fault catalogue") shows it as a table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from wsgibench.servers.recipe import Command, Flavour, LaunchContext, ServerRecipe

SCRIPT = Path(__file__).resolve().parent / "serve_fault.py"

# kind -> (what it does, extra arguments, what wsgibench records)
FAULTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "crash": (
        "answers 50 requests, then exits with code 3",
        ("--after", "50"),
        "disqualified: crashed during repeat N: server process exited with code 3",
    ),
    "hang": (
        "accepts connections, never answers",
        ("--after", "0"),
        "disqualified at start-up: no exact b'Pong!' reply within the start timeout",
    ),
    "hang-later": (
        "answers 20 requests, then accepts and never answers",
        ("--after", "20"),
        "disqualified: stopped answering (0 valid replies) or error rate over the "
        "threshold (timeout); every wait bounded by the load's timeout_s",
    ),
    "slow": (
        "waits 0.3 s before every reply",
        ("--delay", "0.3"),
        "measured, with the latency it has (p50 ≥ 300 ms); disqualified for timeouts when "
        "the load's timeout_s is shorter",
    ),
    "error500": (
        "answers 500 while more than one connection is open",
        (),
        "disqualified: error rate > threshold (bad_status …)",
    ),
    "garbage": (
        "answers 20 requests, then sends bytes that are not HTTP",
        ("--after", "20"),
        "disqualified: error rate > threshold (protocol_error …)",
    ),
    "wrongbody": (
        "every 10th response says Pang! instead of Pong!",
        ("--every", "10"),
        "disqualified: error rate ~10 % > threshold (bad_body …)",
    ),
    "reset": (
        "answers 20 requests, then resets every connection (RST)",
        ("--after", "20"),
        "disqualified: error rate > threshold (reset / closed_before_response …)",
    ),
    "closeka": (
        "after 20 requests closes keep-alive connections at random (p = 0.3) without "
        "`Connection: close`",
        ("--after", "20", "--probability", "0.3"),
        "measured, no errors: the requests caught by a close are re-sent once on a new "
        "connection (RFC 9112 §9.3.1); diagnosis unannounced-close with the count",
    ),
    "leak": (
        "keeps 4 MB per request",
        ("--mb", "4"),
        "disqualified: killed by the memory limit (OOM kill noted); peak RSS stored",
    ),
    "refuse": (
        "exits with code 1 at start-up",
        (),
        "disqualified at start-up: server did not start: … exited with code 1: <its log>",
    ),
    "port": (
        "finds its port taken by another server and exits",
        (),
        "disqualified at start-up after 3 fresh ports: … Address already in use",
    ),
    "counted": (
        "a good server that takes 2 ms per reply, counts its replies by client address and, at "
        "SIGTERM, writes them to $WSGIBENCH_REPLY_COUNTS/replies-PID.json (the load-host "
        "tests' ground truth)",
        ("--delay", "0.002"),
        "measured, no errors; the replies it counted equal the engine's ok count",
    ),
    "sigterm": (
        "ignores SIGTERM (otherwise a good server)",
        (),
        "measured; at stop killed with SIGKILL after the grace period, noted on the cell",
    ),
    "fixed-service": (
        "one thread serves the requests one at a time, 5 ms each (a FIFO queue with one "
        "server): its capacity is 200 requests/s (keep-alive and pipelining work)",
        ("--service-ms", "5"),
        "measured, no errors: 200 requests/s at most; a capacity load finds 200 requests/s "
        "(within its resolution) when the budget is several service times",
    ),
    "busy-threads": (
        "a good server beside 4 threads named busy that hash forever (hashlib releases the "
        "GIL): its threading shape is known, it uses min(4, CPUs allowed) cores",
        ("--busy", "4"),
        "measured; cores used ≈ the CPUs it may use (up to 4), ≤ 1.0 pinned to one CPU or "
        "under a 1-core quota; its threads counted in the group 'runtime busy'",
    ),
    "timeout-some": (
        "a good server that never answers every 30th request (the connection kept open): a "
        "known share of requests times out; at SIGTERM it writes how many it held to "
        "$WSGIBENCH_REPLY_COUNTS/held-PID.json",
        ("--every", "30"),
        "measured or disqualified by its timeouts (3.3 % of the requests); the p99 of every "
        "request sent is at least the load's timeout_s, shown as a bound",
    ),
    **{
        f"worker-{death}": (
            f"a pre-fork master with 2 workers, each of which {words} after 300 requests of its "
            "own; the master forks a replacement, and at SIGTERM writes how many died to "
            "$WSGIBENCH_REPLY_COUNTS/deaths-PID.json",
            ("--death", death, "--after", "300"),
            f"worker-deaths: every death counted and named ({named}), the requests lost with "
            "them counted as errors; never 'closes after N requests'",
        )
        for death, words, named in (
            ("exit", "exits with status 1", "exit status 1"),
            ("signal", "kills itself with SIGSEGV", "killed by SIGSEGV"),
            ("oom", "allocates until the memory limit's OOM killer kills it", "OOM kill"),
            (
                "stuck",
                "stops (SIGSTOP): the master's 0.5 s worker timeout kills it",
                "killed by the server's own worker timeout",
            ),
        )
    },
}

# Kinds run by another kind of the script with arguments of their own.
_SCRIPT_KIND = {"hang-later": "hang"}
# Kinds run by the pre-fork script (a master and workers), with its own arguments.
PREFORK = Path(__file__).resolve().parent / "serve_prefork.py"


def _launcher(kind: str, extra: tuple[str, ...]) -> Callable[[LaunchContext], list[Command]]:
    base = _SCRIPT_KIND.get(kind, kind)

    def launch(ctx: LaunchContext) -> list[Command]:
        assert ctx.python is not None
        where = ["--host", ctx.host, "--port", str(ctx.port), "--backlog", str(ctx.backlog)]
        if kind.startswith("worker-"):  # a master and its workers: the pre-fork script
            return [
                Command(
                    [str(ctx.python), str(PREFORK), *where, "--heartbeats", str(ctx.workdir)]
                    + list(extra)
                )
            ]
        return [Command([str(ctx.python), str(SCRIPT), "--kind", base, *where, *extra])]

    return launch


RECIPES = [
    ServerRecipe(
        name=f"fault-{kind}",
        project="wsgibench-fault",
        flavour=Flavour.PROCESS,
        summary=f"fault injection: {what}",
        launch=_launcher(kind, extra),
        multi_worker=False,
        stdlib_python=True,
        start_timeout_s=5.0,
        hidden=True,
    )
    for kind, (what, extra, _) in FAULTS.items()
]
