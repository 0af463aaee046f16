"""An app's own dependencies (requirements.txt or pyproject.toml): locked with hashes and installed
with uv into one folder per app and Python minor version beside the servers' venvs, put on the
server's path; a package the server's venv pins at another version is a conflict, named."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from wsgibench.errors import EnvironmentProblem
from wsgibench.machine import bytecode, locks
from wsgibench.machine.venvs import installer_env, uv_binary
from wsgibench.paths import home

_MARKER = "wsgibench-appdeps.json"
APP_HEADER = "# wsgibench lock: every package app {app} needs, with hashes ({what})\n"
# Installers' own packages: never a conflict between an app and a server.
_TOOLS = frozenset({"pip", "setuptools", "wheel"})


@dataclass(frozen=True)
class AppDeps:
    """An app's installed dependencies for one Python: the folder to put on the path, the lock it
    was installed from and that lock's hash (stored per cell), and every package in it."""

    site: Path
    lock: Path
    lock_sha256: str
    packages: dict[str, str]

    def conflicts(self, server: dict[str, str], server_name: str, app: str) -> list[str]:
        """Each package both pin at different versions, naming the app's pin and the server's."""
        return [
            f"app {app} pins {name}=={version} but server {server_name} pins {name}=={server[name]}"
            for name, version in sorted(self.packages.items())
            if name in server and server[name] != version and name not in _TOOLS
        ]


@cache
def python_minor(python: str) -> str:
    """'3.11' for an interpreter."""
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise EnvironmentProblem(f"{python} does not run: {out.stderr.strip()[-200:]}")
    return out.stdout.strip()


def folder(app: str, requirements: Path, lock: Path | None, python: str) -> Path:
    """Where an app's dependencies for this Python live: one folder per app (its name and what it
    requires) and Python minor version."""
    key = requirements.read_bytes() + (lock.read_bytes() if lock and lock.exists() else b"")
    digest = hashlib.sha256(key).hexdigest()[:10]
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in app)
    return home() / "apps" / f"{slug}-{digest}" / f"py{python_minor(python)}"


def installed(app: str, requirements: Path, lock: Path | None, python: str) -> AppDeps | None:
    where = folder(app, requirements, lock, python)
    try:
        done = json.loads((where / _MARKER).read_text())
    except (OSError, ValueError):
        return None
    bytecode.ensure_compiled(where / _MARKER, done, python, where / "site")
    return AppDeps(
        where / "site", where / "requirements.lock", done["lock_sha256"], done["packages"]
    )


def ensure(
    app: str, requirements: Path, lock: Path | None, python: str, shown: str = ""
) -> AppDeps:
    """The app's dependencies for this Python, locked (unless the app ships its lock) and
    installed exactly from the lock; reused while the requirements do not change. `shown`: the
    app as its user named it, for messages (else its name)."""
    said = shown or app
    done = installed(app, requirements, lock, python)
    if done is not None:
        return done
    uv = uv_binary()
    if uv is None:
        raise EnvironmentProblem(f"app {said}: installing its requirements needs uv")
    where = folder(app, requirements, lock, python)
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    target = where / "requirements.lock"
    if lock is not None and lock.exists():
        shutil.copyfile(lock, target)
    else:
        compile_lock(uv, app, requirements, python, target, shown=said)
    log = where / "install.log"
    argv = [uv, "pip", "install", "--python", python, "--target", str(where / "site")]
    argv += ["--require-hashes", "--no-deps", "-r", str(target)]
    with log.open("w") as out:
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=installer_env())
    if proc.returncode != 0:
        last = (log.read_text().strip().splitlines() or ["?"])[-1]
        raise EnvironmentProblem(f"app {said}: installing {requirements.name} failed: {last[:200]}")
    packages = locks.pins(target)
    digest = locks.digest(target) or ""
    compiled = bytecode.compile_tree(python, where / "site", log)
    marker = {"lock_sha256": digest, "packages": packages, bytecode.COMPILED: compiled}
    (where / _MARKER).write_text(json.dumps(marker))
    return AppDeps(where / "site", target, digest, packages)


def compile_lock(
    uv: str, app: str, requirements: Path, python: str, out: Path, shown: str = ""
) -> None:
    """Every package the requirements need on this Python, pinned with its hashes; the lock's
    header names the app by its name (part of the lock's hash), a message as `shown`."""
    argv = [uv, "pip", "compile", str(requirements), "--generate-hashes", "--no-header"]
    argv += ["--no-annotate", "--python", python, "-o", str(out)]
    # In the requirements' folder: the paths a requirements file or a pyproject names are its own.
    cwd = requirements.parent
    proc = subprocess.run(argv, capture_output=True, text=True, env=installer_env(), cwd=cwd)
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.strip().splitlines() if line.strip()]
        why = next((line for line in lines if "×" in line or "error" in line.lower()), "")
        why = why or (lines[-1] if lines else "?")
        raise EnvironmentProblem(
            f"app {shown or app}: its requirements ({requirements}) cannot be resolved: {why[:300]}"
        )
    text = out.read_text()
    out.write_text(APP_HEADER.format(app=app, what=requirements.name) + text)
