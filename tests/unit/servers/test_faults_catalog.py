"""The fault servers: a folder of the catalog whose recipes are hidden. They resolve by name like any
entry but stay out of `servers`, `*` and the `all` study."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from wsgibench.cli import cli
from wsgibench.errors import UsageError
from wsgibench.servers import catalog, get, listed, resolve
from wsgibench.servers.faults import FAULTS
from wsgibench.study.model import load_study

DOC = Path(__file__).resolve().parents[3] / "docs" / "robustness.md"
NAMES = {f"fault-{k}" for k in FAULTS}


def test_faults_are_hidden_entries_of_the_catalog():
    hidden = {n for n, r in catalog().items() if r.hidden}
    assert hidden == NAMES == set(listed(hidden=True))
    assert {r.module for n, r in catalog().items() if n in NAMES} == {"wsgibench.servers.faults"}
    assert not NAMES & set(listed())
    assert get("fault-hang").stdlib_python and get("fault-hang").env is None
    assert not [s for s in load_study("all").servers if s.startswith("fault-")]


def test_a_hidden_entry_is_named_like_any_other():
    assert resolve(["fault-hang", "bjoern"]) == ["fault-hang", "bjoern"]
    assert set(resolve(["fault-*"])) == NAMES
    assert not NAMES & set(resolve(["*"]))
    assert resolve(["*-hang"]) == ["fault-hang"]  # no listed entry matches: the hidden ones
    with pytest.raises(UsageError, match="did you mean 'fault-hang'"):
        get("fault-hnag")


def test_servers_command_lists_faults_only_when_asked():
    plain = CliRunner().invoke(cli, ["servers"]).output
    faults = CliRunner().invoke(cli, ["servers", "--faults"]).output
    assert "fault-" not in plain
    assert all(f"fault-{k}" in faults for k in FAULTS)


def test_doc_table_lists_every_fault():
    text = DOC.read_text()
    assert all(f"| `fault-{k}` |" in text for k in FAULTS)
