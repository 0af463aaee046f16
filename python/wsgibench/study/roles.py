"""A load's role in the findings, declared by the study (`role` in [[load]]), never guessed from its
other keys: what its numbers may be compared on, and the keys each role needs."""

from __future__ import annotations

from typing import Any

from wsgibench.errors import UsageError

# framework: a framework's app served by each server, ranked against that server's own ceiling;
# ceiling: each server's own ceiling for the framework loads (the same server, the same level);
# broadcast: a publisher's fixed rate to every subscriber, judged on delivery latency and loss;
# echo: a WebSocket echo, ranked by echoes per second.
ROLES = ("framework", "ceiling", "broadcast", "echo")

WORDS = (
    "What the load is for in the report's findings. None: its servers ranked by req/s. "
    "\"framework\": a framework's app (its `app`, else the study's) on each server, ranked against each server's "
    'own ceiling; "ceiling": each server\'s own ceiling for the framework loads (the same '
    'server at the same level, e.g. pong); "broadcast": one publisher\'s fixed rate to every '
    "subscriber, judged on delivery latency and loss, never ranked by its rate (model "
    'broadcast, which takes no other role); "echo": a WebSocket echo, ranked by echoes per '
    'second (protocol = "websocket").'
)
DEFAULT = '"broadcast" for model broadcast, else none'


def role_of(values: dict[str, Any], where: str) -> str | None:
    """The load's role, checked against its model and protocol: a broadcast is the broadcast
    model's only role (and its default), an echo is a WebSocket load's."""
    model, protocol = values.get("model"), values.get("protocol", "http")
    role = values.get("role")
    if model == "broadcast":
        if role not in (None, "broadcast"):
            raise UsageError(
                f"{where}: model broadcast is judged on delivery latency and loss: role = "
                f'"broadcast" (or none), not "{role}"'
            )
        return "broadcast"
    if role == "broadcast":
        raise UsageError(f'{where}: role = "broadcast" is for model broadcast only')
    if role == "echo" and protocol != "websocket":
        raise UsageError(f'{where}: role = "echo" is for protocol = "websocket" only')
    return str(role) if role is not None else None
