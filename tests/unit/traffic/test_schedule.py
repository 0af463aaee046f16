"""The trace model's schedule file: the bytes the engine reads (docs/engine-protocol.md), one
file per content, named by its digest."""

from __future__ import annotations

from pathlib import Path

from wsgibench.traffic.grouping import Grouping
from wsgibench.traffic.model import model_of
from wsgibench.traffic.read import read_log
from wsgibench.traffic.schedule import MAGIC, decode, encode, write


def test_records_are_the_offset_above_the_kind_little_endian():
    data = encode([0, 1, 2_500_000], [0, 3, 65535])
    assert data[:8] == MAGIC == b"WBTRACE1"
    assert data[8:16] == (0).to_bytes(8, "little")
    assert data[16:24] == ((1 << 16) | 3).to_bytes(8, "little")
    assert decode(data) == [(0, 0), (1, 3), (2_500_000, 65535)]


def test_a_models_schedule_is_written_once_under_its_digest(tmp_path: Path):
    log = tmp_path / "a.log"
    log.write_text(
        "".join(
            f'1.2.3.4 - - [14/Mar/2025:09:00:0{s} +0000] "GET /{p} HTTP/1.1" 200 1 "-" "-"\n'
            for s, p in ((0, "a"), (0, "b"), (1, "a"))
        )
    )
    model = model_of(read_log(log, "combined", Grouping.of([])))
    path = write(model, tmp_path / "traces")
    assert path.suffix == ".trace" and len(path.stem) == 24
    assert decode(path.read_bytes()) == [(250_000, 0), (750_000, 1), (1_500_000, 0)]
    stamp = path.stat().st_mtime_ns
    assert write(model, tmp_path / "traces") == path and path.stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "traces").iterdir()] == [path.name]
