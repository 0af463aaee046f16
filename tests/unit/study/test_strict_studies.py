"""Each study-file mistake a newcomer makes is refused before anything starts, in one line naming
the file, the key and what is wrong (exit 2); the command line's changes name the option."""

from __future__ import annotations

import tomllib

import pytest

from wsgibench.errors import EXIT_USAGE, UsageError
from wsgibench.study.model import parse_study
from wsgibench.study.overrides import Overrides, load_with

RATE = {"name": "r", "model": "rate", "levels": [10], "duration_s": 1.0}
BASE = {"servers": ["wsgiref"], "load": [RATE]}


def _refused(change: dict, where: str = "my.toml") -> str:
    with pytest.raises(UsageError) as exc:
        parse_study({**BASE, **change}, where)
    text = str(exc.value)
    assert exc.value.exit_code == EXIT_USAGE and "\n" not in text and text.startswith(where)
    return text


@pytest.mark.parametrize(
    "change, needles",
    [
        ({"load": [{**RATE, "duration_s": "two"}]}, ["duration_s", '"two" (a string)', "> 0"]),
        (
            {"load": [{**RATE, "arrival": "posson"}]},
            ["arrival", "posson", 'did you mean "poisson"'],
        ),
        ({"load": [{**RATE, "http": 1.1}]}, ["http", "1.1 (a number)", '"1.0", "1.1"']),
        ({"repeats": "1"}, ["repeats", '"1" (a string)', "integer"]),
        ({"repeats": 0}, ["repeats", "≥ 1", "not 0"]),
        (
            {"load": [{"name": "c", "model": "closed", "levles": [1], "duration_s": 1}]},
            ["unknown key levles", 'did you mean "levels"'],
        ),
        ({"workers": "one"}, ["workers", '"auto" or an integer', '"one"']),
        ({"load": [{**RATE, "think_s": 1}]}, ["think_s is not a key of model rate"]),
        ({"load": [{"model": "sessions", "levels": [1], "duration_s": 1}]}, ["needs requests"]),
        ({"error_threshold": 2}, ["error_threshold", "≤ 1"]),
        ({"tcp_nodelay": "yes"}, ["tcp_nodelay", "true or false"]),
        ({"server_host": "example.org"}, ["server_host", "IP address"]),
        ({"levels": [1]}, ["unknown key levels"]),
        ({"requests": [{"path": "/", "expect": {"status": 200, "bdy": "x"}}]}, ["expect.bdy"]),
        ({"requests": [{"path": "/", "expect": {"body": "x"}}]}, ["expect.status is required"]),
        ({"server_settings": {"wsgiref": {"workrs": 2}}}, ["server_settings.wsgiref.workrs"]),
        ({"server_settings": {"bjoern": {"workers": 2}}}, ["not a server of the study"]),
        ({"full": {"load": {"nope": {"levels": [1]}}}}, ["[full.load.nope]"]),
        ({"full": {"repeats": "x"}}, ["full.repeats"]),
        ({"servers": ["gunicorn"]}, ["gunicorn-sync", "gunicorn-gthread", "'gunicorn-*'"]),
        ({"servers": ["nginx-baselin"]}, ["did you mean 'nginx-baseline'"]),
        ({"servers": ["zz-*"]}, ["matches no server"]),
        ({"app": "myap"}, ["app", "unknown app"]),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(change, needles):
    text = _refused(change)
    for needle in needles:
        assert needle in text, (needle, text)


def test_a_glob_names_a_family_and_star_every_entry():
    study = parse_study({**BASE, "servers": ["gunicorn-*", "bjoern", "gunicorn-sync"]}, "t")
    assert study.servers[-1] == "bjoern" and "gunicorn-sync" in study.servers
    assert len(study.servers) == len(set(study.servers)) and len(study.servers) >= 6


@pytest.mark.parametrize(
    "changes, needles",
    [
        (Overrides(levels="-5"), ["--levels", "item 1", "> 0", "-5"]),
        (Overrides(levels="ten"), ["--levels", "'ten'"]),
        (Overrides(duration=0), ["--duration", "> 0"]),
        (Overrides(repeats=0), ["--repeats", "≥ 1"]),
        (Overrides(servers="gunicorn"), ["--servers", "'gunicorn-*'"]),
        (Overrides(app_env=("NOEQUALS",)), ["--app-env", "KEY=VALUE"]),
        (Overrides(server_cpus="a-b"), ["--server-cpus"]),
    ],
)
def test_a_bad_option_is_named_not_the_builtin_file(changes, needles):
    with pytest.raises(UsageError) as exc:
        load_with("quick", changes)
    text = str(exc.value)
    assert "site-packages" not in text and "quick.toml" not in text, text
    for needle in needles:
        assert needle in text, (needle, text)


def test_servers_keep_the_ceiling_unless_told_and_the_changes_are_said():
    kept, said = load_with("quick", Overrides(servers="bjoern", levels="64", repeats=1))
    assert kept.servers == ("nginx-baseline", "bjoern")
    assert said == ["--servers bjoern (the nginx ceiling kept)", "--repeats 1", "--levels 64"]
    assert kept.changes == tuple(said) and kept.loads[0].levels == (64.0,) and kept.repeats == 1
    alone, _ = load_with("quick", Overrides(servers="bjoern", ceiling=False))
    assert alone.servers == ("bjoern",)
    # the seed's settings of the servers left out go with them
    seed, _ = load_with("goldberg2016", Overrides(servers="bjoern,uwsgi-http"))
    assert set(seed.server_settings) == {"bjoern", "uwsgi-http"}


def test_full_size_is_checked_even_when_not_asked_for():
    with pytest.raises(UsageError, match=r"full\.load\.closed\.duration_s"):
        parse_study({**BASE, "load": [{**RATE, "name": "closed"}],
                     "full": {"load": {"closed": {"duration_s": "long"}}}}, "t")  # fmt: skip


def test_the_study_file_is_parsed_once_with_the_changes(monkeypatch: pytest.MonkeyPatch):
    parsed: list[str] = []
    loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or loads(text))
    study, _ = load_with("goldberg2016", Overrides(full=True, servers="bjoern", repeats=1))
    assert len(parsed) == 1 and study.repeats == 1
