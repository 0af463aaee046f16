"""Bad input and broken environments: one clear line on stderr, the documented exit code, never a
traceback, and no server started: every process the command started is counted from the kernel's
process events (machine/deathwatch.py, which sees a process that was gone at once too), and a
refusal started none, or only the engine it asked for its version."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from wsgibench.machine.deathwatch import DeathWatch
from wsgibench.results.store import Store
from wsgibench.run.engine import find_engine

from .helpers import cli, expect_measured

USAGE, ENVIRONMENT = 2, 3

GOOD_LOAD = '[[load]]\nmodel = "closed"\nlevels = [2]\nduration_s = 1\n'


class Ran(subprocess.CompletedProcess):
    started: int  # processes the command started (its descendants, each counted once)
    engine_runs: int  # of them, runs of the engine (its version, the plans' check)


def _logging_engine(folder: Path, then: str) -> Path:
    """An engine that writes a line for each run of it, then does `then` (no process of its
    own: `echo` is the shell's, and `exec` replaces it)."""
    engine = folder / "wsgibench-engine"
    engine.write_text(f'#!/bin/sh\necho "$*" >> {folder / "runs.log"}\n{then}\n')
    engine.chmod(0o755)
    return engine


def _wsgibench(*args: str, env: dict[str, str] | None = None) -> Ran:
    """The command's result, with how many processes it started while it ran and how many of
    those were the engine (through a logging wrapper of the real one, unless `env` names one)."""
    folder = Path(tempfile.mkdtemp(prefix="bad-input-"))
    wrapper = _logging_engine(folder, f'exec {find_engine()} "$@"')
    env = {"WSGIBENCH_ENGINE": str(wrapper), **(env or {})}
    watch = DeathWatch(lambda: [os.getpid()])  # this test's tree: the command and what it forks
    watch.start()
    try:
        proc = subprocess.run(
            cli(*args), capture_output=True, text=True, timeout=60, env={**os.environ, **env}
        )
    finally:
        seen = watch.stop()
    if seen.source != "kernel process events":
        pytest.fail(f"counting the processes a command starts needs the kernel's process events "
                    f"(CAP_NET_ADMIN): here {seen.source}")  # fmt: skip
    ran = Ran(proc.args, proc.returncode, proc.stdout, proc.stderr)
    ran.started = seen.appeared - 1  # less the command itself
    log = Path(env["WSGIBENCH_ENGINE"]).parent / "runs.log"
    ran.engine_runs = len(log.read_text().splitlines()) if log.exists() else 0
    shutil.rmtree(folder, ignore_errors=True)
    return ran


def _one_line_error(proc: Ran, code: int, *needles: str) -> str:
    """One line, the exit code, and no server started: every process the command started was a
    run of the engine (its version asked, its plans checked), or it started none."""
    err = proc.stderr.strip()
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    assert proc.started == proc.engine_runs, (proc.started, proc.engine_runs, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _study(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "args, needles",
    [
        (["run", "quik"], ["unknown study 'quik'", "did you mean 'quick'"]),
        (["run", "quick", "--servers", "nginx-baselin"], ["did you mean 'nginx-baseline'"]),
        (["run", "quick", "--servers", "fault-hnag"], ["did you mean 'fault-hang'"]),
        (["check", "gunicron-sync"], ["did you mean 'gunicorn-sync'"]),
        (["run", "absent/study.toml"], ["study file absent/study.toml does not exist"]),
        (
            ["run", "quick", "--levels=-5"],
            ["--levels item 1 must be a number > 0, not -5"],
        ),
        (["run", "quick", "--levels", "ten"], ["--levels: cannot read 'ten'"]),
        (["run", "quick", "--repeats", "0"], ["--repeats must be an integer ≥ 1, not 0"]),
        (["run", "quick", "--duration", "-1"], ["--duration must be a number > 0, not -1"]),
    ],
    ids=[
        "study",
        "server",
        "fault",
        "check",
        "file",
        "negative-level",
        "levels-text",
        "repeats",
        "duration",
    ],
)
def test_bad_names_and_parameters(args, needles, tmp_path):
    _one_line_error(
        _wsgibench(*args, "--results", str(tmp_path / "r.sqlite"))
        if args[0] == "run"
        else _wsgibench(*args),
        USAGE,
        *needles,
    )
    assert not (tmp_path / "r.sqlite").exists()  # refused before anything was created


@pytest.mark.parametrize(
    "body, needles",
    [
        (
            'name = "x"\nservers = ["wsgiref"]\n[[load]]\nmodel = "closed"\nlevels = [1, 2\n'
            "duration_s = 1\n",
            ["s.toml", "malformed TOML", "line 6"],
        ),
        (
            'name = "x"\nservers = ["wsgiref"]\n[[load]]\nmodel = "rate"\nlevels = [-50]\n'
            "duration_s = 1\n",
            ["s.toml [[load]] #1: levels item 1 must be a number > 0, not -50"],
        ),
        (
            'servers = ["wsgiref"]\nserver_cpus = [0, 4096]\n' + GOOD_LOAD,
            ["server_cpus names CPU 4096, but this machine has CPUs"],
        ),
        ('servers = ["wsgiref"]\nrepeats = -1\n' + GOOD_LOAD, ["s.toml: repeats must be"]),
        ('servers = ["wsgiref"]\nerror_threshold = 3\n' + GOOD_LOAD, ["error_threshold"]),
        ('servers = ["wsgiref"]\nmemory_limit_mb = -4\n' + GOOD_LOAD, ["memory_limit_mb"]),
        (
            'servers = ["wsgiref"]\nserverz = 1\n' + GOOD_LOAD,
            ['unknown key serverz (did you mean "servers"?)'],
        ),
        (
            'servers = ["wsgiref"]\n[[load]]\nmodel = "closed"\nlevels = [2]\n',
            ["model closed needs duration_s"],
        ),
        (
            'servers = ["wsgiref"]\n[[load]]\nmodel = "rate"\nlevels = [2]\nduration_s = -3\n',
            ["duration_s must be a number > 0, not -3"],
        ),
    ],
    ids=[
        "toml",
        "negative-rate",
        "cpus",
        "repeats",
        "threshold",
        "memory",
        "unknown-key",
        "missing-key",
        "negative-duration",
    ],
)
def test_bad_study_files(body, needles, tmp_path):
    _one_line_error(
        _wsgibench("run", _study(tmp_path, body), "--results", str(tmp_path / "r.sqlite")),
        USAGE,
        *needles,
    )


def test_engine_missing(tmp_path):
    proc = _wsgibench(
        "run",
        "quick",
        "--results",
        str(tmp_path / "r.sqlite"),
        env={"WSGIBENCH_ENGINE": str(tmp_path / "no-engine")},
    )
    _one_line_error(proc, ENVIRONMENT, "WSGIBENCH_ENGINE=", "not an executable file")


@pytest.mark.parametrize(
    "prints, needles",
    [
        (
            '{"protocol_version": 99, "engine_version": "9.9"}',
            ["speaks engine protocol 99", "this wsgibench speaks 1", "reinstall"],
        ),
        ("garbage", ["does not answer `version`"]),
    ],
    ids=["other-protocol", "garbage"],
)
def test_engine_of_another_protocol(prints, needles, tmp_path):
    fake = _logging_engine(tmp_path, f"printf '%s\\n' '{prints}'")  # printf: the shell's own
    proc = _wsgibench(
        "run", "quick", "--results", str(tmp_path / "r.sqlite"), env={"WSGIBENCH_ENGINE": str(fake)}
    )
    _one_line_error(proc, ENVIRONMENT, str(fake), *needles)
    assert proc.engine_runs == 1  # asked for its version, and nothing after it


def test_store_of_unknown_schema(tmp_path):
    path = tmp_path / "future.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    for args in (["show", str(path)], ["run", "quick", "--results", str(path)]):
        _one_line_error(_wsgibench(*args), ENVIRONMENT, "schema version 99", "reads version 1 only")


def test_store_that_is_not_sqlite(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is no database " * 20)
    _one_line_error(_wsgibench("show", str(path)), ENVIRONMENT, "is not a wsgibench results store")
    _one_line_error(
        _wsgibench("show", str(tmp_path / "absent.sqlite")), ENVIRONMENT, "no results store"
    )


def test_non_loopback_target_needs_the_flag():
    """Only the engine takes a target; outside loopback it refuses without --allow-remote."""
    proc = subprocess.run(
        [str(find_engine()), "run", "--url", "http://192.0.2.1:80/", "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == USAGE
    assert proc.stderr.strip().splitlines() == [
        "wsgibench-engine: bad plan: target 192.0.2.1:80 is outside loopback; refusing without "
        "allow_remote / --allow-remote"
    ]


def test_port_in_use_is_a_clear_start_up_failure(tmp_path):
    """wsgibench picks its ports; a server that finds its port taken fails start-up clearly, after
    retries on fresh ports, and the study goes on (fault-port)."""
    study = _study(
        tmp_path,
        'servers = ["fault-port", "fault-slow"]\nrepeats = 1\n'
        'random_order = false\n[[load]]\nmodel = "closed"\nlevels = [2]\n'
        "duration_s = 0.5\nwarmup_s = 0\n",
    )
    proc = _wsgibench("run", study, "--results", str(tmp_path / "r.sqlite"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    store = Store(tmp_path / "r.sqlite", create=False)
    port, slow = store.cells(store.study()["id"])
    assert port.status == "disqualified" and port.reason.startswith("server did not start: ")
    assert port.reason.endswith("Address already in use (tried 3 fresh ports)"), port.reason
    expect_measured(slow)
