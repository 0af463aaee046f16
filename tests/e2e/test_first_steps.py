"""A newcomer's first commands, through the installed `wsgibench` script: the README's
`--load-hosts 2` line works and its merged counts add up (against a server that counts its own
replies too); a program embedding wsgibench starts load hosts without a `__main__` guard; a study
the engine would refuse, or one that measures nothing, ends with the right exit code."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store

from .helpers import cli, require

README_LINE = "run quick --servers bjoern --levels 50 --duration 2 --repeats 1 --load-hosts 2"


def _run(*args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout, cwd=cwd)


def _only_result(store: Store) -> tuple[object, EngineResult]:
    (cell,) = [c for c in store.cells(store.study(None)["id"]) if c.server != "nginx-baseline"]
    (rep,) = store.repeats(cell.id)
    return cell, EngineResult.from_dict(json.loads(rep["engine_json"]))


def _merged_is_the_sum(result: EngineResult, hosts: int) -> None:
    assert len(result.load_hosts) == hosts
    assert all(h.result.totals.ok > 0 for h in result.load_hosts)
    assert result.totals.ok == sum(h.result.totals.ok for h in result.load_hosts)
    merged = HdrHistogram.decode(result.kinds[0].latency.hdr)
    assert merged.get_total_count() == sum(
        HdrHistogram.decode(h.result.kinds[0].latency.hdr).get_total_count()
        for h in result.load_hosts
    )


def test_the_readme_load_hosts_line(tmp_path: Path):
    require("bjoern")
    proc = _run(*README_LINE.split(), "--no-report", cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "internal error" not in said, said[-3000:]
    assert said.count("quick:") == 1, "the start line printed more than once: the program re-ran"
    store = Store(tmp_path / "results" / "wsgibench.sqlite", read_only=True)
    cell, result = _only_result(store)
    assert cell.status in ("measured", "contended", "invalid"), (cell.status, cell.reason)
    _merged_is_the_sum(result, 2)
    assert result.totals.error_count == 0


def test_load_hosts_count_what_the_server_counted(tmp_path: Path):
    counts = tmp_path / "counts"
    counts.mkdir()
    study = tmp_path / "counted.toml"
    study.write_text(
        textwrap.dedent(f"""
        name = "counted"
        servers = ["fault-counted"]
        repeats = 1
        app_env = {{ WSGIBENCH_REPLY_COUNTS = "{counts}" }}
        [[load]]
        name = "closed"
        model = "closed"
        levels = [6]
        duration_s = 1.5
        warmup_s = 0
        """)
    )
    proc = _run("run", str(study), "--load-hosts", "2", "--no-report", cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    _, result = _only_result(Store(tmp_path / "results" / "wsgibench.sqlite", read_only=True))
    _merged_is_the_sum(result, 2)
    (written,) = [json.loads(p.read_text()) for p in counts.glob("replies-*.json")]
    replied = sum(written["by_peer"].values())
    # the server's replies: the engine's, plus the behaviour checks' few requests
    assert 0 < replied - result.totals.ok <= 30, (replied, result.totals.ok)


EMBEDDED = """
# A program that embeds wsgibench, with no `if __name__ == "__main__":` guard on purpose.
import sys
from pathlib import Path
from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

study = parse_study({{
    "name": "embedded", "servers": ["bjoern"], "repeats": 1, "load_hosts": 2,
    "load": [{{"name": "closed", "model": "closed", "levels": [8], "duration_s": 1.0,
              "warmup_s": 0}}],
}}, "embedded")
store = Store(Path({store!r}))
print("ran study", StudyRunner(study, store).run(), flush=True)
"""


def test_an_embedding_program_starts_load_hosts_without_a_guard(tmp_path: Path):
    require("bjoern")
    program = tmp_path / "embed.py"
    store = tmp_path / "e.sqlite"
    program.write_text(EMBEDDED.format(store=str(store)))
    proc = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert proc.stdout.count("ran study") == 1, proc.stdout
    _, result = _only_result(Store(store, read_only=True))
    _merged_is_the_sum(result, 2)


def test_a_plan_the_engine_refuses_stops_the_run_before_any_server(tmp_path: Path):
    study = tmp_path / "bad-header.toml"
    study.write_text(
        'servers = ["bjoern"]\n'
        '[[requests]]\npath = "/"\nheaders = { "X-Bad" = "a\\nb" }\n'
        '[[load]]\nmodel = "closed"\nlevels = [2]\nduration_s = 1\n'
    )
    proc = _run("run", str(study), "--results", str(tmp_path / "r.sqlite"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "the engine refuses the plan" in line and "closed" in line and "X-Bad" in line, line
    assert not (tmp_path / "r.sqlite").exists()


def test_a_study_that_measures_nothing_exits_4(tmp_path: Path):
    study = tmp_path / "nothing.toml"
    # seed 001's native tornado handlers serve only the sleep apps: every cell is unavailable
    study.write_text(
        'servers = ["tornado-native-async"]\napp = "pong"\nrepeats = 1\n'
        '[[load]]\nmodel = "closed"\nlevels = [2]\nduration_s = 0.5\n'
    )
    proc = _run("run", str(study), "--results", str(tmp_path / "r.sqlite"), cwd=tmp_path)
    assert proc.returncode == 4, (proc.stdout + proc.stderr)[-2000:]
    assert "nothing was measured" in proc.stderr and "internal error" not in proc.stderr
