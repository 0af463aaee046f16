"""The protocol objects of several load hosts' results (`websocket`, `http2`, `tls`) joined
exactly: counts and counts by name summed, HdrHistograms added, flags kept only when every host
had them, a setting the hosts saw differently kept at its smallest, names kept when the hosts
agree and joined when not. What cannot be joined exactly is left out: TLS handshake percentiles
(the engine keeps no histogram of them) keep only their maximum, and the hosts' own documents
stay beside the merge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wsgibench.results.hdr_docs import merge_histograms

PROTOCOL_OBJECTS = ("websocket", "http2", "tls")


def _join(key: str, values: list[Any]) -> Any:
    """One field of the hosts' objects, joined by what kind of value it is."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, bool):
        # publisher_open: one host runs a broadcast; verified: every host verified
        return any(present) if key == "publisher_open" else all(present)
    if isinstance(first, int):
        if key == "max_concurrent_streams":  # the server's setting, as the hosts read it
            return min(int(v) for v in present)
        return sum(int(v) for v in present)
    if isinstance(first, str):
        return "+".join(sorted({str(v) for v in present}))
    if isinstance(first, Mapping):
        return _join_objects(key, [v for v in present if isinstance(v, Mapping)])
    return first


def _join_objects(key: str, parts: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    if any(p.get("hdr") for p in parts):
        return merge_histograms(parts)
    if key == "handshake_us":  # p50, p99 and max only: the maximum is exact, the rest is not
        highest = [int(p["max"]) for p in parts if p.get("max") is not None]
        return {"p50": None, "p99": None, "max": max(highest) if highest else None}
    keys: list[str] = []
    for p in parts:
        keys += [str(k) for k in p if str(k) not in keys]
    return {k: _join(k, [p.get(k) for p in parts]) for k in keys}


def merge_protocols(docs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The protocol objects the hosts' documents have, each joined over the hosts that have it."""
    merged: dict[str, Any] = {}
    for name in PROTOCOL_OBJECTS:
        parts = [d[name] for d in docs if isinstance(d.get(name), Mapping)]
        if parts:
            merged[name] = _join_objects(name, parts)
    return merged
