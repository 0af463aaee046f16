"""One venv per PythonEnv, built from its pinned requirements with uv (venv + pip as a fallback)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from wsgibench.errors import EnvironmentProblem
from wsgibench.machine import bytecode, locks
from wsgibench.paths import envs_dir

SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class PythonEnv:
    """A venv built from pinned requirements; recipes needing the same packages share one."""

    name: str
    requirements: tuple[str, ...]
    # Installed afterwards with --no-deps (meinheld pins an old greenlet it cannot build with).
    no_deps: tuple[str, ...] = ()
    # Constraints applied while building sdists (fastwsgi needs setuptools < 81).
    build_constraints: tuple[str, ...] = ()
    # mod_wsgi links against libpython: the venv must come from Debian's /usr/bin/python3.
    system_python: bool = False
    # Every package pinned with hashes (machine/locks.py; `wsgibench lock` writes it): when it
    # exists the venv is built from it, exactly.
    lock: Path | None = None
    # Write the lock first when it is missing (a server at a release of the user's choosing).
    lock_on_install: bool = False
    # What older releases need beside them, by release range: ((">=1,<20", "setuptools<81"),)
    # (servers/versions.py adds it to a server at a release in the range).
    release_needs: tuple[tuple[str, str], ...] = ()


_MARKER = "wsgibench-env.json"


@dataclass(frozen=True)
class InstalledEnv:
    path: Path
    python: Path
    packages: dict[str, str]  # distribution name (lower case) -> version

    def version(self, dist: str) -> str | None:
        return self.packages.get(_normalise(dist))


def _normalise(name: str) -> str:
    return locks.normalise(name)


def base_interpreter() -> str:
    """The interpreter wsgibench runs on, outside its own venv: servers' venvs are made from it."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _base_python(spec: PythonEnv) -> str:
    return SYSTEM_PYTHON if spec.system_python else base_interpreter()


def env_path(spec: PythonEnv) -> Path:
    key = json.dumps(
        [
            spec.requirements,
            spec.no_deps,
            spec.build_constraints,
            _base_python(spec),
            locks.digest(spec.lock),
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    return envs_dir() / f"{spec.name}-{digest}"


def installed(spec: PythonEnv) -> InstalledEnv | None:
    path = env_path(spec)
    marker = path / _MARKER
    if not marker.exists():
        return None
    try:
        done = json.loads(marker.read_text())
        packages = done["packages"]
    except (ValueError, KeyError):
        return None
    bytecode.ensure_compiled(marker, done, path / "bin" / "python", path / "lib")
    return InstalledEnv(path, path / "bin" / "python", packages)


def _lock_first(spec: PythonEnv) -> None:
    path = env_path(spec)  # without its lock yet: where a failure to lock is logged
    log = path.parent / f"{path.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    assert spec.lock is not None
    spec.lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_lock(spec)
    except EnvironmentProblem as exc:
        log.write_text(f"{exc}\n")
        raise


def failed_build(spec: PythonEnv) -> str | None:
    """The last lines of the env's last build when it did not finish (None: none failed)."""
    path = env_path(spec)
    log = path.parent / f"{path.name}.log"
    if (path / _MARKER).exists() or not log.exists():
        return None
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return " | ".join(lines[-3:])[:600] or None


def uv_binary() -> str | None:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def installer_env() -> dict[str, str]:
    """The environment for uv and pip. uv trusts its own bundled certificates unless told
    otherwise; behind a proxy whose CA only the system store holds it would fail where pip (which
    uses the system store) works, so it is told to use the system store too, unless the user chose."""
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    if "UV_SYSTEM_CERTS" not in env and "UV_NATIVE_TLS" not in env:
        env["UV_SYSTEM_CERTS"] = env["UV_NATIVE_TLS"] = "1"  # older uv reads the first name
    return env


def _run(argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    with log.open("a") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        tail = log.read_text().strip().splitlines()[-1:] or [""]
        raise EnvironmentProblem(
            f"`{' '.join(argv[:4])} …` failed ({tail[0][:200]}); full log: {log}"
        )


def install(spec: PythonEnv, force: bool = False) -> InstalledEnv:
    """Create (or reuse) the env; the marker file is written last so a broken build is redone. An
    env to be locked on install gets its lock first (a failure is logged where `failed_build`
    reads it)."""
    if spec.lock_on_install and spec.lock is not None:
        if not locks.locks_these(spec.lock, spec.requirements, spec.no_deps):
            _lock_first(spec)  # missing, or written for other requirements
    done = installed(spec)
    if done and not force:
        return done
    path = env_path(spec)
    base = _base_python(spec)
    if not Path(base).exists():
        raise EnvironmentProblem(
            f"{base} is missing: apt-get install python3 python3-venv python3-dev"
        )
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    log = path.parent / f"{path.name}.log"
    log.write_text("")
    python = path / "bin" / "python"
    uv = uv_binary()
    env = installer_env()
    if spec.build_constraints:
        constraints = path.parent / f"{path.name}.constraints.txt"
        constraints.write_text("\n".join(spec.build_constraints) + "\n")
        env["UV_BUILD_CONSTRAINT"] = str(constraints)
        env["PIP_CONSTRAINT"] = str(constraints)
    if uv:
        _run([uv, "venv", "--seed", "--python", base, str(path)], log, env)
        pip = [uv, "pip", "install", "--python", str(python)]
    else:
        _run([base, "-m", "venv", str(path)], log, env)
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    if spec.lock is not None and spec.lock.exists():  # exactly the lock: pinned, hashed
        _run([*pip, "--require-hashes", "--no-deps", "-r", str(spec.lock)], log, env)
    else:
        if spec.requirements:  # empty for the standard library's wsgiref
            _run([*pip, *spec.requirements], log, env)
        if spec.no_deps:
            _run([*pip, "--no-deps", *spec.no_deps], log, env)
    packages = _freeze(python)
    if spec.lock is not None and spec.lock.exists():
        locks.check_installed(spec.lock, packages)
    compiled = bytecode.compile_tree(python, path / "lib", log)
    (path / _MARKER).write_text(
        json.dumps(
            {
                "requirements": spec.requirements,
                "packages": packages,
                "lock_sha256": locks.digest(spec.lock),
                bytecode.COMPILED: compiled,
            }
        )
    )
    return InstalledEnv(path, python, packages)


def _freeze(python: Path) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m;"
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return {_normalise(k): v for k, v in json.loads(out.stdout).items() if k}


def python_version(env: InstalledEnv) -> str:
    """The interpreter version a venv was made from, read from its pyvenv.cfg."""
    try:
        for line in (env.path / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info"):
                return value.strip()
    except OSError:
        pass
    return "?"


def write_lock(spec: PythonEnv) -> Path:
    """(Re)write the env's lock for the interpreter its venv is made from."""
    uv = uv_binary()
    if uv is None or spec.lock is None:
        raise EnvironmentProblem(f"{spec.name}: locking needs uv and a lock path")
    locks.compile_lock(
        uv, _base_python(spec), spec.requirements, spec.no_deps, spec.lock, installer_env()
    )
    return spec.lock
