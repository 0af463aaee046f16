"""Every server venv has a lock beside its recipe, pinning each package with its hashes."""

from __future__ import annotations

import hashlib

import pytest

from wsgibench.errors import EnvironmentProblem
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
    text = (
        locks.HEADER.format(what="zope.interface==7.2")
        + "zope.interface==7.2 \\\n    --hash=sha256:" + "a" * 64 + "\n"
        + "Flask_Login[extra]==0.6.3 \\\n    --hash=sha256:" + "b" * 64 + "\n"
    )  # fmt: skip
    lock.write_text(text)
    assert locks.pins(lock) == {"zope-interface": "7.2", "flask-login": "0.6.3"}
    assert locks.digest(lock) == hashlib.sha256(text.encode()).hexdigest()
    assert locks.digest(None) is None and locks.digest(tmp_path / "absent.lock") is None
    locks.check_installed(lock, {"zope-interface": "7.2", "flask-login": "0.6.3", "other": "1"})
    # A venv that is not the lock's is refused, naming each package that differs.
    with pytest.raises(EnvironmentProblem) as wrong:
        locks.check_installed(lock, {"zope-interface": "7.1", "flask-login": "0.6.3"})
    assert str(wrong.value) == "venv does not match x.lock: zope-interface 7.2 (locked) vs 7.1"
    with pytest.raises(EnvironmentProblem) as missing:
        locks.check_installed(lock, {"zope-interface": "7.2"})
    assert str(missing.value) == (
        "venv does not match x.lock: flask-login 0.6.3 (locked) vs missing"
    )
    # the lock names what it was written for; another set of requirements is another lock
    assert locks.locks_these(lock, ("zope.interface==7.2",), ())
    assert not locks.locks_these(lock, ("zope.interface==7.3",), ())
    assert not locks.locks_these(lock, ("zope.interface==7.2",), ("flask-login==0.6.3",))
    assert not locks.locks_these(tmp_path / "absent.lock", ("zope.interface==7.2",), ())
