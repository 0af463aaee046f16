"""One request kind of an engine plan (docs/engine-protocol.md, `requests`): what is sent, how
often, what a valid reply is; results/engine_plan.py holds it in an `EnginePlan`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wsgibench.results import json_fields as jf
from wsgibench.results.plan_expect import Expect


@dataclass(frozen=True, kw_only=True)
class PlanRequest:
    """One request kind of a plan: what is sent, how often (by weight), what a valid reply is."""

    name: str
    method: str = "GET"
    path: str = "/"
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    weight: float = 1.0
    expect: Expect

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "headers": dict(self.headers),
            "body": self.body,
            "weight": self.weight,
            "expect": self.expect.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlanRequest:
        return cls(
            name=jf.need(jf.text(d, "name"), "requests[].name"),
            method=jf.or_default(jf.text(d, "method"), "GET"),
            path=jf.or_default(jf.text(d, "path"), "/"),
            headers=tuple((str(k), str(v)) for k, v in jf.table(d, "headers").items()),
            body=jf.or_default(jf.text(d, "body"), ""),
            weight=jf.or_default(jf.number(d, "weight"), 1.0),
            expect=Expect.from_dict(jf.table(d, "expect")),
        )
