"""The report's "against the seed" section on synthetic stores: figures, ratios and rank orders
beside the seed's, with Kendall's tau and a verdict each."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.report.data import load_report_data
from wsgibench.report.seed import against_seed
from wsgibench.results.seed_claims import claims, kendall_tau
from wsgibench.results.store import Store

from ..synthetic import build_store


def test_kendall_tau():
    assert kendall_tau(["a", "b", "c"], ["a", "b", "c"]) == (1.0, ["a", "b", "c"])
    assert kendall_tau(["c", "b", "a"], ["a", "b", "c"])[0] == -1.0
    assert kendall_tau(["a", "c", "x"], ["a", "b", "c"]) == (1.0, ["a", "c"])
    assert kendall_tau(["a"], ["a", "b"])[0] is None


def test_seed_001_ratio_beside_ours(tmp_path: Path):
    # rps = speed x (1 + 40/100): 1.0 and 38.0 req/s at concurrency 40
    speeds = {"tornado-native-sync": 1 / 1.4, "tornado-native-async": 38 / 1.4}
    path = build_store(
        tmp_path / "t.sqlite",
        speeds=speeds,
        levels=(40,),
        name="tornado2015",
        random_jitter=False,
        jitter=0.0,
    )
    seed, found = against_seed(load_report_data(Store(path, create=False)))
    assert seed["seed"] == "001"
    by_what = {f.what: f for f in found}
    ratio = by_what["non-blocking over blocking, req/s"]
    assert ratio.theirs == "39.35×" and ratio.ours == "38.00×" and ratio.verdict == "held"
    sync = by_what["blocking handler (time.sleep), req/s"]
    assert (sync.theirs, sync.ours, sync.verdict) == ("1.00", "1.00", "held")


def test_seed_004_order_and_errors(tmp_path: Path):
    # uWSGI second here, not last: the order changed; gunicorn fails nothing here (9 % then)
    speeds = {"bjoern": 9000.0, "uwsgi-http": 8000.0, "cheroot": 5000.0, "gunicorn-sync": 3000.0}
    path = build_store(tmp_path / "g.sqlite", speeds=speeds, levels=(100,), name="goldberg2016")
    _, found = against_seed(load_report_data(Store(path, create=False)))
    order = next(f for f in found if f.what.startswith("throughput"))
    assert order.ours == "bjoern > uwsgi-http > cheroot > gunicorn-sync"
    assert order.verdict == "changed" and "Kendall's τ = 0.33 over the 4 servers" in order.sentence
    assert "uwsgi-http 6 → 2" not in order.sentence and "uwsgi-http 4 → 2" in order.sentence
    gunicorn = next(f for f in found if f.what == "gunicorn error rate")
    assert (gunicorn.theirs, gunicorn.ours, gunicorn.verdict) == ("9.0%", "0.0%", "changed")
    mod_wsgi = next(f for f in found if f.what == "mod_wsgi error rate")
    assert mod_wsgi.verdict == "not comparable"


@pytest.mark.parametrize("study", ["tornado2015", "goldberg2016"])
def test_claims_name_their_source(study):
    seed = claims(study)
    entries = seed.get("figure", []) + seed.get("ratio", []) + seed.get("ranking", [])
    assert entries and all(e["source"] for e in entries)
    assert (
        Path(__file__).resolve().parents[4] / "shared" / "seeds" / seed["file"]
    ).exists() or seed["file"].startswith(seed["seed"])
