"""Seed 001 on a quick run: the tornado2015 report says, against the seed, its 39x ratio of
non-blocking to blocking req/s beside ours."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from wsgibench.report.seed import UNTRUSTED_CODES

from .helpers import again_while_the_machine_spoils, require

# What a cell says of the machine, not of the servers: the seed section then leaves the level out.
MACHINE = tuple(UNTRUSTED_CODES.values())


def _ratio_line(folder: Path) -> tuple[str, str]:
    """Run the study into `folder`; the report's summary and its ratio line."""
    argv = [
        sys.executable,
        "-m",
        "wsgibench",
        "run",
        "tornado2015",
        "--results",
        str(folder / "t.sqlite"),
        "--servers",
        "tornado-native-sync,tornado-native-async",
        "--repeats",
        "1",
        "--app-env",
        "WSGIBENCH_SLEEP_S=0.02",
        "--no-install",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = (folder / "t-report" / "summary.md").read_text()
    line = next(x for x in summary.splitlines() if x.startswith("- non-blocking over blocking"))
    return summary, line


def test_tornado2015_report_states_the_seeds_ratio_beside_ours(tmp_path: Path):
    for name in ("tornado-native-sync", "tornado-native-async"):
        require(name)
    # On a shared CI machine other work may take part of a CPU during the one repeat at 40: the
    # section then leaves that level out, truthfully, as the machine's (twice in a row on
    # 2026-11-28, when the hypervisor took 5-25 % of the CPUs). Any other "—" fails at once.
    summary, line = again_while_the_machine_spoils(
        _ratio_line,
        lambda got: "Here: —" in got[1] and any(m in got[1] for m in MACHINE) and got[1],
        tmp_path,
        attempts=3,
    )
    assert "### Against the seed (seed 001" in summary
    assert "“Requests per second: 39.35 [#/sec] (mean)” (line 47); 39.35×" in line
    found = re.search(r"Here: ([\d.]+)× at 40", line)
    assert found is not None, line
    ours = float(found.group(1))
    # 40 sleepers at once against one at a time; with 20 ms sleeps a new connection per request
    # weighs on both, the more so on a shared 2-CPU machine: well above 1×, at most 40×
    assert 10 < ours < 45, line
    # 20 ms sleeps against the seed's 1 s: the start-up of each request weighs more, so the
    # ratio is shown beside the seed's but not judged against it
    assert ": not comparable —" in line and "WSGIBENCH_SLEEP_S" in line
    # absolute req/s are not comparable: this run slept 0.02 s, the seed 1 s
    blocking = next(x for x in summary.splitlines() if x.startswith("- blocking handler"))
    assert "not comparable" in blocking and "WSGIBENCH_SLEEP_S" in blocking
