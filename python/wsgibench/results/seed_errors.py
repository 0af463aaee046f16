"""Errors as the seeds' own tools counted them (wrk, httperf, ab), computed from a stored repeat.

wsgibench classes every failure honestly and survives what is not one (docs/measurement.md): it
re-sends an idempotent request once after a keep-alive connection was closed without a word, and
measures a server that never answers a second request on a connection with a new connection per
request. The seeds' tools did neither, so a server could look broken there and clean here (seed
003: with uWSGI `--http` "all the responses of wrk were detected as read errors"; seed 004:
uWSGI at 34 % errors). `tool_errors` reads the same run through each tool's own rules, from what
the engine (`EngineResult`) and the behaviour checks (the cell's capabilities) recorded. It is
the same requests seen by the tool's rules, not a simulation of the tool's own load: the calls
httperf would have dropped after a failure, or an ab run aborted, are not modelled.

Counting: `errors` is how many requests the tool would have counted as errors, each once;
`requests` how many it would have seen end without one; `rate` = errors / (requests + errors),
the share of the tool's requests that failed (as seed 004, line 83, set each server's errors
against its total number of requests).
A connection the server closed under a request the tool had sent (read or connreset below) is
one more request than the engine's: the engine re-sent that request, the tool lost it. So wrk's
printed "N requests in ..." is `requests` plus its non-2xx/3xx replies.

Server closes, from the totals and the capabilities (`run/checks.py` stores them per cell):

- a keep-alive run: `unannounced_closes` (the server closed under a request the engine had sent),
  and in the closed and count models, whose next request always follows a reply at once, also
  `idle_close` (the FIN came with the reply, before the engine sent the next one). In the open
  models an idle close may be an idle timeout or follow a connection's last call, which the
  totals cannot tell apart: not counted. Replies that announced their close (`Connection:
  close`, HTTP/1.0 without keep-alive; `connection_close_replies`) are closes wrk expects.
- a run without keep-alive (the no-keep-alive fallback, or a study's own choice) of a server
  whose keep-alive check failed: a client that keeps its connections (wrk always does; httperf
  with several calls) would have sent another request after each reply that was not its
  connection's last (every reply in the closed and count models; (calls - 1) of `calls` in the
  rate models, of `requests` in sessions). How that request ended is read from the check's
  `detail`: the connection closed (ConnectionError and kin), or no reply in time (TimeoutError);
  any other failure (a wrong reply) is not counted. Whether the close was announced is read from
  `wire_head`, the status line and header names of a pong reply to a keep-alive request: an
  HTTP/1.0 reply without a Connection header, or a reply with one, announced it. The header's
  value is not stored: a server that closes its connections and names the header is taken to
  say `close`. Without a stored `wire_head` the announcement is unknown and wrk counts nothing.

The rules, per tool (error classes: `results/engine_result.py` ERROR_CLASSES):

- wrk 4.0.2 to 4.2.0 (`wrk -c N -d T URL`, keep-alive HTTP/1.1): connect = connect_refused,
  connect_timeout, connect_error, fd_limit, ports_exhausted (the engine's limits, met when
  connecting); read = reset, closed_before_response, protocol_error, and every unannounced close
  above (wrk reads EOF where it expects a reply, counts a read error and reconnects); write = 0
  (a reset met while writing is recorded as reset, under read); timeout = timeout (wrk counts a
  reply later than --timeout; one that never comes it does not count at all); non-2xx = replies
  with a status above 399 (bad_status_codes; bad_status without a recorded code counts; replies
  a kind expects with such a status count too). bad_body is no error: wrk reads no body.
- httperf (seed 000: --rate, --num-calls, --timeout): client-timo = timeout; socket-timo =
  connect_timeout; connrefused = connect_refused; connreset = reset, closed_before_response and
  every close above that cut a connection's calls short, announced or not (httperf reads no
  Connection header: EOF where a reply is due is ECONNRESET to it); fd-unavail = fd_limit;
  addrunavail = ports_exhausted; ftab-full = 0 (the engine's fd_limit holds ENFILE too); other =
  connect_error, protocol_error (httperf itself would take a reply cut short in its body, or a
  garbled status line, as a reply; the class cannot be split). In a keep-alive run of the closed
  and count models the announced closes count too. A server that never answers a second request
  gets client-timo for it. Statuses are replies, not errors.
- ab 2.3 as seeds 001 and 002 ran it (`ab -n N -c C URL`: HTTP/1.0, no -k, a new connection per
  request, so no close is an error): "Failed requests" = connect (connect_refused,
  connect_timeout, connect_error, fd_limit, ports_exhausted; ab aborts after 10), receive (reset;
  ab aborts at the first one without -r), length (closed_before_response, protocol_error,
  bad_body: a reply shorter or longer than the first; a wrong body of the same length ab would
  not see) and exceptions (0: poll errors, which the engine does not record); "Non-2xx
  responses" = replies whose status is not 2xx. ab has no per-request timeout: a request that
  timed out here is one ab would still be waiting for (its -s aborts the whole run): neither an
  error nor a request.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wsgibench.results.engine_result import EngineResult, KindResult

# Each tool and the seeds that measured with it.
TOOLS: dict[str, tuple[str, ...]] = {
    "wrk": ("003", "004"),
    "httperf": ("000",),
    "ab": ("001", "002"),
}


def seeds_text(tool: str) -> str:
    """The seeds that measured with `tool`, e.g. "seeds 003, 004" or "seed 000"."""
    seeds = TOOLS[tool]
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(seeds)


CONNECT_CLASSES = (
    "connect_refused",
    "connect_timeout",
    "connect_error",
    "fd_limit",
    "ports_exhausted",
)
# What the server does with a second request on a connection, read from the keep-alive check.
CLOSES, HANGS = "closes", "hangs"
_CLOSE_ERRORS = (
    "ConnectionError",
    "ConnectionResetError",
    "ConnectionAbortedError",
    "BrokenPipeError",
)
# Models whose next request follows a reply at once, on the same connection, until the run ends.
_BACK_TO_BACK = ("closed", "count")


@dataclass(frozen=True)
class ToolErrors:
    """One repeat as a tool would have counted it: errors, requests that ended without one, and
    the errors under the tool's own names (wrk's "connect", httperf's "connreset", ab's "length")."""

    tool: str
    errors: int
    requests: int
    by_class: dict[str, int]

    @property
    def rate(self) -> float:
        """errors / (requests + errors): the share of the requests the tool saw end that it
        counted as errors (0 when it saw none end)."""
        seen = self.requests + self.errors
        return self.errors / seen if seen else 0.0


def _errors(result: EngineResult, classes: Iterable[str]) -> int:
    return sum(result.totals.errors.get(c, 0) for c in classes)


def _code(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _expected_status(result: EngineResult, kind: KindResult) -> int | None:
    """The status the plan expects for a request kind (None when it says none)."""
    for req in result.plan.requests:
        if req.name == kind.name:
            return req.expect.status
    return None


def status_errors(result: EngineResult, failing: Callable[[int], bool]) -> int:
    """Replies whose status the tool counts as failing: bad_status replies by their recorded code
    (those without one count), and valid replies of kinds that expect such a status."""
    t = result.totals
    codes = [(_code(c), n) for c, n in t.bad_status_codes.items()]
    known = sum(n for code, n in codes if code is None or failing(code))
    unrecorded = max(0, t.errors.get("bad_status", 0) - sum(n for _, n in codes))
    expected = sum(
        k.ok for k in result.kinds if (s := _expected_status(result, k)) is not None and failing(s)
    )
    return known + unrecorded + expected


def kept_alive(result: EngineResult) -> bool:
    """Whether the run kept its connections alive (the plan as run, after any fallback)."""
    return result.plan.http.keep_alive


def second_request(capabilities: Mapping[str, Any] | None) -> str | None:
    """What the server did with a second request on a keep-alive connection in its check: CLOSES,
    HANGS, or None (it answered it, it answered wrongly, or nothing was stored)."""
    if not capabilities or capabilities.get("keep_alive", True):
        return None
    detail = str(capabilities.get("detail") or "")
    said = next((p for p in detail.split("; ") if p.startswith("keep-alive: ")), "")
    error = said.removeprefix("keep-alive: ").split(":", 1)[0]
    if error in _CLOSE_ERRORS:
        return CLOSES
    return HANGS if error == "TimeoutError" else None


def announces_close(capabilities: Mapping[str, Any] | None) -> bool | None:
    """Whether the pong reply to a keep-alive request announced that the server would close: an
    HTTP/1.0 status line without a Connection header, or a Connection header (taken to say
    close: its value is not stored). None when no reply head was stored."""
    head = str((capabilities or {}).get("wire_head") or "")
    if not head:
        return None
    status, _, names = head.partition(" | ")
    has_connection = "connection" in {n.strip().lower() for n in names.split(",")}
    return has_connection or status.startswith("HTTP/1.0")


def _calls_per_connection(result: EngineResult) -> int | None:
    """How many requests a connection of this load carries (None: until the run ends)."""
    model = result.plan.model
    if model.kind in ("rate", "conn_rate"):
        return max(1, model.calls or 1)
    if model.kind == "sessions":
        return max(1, model.requests or 1)
    return None


def followed_replies(result: EngineResult) -> int:
    """Replies that a client keeping its connection would have followed with another request on
    it: every reply in the closed and count models, (calls - 1) of every `calls` otherwise."""
    replies = result.totals.responses
    calls = _calls_per_connection(result)
    return replies if calls is None else replies * (calls - 1) // calls


def _back_to_back(result: EngineResult) -> bool:
    return result.plan.model.kind in _BACK_TO_BACK


def wrk_closes(result: EngineResult, capabilities: Mapping[str, Any] | None) -> int:
    """Unannounced server closes under a request wrk would have sent: one read error each."""
    t = result.totals
    if kept_alive(result):
        return t.unannounced_closes + (t.idle_close if _back_to_back(result) else 0)
    if second_request(capabilities) == CLOSES and announces_close(capabilities) is False:
        return followed_replies(result)
    return 0


def httperf_closes(result: EngineResult, capabilities: Mapping[str, Any] | None) -> tuple[int, int]:
    """Calls httperf would have lost to a server close (connreset) and to a server that never
    answers a second request (client-timo), announced or not."""
    t = result.totals
    if kept_alive(result):
        extra = t.idle_close + t.connection_close_replies if _back_to_back(result) else 0
        return t.unannounced_closes + extra, 0
    how = second_request(capabilities)
    if how == CLOSES:
        return followed_replies(result), 0
    if how == HANGS:
        return 0, followed_replies(result)
    return 0, 0


def _ended(result: EngineResult) -> int:
    """Every request the engine saw end, once each (a valid reply or one error)."""
    return result.totals.ok + result.totals.error_count


def _wrk(result: EngineResult, capabilities: Mapping[str, Any] | None) -> ToolErrors:
    closes = wrk_closes(result, capabilities)
    by_class = {
        "connect": _errors(result, CONNECT_CLASSES),
        "read": _errors(result, ("reset", "closed_before_response", "protocol_error")) + closes,
        "write": 0,
        "timeout": _errors(result, ("timeout",)),
        "non-2xx or 3xx": status_errors(result, lambda code: code > 399),
    }
    errors = sum(by_class.values())
    return ToolErrors("wrk", errors, max(0, _ended(result) + closes - errors), by_class)


def _httperf(result: EngineResult, capabilities: Mapping[str, Any] | None) -> ToolErrors:
    resets, timeouts = httperf_closes(result, capabilities)
    by_class = {
        "client-timo": _errors(result, ("timeout",)) + timeouts,
        "socket-timo": _errors(result, ("connect_timeout",)),
        "connrefused": _errors(result, ("connect_refused",)),
        "connreset": _errors(result, ("reset", "closed_before_response")) + resets,
        "fd-unavail": _errors(result, ("fd_limit",)),
        "addrunavail": _errors(result, ("ports_exhausted",)),
        "ftab-full": 0,
        "other": _errors(result, ("connect_error", "protocol_error")),
    }
    errors = sum(by_class.values())
    seen = _ended(result) + resets + timeouts
    return ToolErrors("httperf", errors, max(0, seen - errors), by_class)


def _ab(result: EngineResult, capabilities: Mapping[str, Any] | None) -> ToolErrors:
    by_class = {
        "connect": _errors(result, CONNECT_CLASSES),
        "receive": _errors(result, ("reset",)),
        "length": _errors(result, ("closed_before_response", "protocol_error", "bad_body")),
        "exceptions": 0,
        "non-2xx": status_errors(result, lambda code: code // 100 != 2),
    }
    errors = sum(by_class.values())
    waiting = _errors(result, ("timeout",))
    return ToolErrors("ab", errors, max(0, _ended(result) - waiting - errors), by_class)


_COUNTERS: dict[str, Callable[[EngineResult, Mapping[str, Any] | None], ToolErrors]] = {
    "wrk": _wrk,
    "httperf": _httperf,
    "ab": _ab,
}


def tool_errors(
    result: EngineResult, capabilities: Mapping[str, Any] | None, tool: str
) -> ToolErrors:
    """One repeat's errors as `tool` ("wrk", "httperf" or "ab") would have counted them, by the
    rules above; `capabilities` is the cell's stored behaviour check (None: not stored)."""
    try:
        count = _COUNTERS[tool]
    except KeyError:
        raise ValueError(f"tool is one of {', '.join(TOOLS)}, not {tool!r}") from None
    return count(result, capabilities)


def repeat_rates(
    results: Iterable[EngineResult], capabilities: Mapping[str, Any] | None, tool: str
) -> list[float]:
    """The tool's error rate of each repeat in which it would have seen any request end."""
    counted = (tool_errors(r, capabilities, tool) for r in results)
    return [t.rate for t in counted if t.requests + t.errors]


def median_rate(
    results: Iterable[EngineResult], capabilities: Mapping[str, Any] | None, tool: str
) -> float | None:
    """The median over a cell's repeats of the tool's error rate (None without one)."""
    rates = repeat_rates(results, capabilities, tool)
    return statistics.median(rates) if rates else None
