"""The quiet-CPU window of the tests (quiet.py) on real processes: a process the test started is
its own work, never another's, even one left to init; a process nobody in the test started is
other work, counted by its CPU time, and a bound that fails meanwhile fails as the machine being
busy, naming it."""

from __future__ import annotations

import subprocess
import time

import psutil
import pytest

from .quiet import BUSY, QuietCpus, quiet_cpus

HOG_S = 1.5


def _orphan(argv: str, env: dict[str, str] | None = None) -> int:
    """Start `argv` through a shell that exits at once: the process is left to init (not this
    test's descendant any more); returns its pid."""
    sh = subprocess.run(
        ["sh", "-c", f"{argv} >/dev/null 2>&1 & echo $!"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return int(sh.stdout.split()[-1])


def _stop(pid: int) -> None:
    try:
        psutil.Process(pid).kill()
    except psutil.Error:
        pass


def test_own_processes_are_not_other_work_and_a_strangers_are(tmp_path):
    with quiet_cpus(calm_first=False) as quiet:  # (the window is what is tested)
        # the test's own, left to init: it carries the window's tag
        own = _orphan("exec md5sum /dev/zero")
        time.sleep(HOG_S)
        _stop(own)
        # a stranger's: started without the tag, and no descendant of this test
        stranger = _orphan("exec sha256sum /dev/zero", env={"PATH": "/usr/bin:/bin"})
        time.sleep(HOG_S)
        times = psutil.Process(stranger).cpu_times()
        work = quiet.so_far()
        _stop(stranger)
    names = dict(work.top)
    assert "md5sum" not in names, work.describe()
    # all of the stranger's CPU time is other work (its own clock, whatever else ran)
    used = times.user + times.system
    assert used > 0.1 and names.get("sha256sum", 0.0) >= used - 0.1, (used, work.describe())
    assert work.busy and f"sha256sum {names['sha256sum']:.1f} s" in work.describe()
    with pytest.raises(pytest.fail.Exception, match=f"^{BUSY}other work took .*sha256sum"):
        with quiet.figures():
            raise AssertionError("1,000 req/s is under 2,000")


def test_a_window_without_strangers_counts_none_of_its_own_work():
    quiet = QuietCpus("no-such-tag")
    quiet.begin(calm_first=False)
    child = subprocess.Popen(["md5sum", "/dev/zero"], stdout=subprocess.DEVNULL)
    time.sleep(HOG_S)
    child.kill()
    child.wait()
    work = quiet.end()
    assert "md5sum" not in dict(work.top), work.describe()  # a descendant, tag or not
    assert quiet.end() is work  # frozen: later reads judge the same window
