"""The `websocket` object of an engine result (WebSocket loads only): the upgrades that opened a
WebSocket, why the others failed, and the server's statuses for those it refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results import json_fields as jf


@dataclass(frozen=True)
class WebSocketResult:
    handshakes_ok: int = 0
    # Failed upgrades by reason (status, headers, accept, unoffered, garbled, closed, timeout).
    handshake_failures: dict[str, int] = field(default_factory=dict)
    handshake_statuses: dict[str, int] = field(default_factory=dict)  # reason "status", by code
    duplicates: int = 0

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
