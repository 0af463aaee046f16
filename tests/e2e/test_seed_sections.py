"""Every seed study at a small size, through the installed script: its section against the seed
judges every claim of its seed file, no verdict rests on a cell that was not measured cleanly
(invalid, contended, engine-saturated or disqualified), checked against the store's own cells, no
rank verdict rests on fewer servers than the seed ranked, and every number says whose it is. (That
every finding of the seeds is claimed or listed as not claimed is read from the claims files alone,
in tests/unit/results/test_seed_coverage.py.)"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from wsgibench.report.data import load_report_data
from wsgibench.report.seed import against_seed
from wsgibench.results.seed_claims import NUMBER_KEYS, RANKS, TRENDS, claims
from wsgibench.results.seed_verdicts import ERROR_KINDS, ERROR_METRICS
from wsgibench.results.store import Store
from wsgibench.study.model import study_path

from .helpers import cli, require
from .quiet import skip_if_contended

SMALL = {
    "goldberg2016": ["--servers", "bjoern,cheroot,uwsgi-http", "--levels", "20,200"],
    "seed003": [
        "--servers",
        "uwsgi-http11,uwsgi-http11-base,uwsgi-http-keepalive,cheroot",
        "--levels",
        "20,200",
    ],
    "piel2010": ["--servers", "wsgiref,cheroot", "--levels", "200,400"],
    "tornado2015": [
        "--servers",
        "tornado-native-sync,tornado-native-async",
        "--app-env",
        "WSGIBENCH_SLEEP_S=0.02",
    ],
    "tornado2015-mixed": [
        "--servers",
        "tornado-native-sync,tornado-native-async",
        "--app-env",
        "WSGIBENCH_SLEEP_S=0.02",
    ],
    "db2011": ["--servers", "gevent-pywsgi,uwsgi-http"],
    "db2011-hello": ["--servers", "php-fpm-nginx,uwsgi-http,gevent-pywsgi,tornado-wsgi"],
    # sessions of 13 requests 5 s apart last a minute: the study's own file with shorter sessions,
    # at the seed's 500 users a second (its claims are at 500: a run without it reads no cell)
    "piel2010-c10k": [
        "--servers",
        "gevent-pywsgi,tornado-wsgi,uwsgi-nginx",
        "--levels",
        "500",
    ],
}
UNTRUSTED = {"contended", "engine-saturated"}


def _short_c10k(tmp: Path) -> str:
    raw = tomllib.loads(study_path("piel2010-c10k").read_text())
    load = raw["load"][0]
    out = [f'name = "{raw["name"]}"', f'app = "{raw["app"]}"', "repeats = 1"]
    out += [f"servers = {raw['servers']!r}".replace("'", '"'), "", "[[load]]"]
    load.update(duration_s=2.0, requests=3, think_s=0.2)
    out += [f"{k} = {v!r}".replace("'", '"').replace("True", "true") for k, v in load.items()]
    path = tmp / "piel2010-c10k.toml"
    path.write_text("\n".join(out) + "\n")
    return str(path)


@pytest.mark.parametrize("study", list(SMALL))
def test_seed_section_rests_on_trusted_cells_only(study: str, tmp_path: Path):
    args = SMALL[study]
    for name in args[args.index("--servers") + 1].split(","):
        require(name)
    store_path = tmp_path / "s.sqlite"
    target = _short_c10k(tmp_path) if study == "piel2010-c10k" else study
    argv = cli("run", target, *args, "--no-ceiling", "--results", str(store_path))
    argv += ["--no-report", "--no-install"]
    if study != "piel2010-c10k":
        argv += ["--repeats", "1"]
    if study in ("goldberg2016", "seed003"):
        argv += ["--duration", "1"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=420)
    assert proc.returncode == 0, proc.stderr[-2000:]
    store = Store(store_path, create=False, read_only=True)
    data = load_report_data(store)
    section = against_seed(data)
    assert section is not None
    assert [v.claim.id for v in section.verdicts] == [c.id for c in claims(study).claims]
    cells = {(c.load, c.server, c.level): c for c in store.cells(data.meta.id)}
    for v in section.verdicts:
        assert v.sentence, v.claim.id
        load = v.claim.get("load") or data.loads[0].name
        for server, level in v.rests_on:
            cell = cells[(load, server, level)]
            codes = {d["code"] for d in cell.diagnoses}
            failed_ok = v.claim.kind in ERROR_KINDS or v.claim.metric in ERROR_METRICS
            allowed = ("measured", "disqualified") if failed_ok else ("measured",)
            assert cell.status in allowed and not codes & UNTRUSTED, (v.claim.id, cell)
        if v.verdict != "not comparable":
            assert v.rests_on, v.claim.id
        _ranks_every_server_and_says_whose_numbers(v)
    assert sum(section.counts().values()) == len(section.verdicts)
    # What is checked above is not vacuous: verdicts (judged, or shown beside the seed's where
    # the run changed a setting the claim depends on) read this run's cells.
    resting = [v.claim.id for v in section.verdicts if v.rests_on]
    if not resting:  # every cell the claims could read was the machine's, not the servers'
        for cell in cells.values():
            skip_if_contended(cell.status, cell.reason)
    assert resting, "\n".join(f"{v.claim.id}: {v.sentence}" for v in section.verdicts)


def _ranks_every_server_and_says_whose_numbers(v) -> None:
    claim = v.claim
    if claim.kind in RANKS and v.verdict != "not comparable":
        assert {server for server, _ in v.rests_on} == set(claim.ranked), claim.id
        assert f"all {len(claim.ranked)} servers the seed ranked" in v.sentence, claim.id
    assert "among 1 servers" not in v.sentence
    if claim.kind in TRENDS or any(claim.get(k) is not None for k in NUMBER_KEYS):
        said = "(the seed's number)" in v.theirs or "(the project's reading: " in v.theirs
        assert said, (claim.id, v.theirs)
