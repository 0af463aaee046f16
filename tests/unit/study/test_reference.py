"""docs/studies.md is the study reference the code writes: the page and the parser cannot disagree."""

from __future__ import annotations

from pathlib import Path

from wsgibench.study.keys import SECTIONS, STUDY_KEYS
from wsgibench.study.load_keys import LOAD_KEYS
from wsgibench.study.reference import reference_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "studies.md"


def test_the_doc_is_what_the_code_writes():
    expected = reference_markdown()
    assert DOC.read_text() == expected, (
        "docs/studies.md differs from the key registry: regenerate it with "
        "`wsgibench studies --keys > docs/studies.md`"
    )


def test_every_key_is_documented_with_a_type_and_words():
    for title, keys in SECTIONS:
        names = [k.name for k in keys]
        assert len(names) == len(set(names)), f"{title}: a key listed twice"
        for key in keys:
            assert key.doc.strip() and key.kind.describe(), f"{title} {key.name}: undocumented"
            assert f"| `{key.name}` |" in reference_markdown()


def test_the_keys_the_issue_names_are_documented():
    """Keys a user could only learn from the built-in files before the reference existed."""
    top = {k.name for k in STUDY_KEYS}
    assert {"seed", "server_settings", "backlog", "tcp_nodelay", "access_log", "requests"} <= top
    load = {k.name: k for k in LOAD_KEYS}
    assert load["think_s"].models == ("sessions",) and "sessions" in load["think_s"].required
