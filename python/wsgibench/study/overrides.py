"""The command line's changes to a study (`run --servers --levels --duration --repeats --starts
--app-env --full --server-cpus ...`): each value checked against the key it changes, with an error that
names the option, and a line per change, stored with the run and shown in its report."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.errors import UsageError
from wsgibench.machine.topology import parse_cpulist
from wsgibench.servers import resolve
from wsgibench.study.apps import APPS
from wsgibench.study.full import apply_full
from wsgibench.study.kinds import Bad, Int, Kind, ListOf, Number
from wsgibench.study.model import (
    Study,
    parse_study,
    read_raw,
    shown_path,
    study_base,
    study_path,
)


@dataclass(frozen=True)
class Overrides:
    """What `wsgibench run` was told beside the study's name; None: the study's own."""

    servers: str | None = None
    ceiling: bool = True  # keep the study's nginx ceiling when --servers replaces its servers
    repeats: int | None = None
    starts: int | None = None
    duration: float | None = None
    levels: str | None = None
    app_env: tuple[str, ...] = ()
    server_cpus: str | None = None
    engine_cpus: str | None = None
    full: bool = False
    versions: str | None = None  # "seed": each server also at its seed's release (seed_versions)
    cluster: str | None = None
    load_hosts: int | None = None
    server_host: str | None = None
    app: str | None = None  # one's own app (`--app module:callable`), relative to the cwd
    path: str | None = None  # `--path /api/items`: the one request, with --expect-status
    expect_status: int | None = None
    requirements: str | None = None  # one's own app's dependencies, relative to the cwd
    app_asgi: str | None = None  # its ASGI side, when `app` is its WSGI one

    def table(self, raw: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
        """The study's table with these changes, and a line for each change (in option order)."""
        out, said = dict(raw), []
        if self.full:
            out = apply_full(out, where)
            said.append("--full")
        out, said = self._servers(out, said)
        out, said = self._versions(out, said, where)
        if self.repeats is not None:
            _option("--repeats", self.repeats, _REPEATS)
            out["repeats"] = self.repeats
            out["trim"] = min(int(raw.get("trim", 0)), max(0, (self.repeats - 1) // 2))
            said.append(f"--repeats {self.repeats}")
        if self.starts is not None:
            out["starts"] = _option("--starts", self.starts, _REPEATS)
            said.append(f"--starts {self.starts}")
        out, said = self._loads(out, said)
        for key, value in (("server_cpus", self.server_cpus), ("engine_cpus", self.engine_cpus)):
            if value:
                out[key] = _cpus(value, f"--{key.replace('_', '-')}")
                said.append(f"--{key.replace('_', '-')} {value}")
        if self.cluster is not None or self.load_hosts is not None:
            out.update(cluster=self.cluster, load_hosts=self.load_hosts)  # replaces the study's
            said.append(
                f"--cluster {self.cluster}" if self.cluster else f"--load-hosts {self.load_hosts}"
            )
        if self.server_host is not None:
            out["server_host"] = self.server_host
            said.append(f"--server-host {self.server_host}")
        return self.app_table(out, said)

    def app_table(self, out: dict[str, Any], said: list[str]) -> tuple[dict[str, Any], list[str]]:
        """The table with the app, its settings, requirements and one request as given (`--app-env
        --app --app-asgi --requirements --path --expect-status`, for `run` and `tune` alike). An
        app other than the study's leaves out what the study says of its own (APP_BOUND)."""
        left = [k for k in APP_BOUND if k in out] if self.replaces(out) else []
        if self.app_env:
            kept = {} if left else out.get("app_env", {})
            out["app_env"] = {**kept, **_pairs(self.app_env)}
            said += [f"--app-env {pair}" for pair in self.app_env]
        if self.app is not None:
            old = out.get("app", "pong")
            gone = f" (the study's {', '.join(left)} for its app {old!r} left out)"
            said.append(f"--app {self.app}" + (gone if left else ""))
            if self.replaces(out) and out.get("description"):  # it describes the study's app
                out["description"] += f" (run here on {self.app}, not {old}: --app)"
            if self.replaces(out):
                out, gone = self._study_app_loads(out, old)
                said[-1] += f" (left out, loads {gone})" if gone else ""
            for key in left:
                if key != "app_env" or not self.app_env:  # --app-env's own pairs stay
                    out.pop(key)
            out["app"] = self.app
        if self.app_asgi is not None:
            if out.get("app", "pong") in APPS:
                raise UsageError("--app-asgi is the ASGI side of your own app: give --app too")
            out["app_asgi"] = self.app_asgi
            said.append(f"--app-asgi {self.app_asgi}")
        if self.requirements is not None:
            out["requirements"] = str(_requirements(self.requirements, out.get("app", "pong")))
            said.append(f"--requirements {self.requirements}")
        if self.expect_status is not None and self.path is None:
            raise UsageError("--expect-status goes with --path: the request it judges")
        if self.path is not None:
            if not self.path.startswith("/"):
                raise UsageError(f"--path must start with /, not {self.path!r}")
            status = self.expect_status if self.expect_status is not None else 200
            out["requests"] = [{"name": "path", "path": self.path, "expect": {"status": status}}]
            said.append(f"--path {self.path} --expect-status {status}")
        return out, said

    def _study_app_loads(self, out: dict[str, Any], old: str) -> tuple[dict[str, Any], str]:
        """Without the loads that are not the study's app's to give to another: a load naming an
        app of its own (the frameworks study's), or a database the new app does not use; and
        those left out, in words."""
        spec = APPS.get(str(self.app))
        uses_db = spec is not None and spec.database is not None
        out, apps = _loads_kept(out, lambda load: "app" not in load)
        out, dbs = _loads_kept(out, lambda load: uses_db or "database" not in load)
        words = [f"of apps of their own: {', '.join(apps)}"] if apps else []
        words += [f"on a database for {old!r}: {', '.join(dbs)}"] if dbs else []
        if not words or out.get("load"):
            return _renamed(out, old, "app"), "; ".join(words)
        study, given = out.get("name", "the study"), f"--app {self.app}: every load of"
        if apps:
            raise UsageError(
                f"{given} {study} measures an app of its own ({', '.join(apps + dbs)}), not "
                "yours; run it with a study whose loads name no app"
            )
        raise UsageError(
            f"{given} {study} measures its app {old!r} on a database wsgibench starts "
            f"({', '.join(dbs)}), which your app does not use; run it with a study whose loads "
            "name no database (wsgibench studies)"
        )

    def replaces(self, raw: dict[str, Any]) -> bool:
        """Whether `--app` names another app than the study's: that app's own keys then go."""
        return self.app is not None and self.app != raw.get("app", "pong")

    def _servers(self, out: dict[str, Any], said: list[str]) -> tuple[dict[str, Any], list[str]]:
        if not self.servers:
            return out, said
        try:
            names = resolve(split_list(self.servers, str, "--servers"))
        except UsageError as exc:
            raise UsageError(f"--servers: {exc}") from None
        kept = BASELINE in out.get("servers", []) and self.ceiling and BASELINE not in names
        out["servers"] = [BASELINE, *names] if kept else names
        settings = out.get("server_settings")
        if isinstance(settings, dict):  # the seed's settings of the servers that stay
            out["server_settings"] = {k: v for k, v in settings.items() if k in out["servers"]}
        out, gone = _loads_kept(out, lambda load: _runs_on(load, out["servers"]))
        notes = ["the nginx ceiling kept"] if kept else []
        notes += [f"left out, loads on none of them: {', '.join(gone)}"] if gone else []
        said.append(f"--servers {self.servers}" + (f" ({'; '.join(notes)})" if notes else ""))
        if not out.get("load") and gone:
            raise UsageError(
                f"--servers {self.servers}: every load of {out.get('name', 'the study')} names "
                "its own servers, none of them among these"
            )
        return out, said

    def _versions(
        self, out: dict[str, Any], said: list[str], where: str
    ) -> tuple[dict[str, Any], list[str]]:
        """--versions seed: beside each server the study's seed_versions name, that server at
        the seed's release (`uwsgi-http11@2.0.17.1`), which shares its seed settings."""
        if self.versions is None:
            return out, said
        seed = out.get("seed_versions") or {}
        if not isinstance(seed, dict) or not seed:
            raise UsageError(
                f"--versions seed: {where} names no seed_versions (a seed study without them has "
                "no seed release that builds and runs here; its deviations say why)"
            )
        servers: list[str] = []
        for name in out.get("servers", []):
            servers += [name, f"{name}@{seed[name]}"] if name in seed else [name]
        added = [s for s in servers if "@" in s]
        if not added:
            raise UsageError("--versions seed: none of the servers run has a seed version")
        out["servers"] = servers
        said.append(f"--versions seed ({', '.join(added)})")
        return out, said

    def _loads(self, out: dict[str, Any], said: list[str]) -> tuple[dict[str, Any], list[str]]:
        if self.duration is None and not self.levels:
            return out, said
        levels = None
        if self.duration is not None:
            _option("--duration", self.duration, _DURATION)
            said.append(f"--duration {self.duration:g}")
        if self.levels:
            levels = _option("--levels", split_list(self.levels, float, "--levels"), _LEVELS)
            said.append(f"--levels {self.levels}")
        loads = []
        for load in out.get("load", []):
            load = dict(load)
            if self.duration is not None and "duration_s" in load:
                load["duration_s"] = self.duration
            if levels:  # a replay's levels are its speeds
                load["speed" if load.get("model") == "replay" else "levels"] = levels
            loads.append(load)
        out["load"] = loads
        return out, said


# What a study says of its app, which goes with it when `--app` names another: the request mix
# and probe judge that app's replies, app_env sets it, the rest find and install it.
APP_BOUND = ("app_asgi", "interface", "requirements", "app_workdir", "probe", "requests", "app_env")

_REPEATS: Kind = Int(low=1)
_DURATION: Kind = Number(low=0, above=True)
_LEVELS: Kind = ListOf(Number(low=0, above=True))


def _option(option: str, value: Any, kind: Kind) -> Any:
    try:
        return kind.read(value)
    except Bad as exc:
        raise UsageError(f"{option} {exc}") from None


def split_list(value: str, cast: type, option: str) -> list[Any]:
    """A comma-separated option's values (`--levels 64,512`), each read by `cast`."""
    try:
        return [cast(v.strip()) for v in value.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{option}: cannot read {value!r} as a comma-separated list") from None


def _loads_kept(out: dict[str, Any], keep: Any) -> tuple[dict[str, Any], list[str]]:
    """The table with only the loads `keep` accepts (and their [full.load] tables), and the names
    of the others."""
    loads = out.get("load", [])
    if not isinstance(loads, list):  # the study's reading says what is wrong with it
        return out, []
    stays = [not isinstance(load, dict) or keep(load) for load in loads]
    gone = [str(load.get("name", "?")) for load, s in zip(loads, stays, strict=True) if not s]
    if not gone:
        return out, gone
    out = {**out, "load": [load for load, s in zip(loads, stays, strict=True) if s]}
    return _full_tables(
        out, lambda tables: {k: v for k, v in tables.items() if k not in gone}
    ), gone


def _renamed(out: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A load named after the study's app (the frameworks study's `pong`) named `new` once
    another app takes its place (and its [full.load] table with it), unless `new` is taken."""
    loads = out.get("load", [])
    if not isinstance(loads, list):
        return out
    named = [isinstance(load, dict) and load.get("name") == old for load in loads]
    names = [load.get("name") for load in loads if isinstance(load, dict)]
    if not any(named) or new in names:
        return out
    out = {
        **out,
        "load": [{**ld, "name": new} if n else ld for ld, n in zip(loads, named, strict=True)],
    }
    return _full_tables(
        out, lambda tables: {(new if k == old else k): v for k, v in tables.items()}
    )


def _full_tables(out: dict[str, Any], change: Any) -> dict[str, Any]:
    """The table with its [full.load.NAME] tables changed as the loads were (left out, renamed)."""
    full = out.get("full")
    if isinstance(full, dict) and isinstance(full.get("load"), dict):
        out = {**out, "full": {**full, "load": change(full["load"])}}
    return out


def _runs_on(load: dict[str, Any], servers: list[str]) -> bool:
    """Whether a load runs on one of these servers (a load naming none runs on all; one whose
    names do not resolve is kept, for the study's reading to say so)."""
    named = load.get("servers")
    if not isinstance(named, list) or not named:
        return True
    try:
        return bool(set(resolve([str(n) for n in named])) & set(servers))
    except UsageError:
        return True


def _pairs(items: tuple[str, ...]) -> dict[str, str]:
    pairs = [item.partition("=") for item in items]
    bad = [k for k, sep, _ in pairs if not sep or not k]
    if bad:
        raise UsageError(f"--app-env takes KEY=VALUE, not {bad[0]!r}")
    return {k: v for k, _, v in pairs}


def _requirements(given: str, app: str) -> Path:
    """`--requirements FILE` made absolute against the working directory, for one's own app."""
    if app in APPS:
        raise UsageError(
            f"--requirements is for your own app (--app module:callable); {app!r} is built in"
        )
    path = (Path.cwd() / given).resolve()
    if not path.is_file():
        raise UsageError(f"--requirements: {path} is not a file")
    return path


def _cpus(value: str, option: str) -> list[int]:
    try:
        return parse_cpulist(value)
    except ValueError:
        raise UsageError(f"{option}: cannot read {value!r} as CPUs (e.g. 0-3,8)") from None


def load_with(name_or_path: str, changes: Overrides) -> tuple[Study, list[str]]:
    """The study with the command line's changes, and the changes in words."""
    path = study_path(name_or_path)
    where = shown_path(Path(path))
    raw, said = changes.table(read_raw(path), where)
    base = study_base(Path(path))
    study = parse_study(raw, where, base, Path.cwd() if changes.app else base)
    return replace(study, changes=tuple(said)), said
