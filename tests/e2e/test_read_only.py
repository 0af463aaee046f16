"""`show`, `export`, `report` and `compare` open a store read-only for real: a copy that cannot be
written (file 0444 in a 0555 folder, and no CAP_DAC_OVERRIDE to get around it) still works, and
nothing is written next to it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from unit.synthetic import build_store

from .helpers import cli

WSGIBENCH = cli()
# Root ignores file modes; without these two capabilities it is held to them like anyone else.
NO_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def _read_only_copy(tmp_path: Path) -> Path:
    store = build_store(tmp_path / "made" / "r.sqlite")
    build_store(store, seed=2)  # two runs: `compare STORE` compares them
    folder = tmp_path / "ro"
    folder.mkdir()
    copy = folder / "r.sqlite"
    shutil.copy(store, copy)
    copy.chmod(0o444)
    folder.chmod(0o555)
    return copy


def test_a_store_that_cannot_be_written_is_read(tmp_path: Path):
    copy = _read_only_copy(tmp_path)
    out = tmp_path / "report"
    runs = {
        "show": [*WSGIBENCH, "show", str(copy)],
        "export": [*WSGIBENCH, "export", str(copy), "--format", "json"],
        "report": [*WSGIBENCH, "report", str(copy), "--out", str(out), "--no-png"],
        "compare": [*WSGIBENCH, "compare", str(copy)],
    }
    for name, argv in runs.items():
        proc = subprocess.run([*NO_OVERRIDE, *argv], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
    assert (out / "report.html").exists()
    assert sorted(p.name for p in copy.parent.iterdir()) == ["r.sqlite"]  # no -wal, no -shm


def test_writing_to_the_copy_is_refused(tmp_path: Path):
    copy = _read_only_copy(tmp_path)
    code = (
        "import sys; from wsgibench.results.store import Store\n"
        "s = Store(sys.argv[1], create=False, read_only=True)\n"
        "s.begin_study('x', {}, {})\n"
    )
    proc = subprocess.run(
        [*NO_OVERRIDE, sys.executable, "-c", code, str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "readonly database" in proc.stderr
