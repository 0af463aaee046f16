"""One's own app's folder is copied for every server start: what the copy would hold is counted,
what it leaves out (version control, virtual environments, caches) is not, and the walk stops
once the limit is passed."""

from __future__ import annotations

from pathlib import Path

from wsgibench.run.serve import copy_size_over


def test_only_what_the_copy_holds_counts(tmp_path: Path):
    (tmp_path / "app.py").write_bytes(b"x" * 600)
    for left_out in (".git", ".venv", "node_modules", "__pycache__"):
        (tmp_path / left_out).mkdir()
        (tmp_path / left_out / "blob").write_bytes(b"x" * 5000)
    (tmp_path / "app.cpython-311.pyc").write_bytes(b"x" * 5000)
    assert not copy_size_over(tmp_path, limit=1000)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rows.csv").write_bytes(b"x" * 500)
    assert copy_size_over(tmp_path, limit=1000)
    assert not copy_size_over(tmp_path, limit=2000)
