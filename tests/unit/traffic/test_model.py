"""A log read into its traffic model: bad lines counted and the first shown, kinds with their
shares, statuses and sizes, what is left out and why, and the requests placed second by second
(those logged to the second spread evenly within it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.traffic.grouping import Grouping
from wsgibench.traffic.model import US, model_of
from wsgibench.traffic.read import SHOWN_BAD, read_log


def _line(second: int, request: str, status: int = 200, size: int = 10) -> str:
    return f'1.2.3.4 - - [14/Mar/2025:09:00:{second:02d} +0000] "{request} HTTP/1.1" {status} {size} "-" "-"'


def _write(tmp_path: Path, lines: list[str]) -> Path:
    log = tmp_path / "access.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def _model(tmp_path: Path, lines: list[str], bodies=(), max_kinds=50, fmt="combined"):
    reading = read_log(_write(tmp_path, lines), fmt, Grouping.of(["/items/{id}"]))
    return model_of(reading, set(bodies), max_kinds)


def test_kinds_shares_statuses_sizes_and_the_example_sent(tmp_path):
    lines = [_line(0, "GET /items/1", 404, 9)] + [
        _line(0, f"GET /items/{i}", 200, 20) for i in (2, 3)
    ]
    lines += [_line(1, "GET /search?q=a"), _line(1, "POST /orders", 201)]
    m = _model(tmp_path, lines, bodies={"POST /orders"})
    by = {k.name: k for k in m.kinds}
    assert list(by) == ["GET /items/{id}", "GET /search?q={}", "POST /orders"]
    items = by["GET /items/{id}"]
    assert (items.count, items.status, items.statuses) == (3, 200, {404: 1, 200: 2})
    assert items.example == "/items/2"  # the first target logged with the commonest status
    assert (items.size_mean, items.size_max) == (pytest.approx(49 / 3), 20)
    assert items.share == pytest.approx(0.6)
    assert (m.requests, m.span_s, m.per_second) == (5, 2, [3, 2])
    assert not m.left_out


def test_requests_logged_to_the_second_spread_evenly_within_it_in_the_logs_order(tmp_path):
    lines = [_line(0, "GET /a"), _line(0, "GET /b"), _line(2, "GET /a"), _line(0, "GET /c")]
    m = _model(tmp_path, lines)
    names = [m.kinds[k].name for k in m.kind_of]
    assert list(m.offsets_us) == [US // 6, US // 2, 5 * US // 6, 2 * US + US // 2]
    assert names == ["GET /a", "GET /b", "GET /c", "GET /a"]
    assert m.per_second == [3, 0, 1]
    rate = m.rate()
    assert (rate.peak, rate.peak_at, rate.mean) == (3, 0, pytest.approx(4 / 3))
    assert rate.burstiness == pytest.approx(2.25)


def test_precise_times_are_kept_and_out_of_order_lines_sorted(tmp_path):
    lines = [
        '{"time": 100.75, "method": "GET", "path": "/late"}',
        '{"time": 100.25, "method": "GET", "path": "/early"}',
        '{"time": 101.5, "method": "GET", "path": "/next"}',
    ]
    m = _model(tmp_path, lines, fmt="json")
    assert m.start_s == 100
    assert list(m.offsets_us) == [250_000, 750_000, 1_500_000]
    assert [m.kinds[k].name for k in m.kind_of] == ["GET /early", "GET /late", "GET /next"]


def test_left_out_and_why_a_body_a_method_a_target_and_the_rare_kinds(tmp_path):
    lines = [_line(0, "GET /a")] * 3 + [_line(0, "GET /b")] * 2 + [_line(0, "GET /c")]
    lines += [_line(0, "POST /orders"), _line(0, "CONNECT /tunnel")]
    m = _model(tmp_path, lines, max_kinds=2)
    assert [k.name for k in m.kinds] == ["GET /a", "GET /b"]
    left = {x.what: (x.requests, x.why) for x in m.left_out}
    assert left["POST /orders"][0] == 1 and "bodies" in left["POST /orders"][1]
    assert left["CONNECT /tunnel"] == (1, "CONNECT is not replayed")
    assert left["1 kinds past the 2 commonest"][0] == 1
    assert m.requests == 5 and m.parsed == 8
    assert sum(m.kinds[k].count for k in set(m.kind_of)) == 5


def test_bad_lines_are_counted_and_the_first_few_kept(tmp_path):
    lines = [_line(0, "GET /a")] + [f"garbage {i}" for i in range(SHOWN_BAD + 3)] + [""]
    reading = read_log(_write(tmp_path, lines), "combined", Grouping.of([]))
    assert (reading.lines, reading.parsed, reading.bad.count) == (len(lines), 1, SHOWN_BAD + 3)
    assert [b[0] for b in reading.bad.first] == list(range(2, 2 + SHOWN_BAD))
    assert reading.bad.first[0][1:] == ("garbage 0", "does not match the format")


def test_a_log_of_which_nothing_reads_stops_in_one_line(tmp_path):
    with pytest.raises(UsageError, match=r"none of its 2 lines reads as common \(line 1: "):
        read_log(_write(tmp_path, ["junk", "more"]), "common", Grouping.of([]))
    with pytest.raises(UsageError, match="no such file|No such file"):
        read_log(tmp_path / "absent.log", None, Grouping.of([]))


def test_the_format_is_detected_when_not_given(tmp_path):
    reading = read_log(_write(tmp_path, [_line(0, "GET /a")]), None, Grouping.of([]))
    assert reading.format == "combined"
