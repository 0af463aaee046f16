"""Every server venv has a lock beside its recipe, pinning each package with its hashes."""

from __future__ import annotations

from wsgibench.machine import locks
from wsgibench.servers import catalog


def test_every_venv_is_locked_with_hashes():
    envs = {
        r.env.name: r.env for r in catalog().values() if r.env is not None and r.env.requirements
    }
    assert envs
    for name, env in envs.items():
        assert env.lock is not None and env.lock.exists(), name
        text = env.lock.read_text()
        pinned = locks.pins(env.lock)
        assert pinned, name
        # each requirement of the recipe is in its lock at the version it names
        for req in env.requirements + env.no_deps:
            dist, _, version = req.partition("==")
            assert pinned[locks.normalise(dist.split("[")[0])] == version, (name, req)
        body = [line for line in text.splitlines() if not line.startswith("#")]
        assert sum("==" in line for line in body) == len(pinned)
        assert text.count("--hash=sha256:") >= len(pinned)


def test_lock_digest_and_check(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("zope.interface==7.2 \\\n    --hash=sha256:" + "a" * 64 + "\n")
    assert locks.pins(lock) == {"zope-interface": "7.2"} and len(locks.digest(lock)) == 64
    locks.check_installed(lock, {"zope-interface": "7.2"})
