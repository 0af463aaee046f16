"""Locked server environments: every package of a server's venv pinned with its hashes (uv pip
compile), committed beside the recipe; installs take exactly that, and the lock's hash is stored."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from wsgibench.errors import EnvironmentProblem

# `name==version \` then `--hash=sha256:...` lines (uv's and pip-tools' format).
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)", re.M)
HEADER = "# wsgibench lock: every package of this server's venv, with hashes ({what})\n"


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[str, str]:
    """The lock's packages: distribution name (normalised) -> version."""
    return {normalise(name): version for name, _, version in _PIN.findall(lock.read_text())}


def digest(lock: Path | None) -> str | None:
    """The lock's SHA-256 (what the store records per cell), or None without a lock."""
    if lock is None or not lock.exists():
        return None
    return hashlib.sha256(lock.read_bytes()).hexdigest()


def check_installed(lock: Path, packages: dict[str, str]) -> None:
    """Every locked package is installed at its locked version (else the env is not the lock's)."""
    wrong = [
        f"{name} {version} (locked) vs {packages.get(name, 'missing')}"
        for name, version in pins(lock).items()
        if packages.get(name) != version
    ]
    if wrong:
        raise EnvironmentProblem(f"venv does not match {lock.name}: {'; '.join(wrong[:3])}")


def compile_lock(
    uv: str,
    python: str,
    requirements: tuple[str, ...],
    no_deps: tuple[str, ...],
    out: Path,
    env: dict[str, str],
) -> None:
    """Resolve the requirements (and, without their dependencies, the no-deps ones) for this
    Python and write them with every file's hash."""
    parts = []
    for reqs, extra in ((requirements, []), (no_deps, ["--no-deps"])):
        if not reqs:
            continue
        argv = [
            uv,
            "pip",
            "compile",
            "-",
            "--generate-hashes",
            "--no-header",
            "--no-annotate",
            "--python",
            python,
            *extra,
        ]
        proc = subprocess.run(
            argv, input="\n".join(reqs) + "\n", capture_output=True, text=True, env=env
        )
        if proc.returncode != 0:
            raise EnvironmentProblem(
                f"locking {', '.join(reqs)} failed: "
                f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}"
            )
        parts.append(proc.stdout)
    try:
        # A pinned release's lock goes under wsgibench's home, which a new machine lacks.
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(HEADER.format(what=_what(requirements, no_deps)) + "".join(parts))
    except OSError as e:
        raise EnvironmentProblem(f"cannot write the lock {out}: {e.strerror or e}") from e


def _what(requirements: tuple[str, ...], no_deps: tuple[str, ...]) -> str:
    return " + ".join(
        filter(None, [" ".join(requirements), " ".join(f"{r} (no deps)" for r in no_deps)])
    )


def locks_these(lock: Path, requirements: tuple[str, ...], no_deps: tuple[str, ...]) -> bool:
    """The lock exists and was written for exactly these requirements (its first line says)."""
    if not lock.exists():
        return False
    with lock.open() as f:
        return f.readline() == HEADER.format(what=_what(requirements, no_deps))
