"""The one formatting module of the report and `show`: milliseconds, request kinds, the spread of
req/s and the behaviour column, each as both outputs print them."""

from __future__ import annotations

from wsgibench.report import format as fmt
from wsgibench.results.stats import Summary


def test_milliseconds_from_microseconds():
    assert [fmt.ms(us) for us in (None, 212.0, 12_345.0, 1_234_567.0)] == [
        "-",
        "0.212",
        "12.35",
        "1,235",
    ]
    assert fmt.ms(212.0, ".2f") == "0.21"  # show's columns: two decimals
    assert fmt.ms(None, ".2f") == "-" and fmt.ms_of(None) is None and fmt.ms_of(1500.0) == 1.5


def test_request_kinds_in_one_line():
    assert fmt.kinds({"pong": (200.0, 900.0)}) == ""
    text = fmt.kinds({"slow": (501_000.0, 998_000.0), "fast": (212.0, None)})
    assert text == "by kind: slow p50 501 ms p99 998 ms; fast p50 0.212 ms p99 -"


def test_spread_and_behaviour_columns():
    one = Summary(1, 10.0, 10.0, 10.0, 10.0, 10.0, 0.0, 0.0, 0)
    noisy = Summary(3, 10.0, 10.0, 10.0, 8.0, 12.0, 1.0, 0.1, 0)
    assert [fmt.cv(None), fmt.cv(one), fmt.cv(noisy)] == ["-", "—", "10.0% !"]
    caps = {"http10": True, "keep_alive": True, "pipelining": False, "wire_bytes": 123}
    assert fmt.caps_short(caps) == "1.0 ka no-pipe 123B" and fmt.caps_short(None) == "-"
    assert fmt.whole(12345.6) == "12,346" == fmt.rps(12345.6)


def test_the_protocols_probed_for_a_load_are_said_and_the_others_left_out():
    caps = {"http10": True, "keep_alive": True, "pipelining": True, "h2c": False, "websocket": None}
    assert fmt.caps(caps) == "HTTP/1.0, keep-alive, pipelining, no h2c"
    assert fmt.caps_short({**caps, "h2c": True, "websocket": True}) == "1.0 ka pipe ws h2c"
