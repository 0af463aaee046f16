"""The `http2` object of an engine result (HTTP/2 loads only): the connections that got the
server's SETTINGS, and the GOAWAYs, stream resets and refused streams counted beside each
request's outcome."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results import json_fields as jf


@dataclass(frozen=True)
class Http2Result:
    connections: int = 0
    streams: int = 0
    # Connections on which the server's SETTINGS came: 0 means it never spoke HTTP/2.
    settings_received: int = 0
    goaways: dict[str, int] = field(default_factory=dict)  # by error code
    rst_streams: dict[str, int] = field(default_factory=dict)  # by error code
    refused_by_goaway: int = 0  # streams above a GOAWAY's last id, sent again once
    protocol_errors: dict[str, int] = field(default_factory=dict)  # by what was wrong

    @classmethod
    def read(cls, value: Any) -> Http2Result | None:
        """The result's `http2` object, None when it has none."""
        if not isinstance(value, Mapping):
            return None
        return cls(
            int(value.get("connections") or 0),
            int(value.get("streams") or 0),
            int(value.get("settings_received") or 0),
            jf.counts(value.get("goaways")),
            jf.counts(value.get("rst_streams")),
            int(value.get("refused_by_goaway") or 0),
            jf.counts(value.get("protocol_errors")),
        )

    def refusal(self) -> str | None:
        """Why the server does not speak HTTP/2 here ("no SETTINGS on 12 connections;
        frame_size x12"), or None when any connection got its SETTINGS."""
        if self.settings_received > 0 or self.connections == 0:
            return None
        parts = [f"no SETTINGS on {self.connections} connections"]
        parts += [f"{what} x{n}" for what, n in sorted(self.protocol_errors.items())]
        return "; ".join(parts)
