"""The schedule file the engine's `trace` model reads (docs/engine-protocol.md): `WBTRACE1`,
then one little-endian u64 per request, ascending, `offset_us << 16 | kind`. Written once per
traffic model; its name is its content's digest, so a plan that names it names its content."""

from __future__ import annotations

import hashlib
import os
import sys
from array import array
from collections.abc import Iterable
from pathlib import Path

from wsgibench.traffic.model import TrafficModel

MAGIC = b"WBTRACE1"
KIND_BITS = 16
MAX_KINDS = 1 << KIND_BITS


def encode(offsets_us: Iterable[int], kinds: Iterable[int]) -> bytes:
    """The file's bytes for requests at these offsets of these kinds (ascending offsets)."""
    records = array("Q", ((o << KIND_BITS) | k for o, k in zip(offsets_us, kinds, strict=True)))
    if sys.byteorder == "big":
        records.byteswap()
    return MAGIC + records.tobytes()


def decode(data: bytes) -> list[tuple[int, int]]:
    """(offset µs, kind) of each request of a schedule file's bytes."""
    if not data.startswith(MAGIC) or (len(data) - len(MAGIC)) % 8:
        raise ValueError("not a schedule file")
    records = array("Q")
    records.frombytes(data[len(MAGIC) :])
    if sys.byteorder == "big":
        records.byteswap()
    mask = MAX_KINDS - 1
    return [(r >> KIND_BITS, r & mask) for r in records]


def write(model: TrafficModel, folder: Path) -> Path:
    """The model's schedule in `folder`, named by its digest (written once: the same traffic
    finds the file there)."""
    if len(model.kinds) > MAX_KINDS:
        raise ValueError(f"a schedule names at most {MAX_KINDS} kinds")
    data = encode(model.offsets_us, model.kind_of)
    path = folder / f"{hashlib.sha256(data).hexdigest()[:24]}.trace"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(f".{os.getpid()}.part")
        part.write_bytes(data)
        part.replace(path)
    return path
