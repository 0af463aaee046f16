"""`--resume` continues a run only on the machine and engine that began it: a store whose recorded
kernel differs is refused in one line (exit 2), and `--force` resumes it anyway."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from .helpers import require

STUDY = """
name = "resume-env"
servers = ["wsgiref"]
repeats = 1
[[load]]
name = "closed"
model = "closed"
levels = [2, 4]
duration_s = 0.5
warmup_s = 0
"""


def _run(study: Path, results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "wsgibench",
        "run",
        str(study),
        "--results",
        str(results),
        "--no-install",
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_resume_refuses_another_machine_unless_forced(tmp_path: Path):
    require("wsgiref")
    study, results = tmp_path / "s.toml", tmp_path / "r.sqlite"
    study.write_text(STUDY)
    assert _run(study, results).returncode == 0
    # Make it an unfinished run of another kernel, with its second cell still to do.
    db = sqlite3.connect(results)
    env = json.loads(db.execute("SELECT environment_json FROM studies").fetchone()[0])
    env["kernel"] = "2.6.32-not-this-one"
    with db:
        db.execute(
            "UPDATE studies SET status='interrupted', environment_json=?", (json.dumps(env),)
        )
        db.execute(
            "DELETE FROM samples WHERE repeat_id IN (SELECT r.id FROM repeats r JOIN cells c"
            " ON r.cell_id = c.id WHERE c.level = 4)"
        )
        db.execute("DELETE FROM repeats WHERE cell_id IN (SELECT id FROM cells WHERE level = 4)")
        db.execute("DELETE FROM cells WHERE level = 4")
    db.close()

    refused = _run(study, results, "--resume")
    assert refused.returncode == 2, refused.stderr
    assert "cannot resume study 'resume-env'" in refused.stderr
    assert "kernel '2.6.32-not-this-one'" in refused.stderr
    assert "Traceback" not in refused.stderr

    forced = _run(study, results, "--resume", "--force")
    assert forced.returncode == 0, forced.stderr
    db = sqlite3.connect(results)
    assert db.execute("SELECT status FROM studies").fetchone()[0] == "finished"
    assert sorted(r[0] for r in db.execute("SELECT level FROM cells")) == [2.0, 4.0]
