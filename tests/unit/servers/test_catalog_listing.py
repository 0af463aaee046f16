"""The catalog read in-process (moved from the end-to-end tests, which start real processes): every
server of the seeds is an entry, those that cannot run today listed as unavailable with why; and a
missing system package, simulated where wsgibench looks for it, is one line naming the package."""

from __future__ import annotations

from click.testing import CliRunner

from wsgibench.cli import cli
from wsgibench.servers import listed
from wsgibench.servers.recipe import Binary

ENVIRONMENT = 3


def test_catalog_has_every_seed_server():
    names = set(listed())
    assert len(names) >= 30
    unavailable = {r.name: r.unavailable for r in listed().values() if r.unavailable}
    for seed_only in (
        "fapws3",
        "aspen",
        "magnumpy",
        "cogen",
        "concurrence",
        "eurasia",
        "nginx-unit",
    ):
        assert unavailable.get(seed_only), seed_only


def test_missing_system_package(monkeypatch):
    """nginx is installed where the end-to-end tests run, so its absence is simulated."""
    monkeypatch.setattr(Binary, "path", lambda binary: None)
    result = CliRunner().invoke(cli, ["check", "nginx-baseline"])
    assert result.exit_code == ENVIRONMENT, result.output
    assert "needs nginx: apt-get install nginx" in result.output
    assert "Traceback" not in result.output
