"""`wsgibench traffic LOG`: the model an access log makes, as a replay would send it, and one line
for a log it cannot read; a load host writes the trace's schedule where its engine reads it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from wsgibench.cli.main import cli
from wsgibench.cli.traffic import sparkline
from wsgibench.run.hostwork import _with_schedule


def _log(tmp_path: Path) -> Path:
    lines = []
    for second, n in enumerate([2, 8, 2]):
        stamp = f"14/Mar/2025:09:00:0{second} +0000"
        lines += [
            f'1.1.1.1 - - [{stamp}] "GET /items/{i} HTTP/1.1" 200 7 "-" "-"' for i in range(n)
        ]
    lines += ['1.1.1.1 - - [14/Mar/2025:09:00:02 +0000] "POST /orders HTTP/1.1" 201 2 "-" "-"']
    lines += ["not a request"]
    path = tmp_path / "access.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_traffic_prints_kinds_left_out_bad_lines_and_the_rate(tmp_path):
    result = CliRunner().invoke(cli, ["traffic", str(_log(tmp_path))])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "14 lines (combined), 13 requests read (12 replayed), 1 line not read" in out
    assert "line 14: does not match the format: not a request" in out
    assert "GET /items/{id}" in out and "/items/0" in out and "200 ×12" in out
    assert "POST /orders" in out and "bodies" in out
    assert "mean 4.0 req/s, peak 8 req/s in second 1, burstiness (peak / mean) 2.00" in out
    assert "▂█▂" in out


def test_a_body_puts_its_kind_back_and_a_bad_log_is_one_line(tmp_path):
    log = _log(tmp_path)
    result = CliRunner().invoke(cli, ["traffic", str(log), "--body", "POST /orders=o.json"])
    assert "13 requests read (all replayed)" in result.output
    bad = tmp_path / "bad.log"
    bad.write_text("nothing here\n")
    result = CliRunner().invoke(cli, ["traffic", str(bad), "--format", "common"])
    assert result.exit_code == 2
    assert "none of its 1 lines reads as common" in result.output
    result = CliRunner().invoke(cli, ["traffic", str(log), "--body", "orders"])
    assert result.exit_code == 2 and "KIND=FILE" in result.output


def test_a_sparkline_keeps_the_busiest_second_of_each_bar():
    assert sparkline([0, 8, 0, 0]) == " █  "
    assert sparkline([1] * 119 + [9], width=60)[-1] == "█"
    assert len(sparkline(list(range(600)))) == 60


def test_a_load_host_writes_the_schedule_and_names_it_in_the_plan(tmp_path):
    plan = {"model": {"kind": "trace", "schedule": "/controller/x.trace", "speed": 1}}
    local = _with_schedule(plan, b"WBTRACE1", tmp_path)
    assert local["model"]["schedule"] == str(tmp_path / "schedule.trace")
    assert (tmp_path / "schedule.trace").read_bytes() == b"WBTRACE1"
    assert plan["model"]["schedule"] == "/controller/x.trace"  # the controller's is left as is
    assert _with_schedule(plan, None, tmp_path) is plan
