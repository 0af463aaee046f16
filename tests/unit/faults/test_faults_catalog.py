"""The fault servers resolve by name but stay out of the normal catalog, `all` and `servers`."""

from pathlib import Path

from click.testing import CliRunner

from wsgibench.cli import cli
from wsgibench.faults import FAULTS
from wsgibench.servers import catalog, fault_catalog, get
from wsgibench.study.model import load_study

DOC = Path(__file__).resolve().parents[3] / "README.md"


def test_faults_resolve_but_are_hidden():
    assert set(fault_catalog()) == {f"fault-{k}" for k in FAULTS}
    assert not [n for n in catalog() if n.startswith("fault-")]
    assert get("fault-hang").stdlib_python and get("fault-hang").env is None
    assert not [s for s in load_study("all").servers if s.startswith("fault-")]


def test_servers_command_lists_faults_only_when_asked():
    plain = CliRunner().invoke(cli, ["servers"]).output
    faults = CliRunner().invoke(cli, ["servers", "--faults"]).output
    assert "fault-" not in plain
    assert all(f"fault-{k}" in faults for k in FAULTS)


def test_doc_table_lists_every_fault():
    text = DOC.read_text()
    assert all(f"| `fault-{k}` |" in text for k in FAULTS)
