"""The `websocket` object of an engine result (WebSocket loads only): the upgrades that opened a
WebSocket, why the others failed, the server's statuses for those it refused, and a broadcast
load's fan-out (`BroadcastResult`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results import json_fields as jf


@dataclass(frozen=True)
class BroadcastResult:
    """One publisher, the subscribers open when publishing began, and every message due at each:
    due = delivered + corrupt + lost; duplicates were received again or out of order."""

    subscribers: int = 0
    subscribers_open: int = 0
    subscribers_cut: int = 0  # open ones the server closed before the end
    publisher_open: bool = False
    published: int = 0
    due: int = 0
    delivered: int = 0
    lost: int = 0
    corrupt: int = 0
    duplicates: int = 0

    @classmethod
    def read(cls, value: Any) -> BroadcastResult | None:
        if not isinstance(value, Mapping):
            return None
        return cls(
            **{f: int(value.get(f) or 0) for f in _BROADCAST_COUNTS},
            publisher_open=bool(value.get("publisher_open")),
        )

    def summary(self) -> str:
        """One line for a cell's notes."""
        if not self.publisher_open:
            return (
                f"broadcast: the publisher did not open ({self.subscribers_open} subscribers open)"
            )
        return (
            f"broadcast: {self.subscribers_open:,} of {self.subscribers:,} subscribers open, "
            f"{self.published:,} published, {self.due:,} due: {self.delivered:,} delivered, "
            f"{self.lost:,} lost, {self.corrupt:,} corrupt, {self.duplicates:,} duplicated"
            + (f", {self.subscribers_cut:,} subscribers cut" if self.subscribers_cut else "")
        )


_BROADCAST_COUNTS = (
    "subscribers",
    "subscribers_open",
    "subscribers_cut",
    "published",
    "due",
    "delivered",
    "lost",
    "corrupt",
    "duplicates",
)


@dataclass(frozen=True)
class WebSocketResult:
    handshakes_ok: int = 0
    # Failed upgrades by reason (status, headers, accept, unoffered, garbled, closed, timeout).
    handshake_failures: dict[str, int] = field(default_factory=dict)
    handshake_statuses: dict[str, int] = field(default_factory=dict)  # reason "status", by code
    duplicates: int = 0
    broadcast: BroadcastResult | None = None

    @classmethod
    def read(cls, value: Any) -> WebSocketResult | None:
        """The result's `websocket` object, None when it has none."""
        return cls.from_dict(value) if isinstance(value, Mapping) else None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WebSocketResult:
        return cls(
            int(d.get("handshakes_ok") or 0),
            jf.counts(d.get("handshake_failures")),
            jf.counts(d.get("handshake_statuses")),
            int(d.get("duplicates") or 0),
            BroadcastResult.read(d.get("broadcast")),
        )

    def refusal(self) -> str | None:
        """Why no upgrade opened a WebSocket ("HTTP 403 x30; accept x10"), or None when one did
        or none failed."""
        if self.handshakes_ok > 0 or not self.handshake_failures:
            return None
        parts = []
        for why, n in sorted(self.handshake_failures.items()):
            if why == "status" and self.handshake_statuses:
                parts += [f"HTTP {code} x{k}" for code, k in self.handshake_statuses.items()]
            else:
                parts.append(f"{why} x{n}")
        return "; ".join(parts)

    @property
    def failed(self) -> int:
        return sum(self.handshake_failures.values())
