"""A load host's share of a plan: its part of a count, and a seed of its own."""

from __future__ import annotations

import hashlib


def share(total: int, index: int, hosts: int) -> int:
    """Host `index`'s part of `total` items: the remainder goes to the first hosts."""
    return total // hosts + (1 if index < total % hosts else 0)


def host_seed(seed: int, index: int) -> int:
    """A seed of its own for each host, the same every time for the same cell and index."""
    digest = hashlib.sha256(f"wsgibench-load-host:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:7], "big")
