"""The memory limit's verification, on a directory laid out like a v2 group: the limit read back
from the group's own file is compared with the one asked for exactly (a limit changed by hand is
caught), no process to check is no verification, and a process outside the group is named."""

from __future__ import annotations

import os
from pathlib import Path

from wsgibench.machine.cgroups import MemoryCgroup

MIB_512 = 512 * 2**20


def _limit(tmp_path: Path) -> MemoryCgroup:
    group = tmp_path / "owner-1"
    group.mkdir()
    (group / "memory.swap.max").write_text("max")
    limit = MemoryCgroup._on_v2(group, MIB_512)
    assert (group / "memory.max").read_text() == str(MIB_512)
    assert (group / "memory.swap.max").read_text() == "0"
    return limit


def test_the_limit_read_back_is_the_one_asked_for(tmp_path: Path):
    limit = _limit(tmp_path)
    assert limit.read_back() == MIB_512 and limit.changed() is None
    assert limit.verify([]) == "not applied: no process of the server to check"
    assert limit.verify([os.getpid()]).startswith(f"not applied: process {os.getpid()} in ")


def test_a_limit_changed_by_hand_is_caught(tmp_path: Path):
    limit = _limit(tmp_path)
    (limit.path / "memory.max").write_text(str(2 * MIB_512))
    why = f"asked for memory.max={MIB_512}, the group holds {2 * MIB_512}"
    assert limit.changed() == why
    assert limit.verify([os.getpid()]) == f"not applied: {why}"
    (limit.path / "memory.max").write_text("max")
    assert (
        limit.changed()
        == f"asked for memory.max={MIB_512}, the group holds no limit or none readable"
    )
