"""Each built-in seed study does what its seed did: the parameters read from the study files."""

from __future__ import annotations

from wsgibench.machine.topology import build, scaled_layout
from wsgibench.results.seed_claims import claims
from wsgibench.run.cell import place
from wsgibench.servers import get
from wsgibench.study.model import load_study
from wsgibench.study.overrides import Overrides, load_with

SEED_STUDIES = [
    "piel2010",
    "piel2010-c10k",
    "tornado2015",
    "tornado2015-mixed",
    "db2011",
    "db2011-hello",
    "seed003",
    "goldberg2016",
]
FOUR = build(list(range(4)), [(c,) for c in range(4)], [tuple(range(4))])


def _full(name: str):
    return load_with(name, Overrides(full=True))[0]


def test_db2011_is_ab_without_keep_alive_on_the_seeds_servers():
    study = load_study("db2011")
    for load in study.loads:
        assert (load.model, load.http, load.keep_alive) == ("count", "1.0", False)
        assert load.params["requests"] == 1000 and load.levels == (100,)
    assert {"gevent-pywsgi", "uwsgi-http", "tornado-wsgi", "php-fpm-nginx"} <= set(study.servers)


def test_goldberg2016_full_gives_the_seeds_workers_on_two_server_cpus():
    study = _full("goldberg2016")
    assert study.server_cpu_count == 2 and study.error_threshold == 1.0
    assert study.loads[0].levels == (100, 500, 1000, 5000, 10000)
    assert study.loads[0].params["duration_s"] == 30.0 and (study.repeats, study.trim) == (4, 1)
    lay = scaled_layout(FOUR, study.server_cpu_count)
    workers = {s: place(study.loads[0], study, get(s), lay, FOUR).workers for s in study.servers}
    assert workers["gunicorn-sync"] == 5  # 2N+1 on 2 server CPUs
    assert workers["uwsgi-http"] == workers["mod-wsgi"] == 4 and workers["bjoern"] == 1
    assert workers["nginx-baseline"] == 2 and "meinheld-site-example" in study.servers


def test_c10k_arrives_at_random_with_13_requests():
    load = load_study("piel2010-c10k").loads[0]
    assert load.params["arrival"] == "poisson" and load.params["requests"] == 13
    assert load.params["think_s"] == 5.0
    full = _full("piel2010-c10k").loads[0]
    assert full.levels == (500,) and full.params["duration_s"] == 300.0


def test_piel2010_is_400_connections_per_rate_as_httperf():
    study = load_study("piel2010")
    http10, http11 = study.loads
    assert (http10.http, http10.keep_alive, http10.params["connections_total"]) == (
        "1.1",
        False,
        400,
    )
    assert http11.params["calls"] == 10 and http11.params["connections_total"] == 400


def test_seed003_gives_uwsgi_http11_five_processes_of_two_threads():
    study = load_study("seed003")
    assert study.server_settings["uwsgi-http11"] == {"workers": 5, "threads": 2}
    lay = scaled_layout(FOUR, 2)
    placed = place(study.loads[0], study, get("uwsgi-http11"), lay, FOUR)
    assert (placed.workers, placed.server_threads) == (5, 2)


def test_every_seed_study_has_claims_on_its_own_servers_and_loads():
    """A claim names only servers and loads of its study (unless it says why it cannot be
    measured), so none is "not measured" merely by a misspelling."""
    for name in SEED_STUDIES:
        seed = claims(name)
        assert seed is not None and seed.claims, name
        study = load_study(name)
        loads = {load.name for load in study.loads}
        for claim in seed.claims:
            if claim.get("not_measured"):
                continue
            named = set(claim.servers) | set(claim.get("among") or [])
            assert named <= set(study.servers), (name, claim.id, named - set(study.servers))
            assert claim.get("load") is None or claim.get("load") in loads, (name, claim.id)
            assert claim.get("load") is not None or len(loads) == 1, (name, claim.id)
