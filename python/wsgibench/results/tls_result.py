"""The `tls` object of an engine result (TLS loads only): handshakes, full and resumed, their
time, the protocol ALPN chose, and the connections whose TLS failed, by reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results import json_fields as jf


@dataclass(frozen=True)
class TlsResult:
    handshakes: int = 0
    resumed: int = 0
    handshake_p50_us: int | None = None
    handshake_p99_us: int | None = None
    alpn: dict[str, int] = field(default_factory=dict)  # "" when none was chosen
    failures: dict[str, int] = field(default_factory=dict)  # by reason (docs/measurement.md)

    @classmethod
    def read(cls, value: Any) -> TlsResult | None:
        """The result's `tls` object, None when it has none."""
        if not isinstance(value, Mapping):
            return None
        got = value.get("handshake_us")
        times: Mapping[str, Any] = got if isinstance(got, Mapping) else {}
        return cls(
            int(value.get("handshakes") or 0),
            int(value.get("resumed") or 0),
            None if times.get("p50") is None else int(times["p50"]),
            None if times.get("p99") is None else int(times["p99"]),
            jf.counts(value.get("alpn")),
            jf.counts(value.get("failures")),
        )

    def describe_failures(self) -> str:
        """ "alpn x4; timeout x1"."""
        return "; ".join(f"{why} x{n}" for why, n in sorted(self.failures.items()))

    def alpn_refusal(self) -> str | None:
        """Why the server does not speak h2 over TLS here, when every failure was ALPN's (it chose
        HTTP/1.1 or nothing); None otherwise."""
        if not self.failures or set(self.failures) != {"alpn"}:
            return None
        chosen = ", ".join(f"{p or 'none'} x{n}" for p, n in sorted(self.alpn.items()))
        return f"ALPN chose no h2 on {self.failures['alpn']} connections ({chosen or 'none'})"
