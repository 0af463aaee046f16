"""A server at any release: `gunicorn-gthread@19.9.0` is the gunicorn-gthread recipe with its
project's distribution pinned at 19.9.0, in a venv of its own from a lock of its own (the one
committed beside the recipe, `ENV@VERSION.lock`, else one `wsgibench lock` or the first install
writes under $WSGIBENCH_HOME/locks). A recipe states the releases its command line is written for
(`versions`, a PEP 440 specifier); one outside them is unavailable, said so, like any entry that
cannot run here."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from wsgibench.errors import UsageError
from wsgibench.machine import locks
from wsgibench.paths import home
from wsgibench.servers import fronts
from wsgibench.servers.recipe import ServerRecipe


def split(name: str) -> tuple[str, str | None]:
    """`server@version` -> (server, version); a plain name -> (name, None); a server behind nginx
    (`server@version+nginx`) as its server; a second entry (`server@version#b`) as the first."""
    base, at, version = fronts.split(name.partition("#")[0])[0].partition("@")
    if not at:
        return base, None
    if not base or not version:
        raise UsageError(f"{name!r}: a server at a release is written SERVER@VERSION")
    return base, version


def locks_dir() -> Path:
    return home() / "locks"


def at_version(recipe: ServerRecipe, version: str) -> ServerRecipe:
    """The recipe with its distribution pinned at `version`, its venv and lock its own."""
    env, dist = recipe.env, recipe.version_of
    if env is None or not env.requirements or dist is None:
        raise UsageError(f"{recipe.name}@{version}: {recipe.name} has no release of its own to pin")
    try:
        Version(version)
    except InvalidVersion:
        raise UsageError(f"{recipe.name}@{version}: {version!r} is not a release number") from None
    pinned, no_deps = _pinned(env.requirements, dist, version), _pinned(env.no_deps, dist, version)
    if pinned == env.requirements and no_deps == env.no_deps:  # not named: added
        pinned = (*env.requirements, f"{dist}=={version}")
    pinned += tuple(
        need for span, need in env.release_needs if Version(version) in SpecifierSet(span)
    )
    committed = (env.lock.parent / f"{env.name}@{version}.lock") if env.lock else None
    lock = (
        committed
        if committed and committed.exists()
        else locks_dir() / f"{env.name}@{version}.lock"
    )
    versioned_env = replace(
        env,
        name=f"{env.name}@{version}",
        requirements=pinned,
        no_deps=no_deps,
        lock=lock,
        lock_on_install=True,
    )
    out = replace(recipe, name=f"{recipe.name}@{version}", env=versioned_env)
    if recipe.versions and Version(version) not in SpecifierSet(recipe.versions):
        why = (
            f"{recipe.name}'s command line is written for {dist} {recipe.versions}; "
            f"{version} is outside it"
        )
        out = replace(out, unavailable=why)
    return out


def _pinned(requirements: tuple[str, ...], dist: str, version: str) -> tuple[str, ...]:
    """The requirements with the one naming `dist` pinned at `version`."""
    return tuple(
        f"{dist}=={version}" if locks.normalise(Requirement(r).name) == locks.normalise(dist) else r
        for r in requirements
    )
