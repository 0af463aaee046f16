"""Splitting a cell's plan over load hosts: every connection, request and session goes to exactly
one host, rates add up, uniform schedules interleave, seeds are the host's own and repeatable."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wsgibench.errors import UsageError
from wsgibench.results.engine_plan import EnginePlan, LoadModel
from wsgibench.results.host_share import host_seed
from wsgibench.study.model import parse_study
from wsgibench.study.split import parse_hosts


def _plan(model: dict) -> EnginePlan:
    doc = {"target": {"host": "10.0.0.1", "port": 80}, "model": model, "seed": 7, "threads": 1}
    return EnginePlan.from_dict(doc)


def split_plan(plan: EnginePlan, hosts: int) -> list[dict]:
    """Each host's plan as the engine reads it."""
    return [part.to_dict() for part in plan.split(hosts)]


@given(st.integers(1, 100_000), st.integers(1, 64))
def test_every_connection_of_a_closed_loop_goes_to_one_host(connections, hosts):
    parts = split_plan(
        _plan({"kind": "closed", "connections": connections, "duration_s": 5}), hosts
    )
    shares = [p["model"]["connections"] for p in parts]
    assert sum(shares) == connections
    assert len(parts) == min(hosts, connections) and min(shares) >= 1
    assert max(shares) - min(shares) <= 1
    assert all(p["model"]["duration_s"] == 5 for p in parts)


@given(st.integers(1, 10_000), st.integers(1, 10_000), st.integers(1, 16))
def test_a_count_load_sends_exactly_its_requests(requests, concurrency, hosts):
    model = {"kind": "count", "requests": requests, "concurrency": concurrency}
    parts = split_plan(_plan(model), hosts)
    assert sum(p["model"]["requests"] for p in parts) == requests
    assert sum(p["model"]["concurrency"] for p in parts) == concurrency
    assert all(p["model"]["requests"] >= 1 and p["model"]["concurrency"] >= 1 for p in parts)


@given(st.floats(0.5, 1e6), st.integers(1, 32), st.sampled_from(["rate", "conn_rate"]))
def test_rate_shares_sum_to_the_rate_and_phase_the_schedules(rate, hosts, kind):
    parts = split_plan(_plan({"kind": kind, "rate": rate, "duration_s": 10, "calls": 3}), hosts)
    assert len(parts) == hosts
    assert math.isclose(sum(p["model"]["rate"] for p in parts), rate, rel_tol=1e-12)
    assert all(math.isclose(p["model"]["rate"], rate / hosts, rel_tol=1e-9) for p in parts)
    assert all(p["model"]["calls"] == 3 for p in parts)
    # host i's arrivals start i slots of the whole rate later: the schedules interleave
    for i, p in enumerate(parts):
        assert p.get("phase_s", 0) == pytest.approx(min(i / rate, 0.999))


@given(st.integers(1, 50_000), st.integers(1, 16))
def test_a_rate_run_of_n_connections_opens_each_once(total, hosts):
    model = {"kind": "rate", "rate": 100, "connections_total": total}
    parts = split_plan(_plan(model), hosts)
    assert sum(p["model"]["connections_total"] for p in parts) == total


@given(st.integers(1, 5_000), st.integers(1, 16))
def test_a_pool_of_connections_is_shared_among_hosts(pool, hosts):
    parts = split_plan(_plan({"kind": "rate", "rate": 1000, "duration_s": 2, "pool": pool}), hosts)
    assert len(parts) == min(pool, hosts)
    assert sum(p["model"]["pool"] for p in parts) == pool
    assert math.isclose(sum(p["model"]["rate"] for p in parts), 1000, rel_tol=1e-12)


def test_a_pool_has_a_connection_per_engine_thread_at_least():
    model = LoadModel(kind="rate", level=100, duration_s=1, pool=3)
    assert [model.threads_for(n) for n in (1, 3, 8)] == [1, 3, 3]
    assert LoadModel(kind="rate", level=100, duration_s=1).threads_for(8) == 8


def test_sessions_split_their_arrival_rate():
    model = {"kind": "sessions", "users_per_s": 300, "duration_s": 10, "requests": 5, "think_s": 1}
    parts = split_plan(_plan(model), 3)
    assert [p["model"]["users_per_s"] for p in parts] == pytest.approx([100, 100, 100])
    assert all(p["model"]["requests"] == 5 for p in parts)


def test_each_host_has_its_own_seed_the_same_every_time():
    model = {"kind": "closed", "connections": 9, "duration_s": 1}
    a, b = split_plan(_plan(model), 3), split_plan(_plan(model), 3)
    assert [p["seed"] for p in a] == [p["seed"] for p in b]
    assert len({p["seed"] for p in a}) == 3
    assert host_seed(7, 0) != host_seed(8, 0)
    assert a[0]["target"] == {"host": "10.0.0.1", "port": 80}  # the plan itself is not shared


def test_a_model_that_cannot_be_split_and_no_hosts_are_refused():
    with pytest.raises(ValueError):
        LoadModel(kind="telepathy", level=1).active_hosts(2)
    with pytest.raises(ValueError):
        split_plan(_plan({"kind": "closed", "connections": 1, "duration_s": 1}), 0)


def test_the_study_names_its_server_address_and_load_hosts():
    assert parse_hosts({}, "s") == ("127.0.0.1", None)
    host, spec = parse_hosts({"server_host": "10.9.0.2", "load_hosts": 3}, "s")
    assert host == "10.9.0.2" and spec and spec.local_workers == 3 and spec.skew_bound_s == 0.010
    _, spec = parse_hosts({"cluster": "tcp://10.9.0.1:8786", "start_skew_bound_ms": 5}, "s")
    assert spec and spec.cluster == "tcp://10.9.0.1:8786" and spec.skew_bound_s == 0.005
    for bad in (
        {"server_host": "example.org"},
        {"cluster": "tcp://x:1", "load_hosts": 2},
        {"load_hosts": 0},
        {"load_hosts": True},
        {"load_hosts": 2, "start_skew_bound_ms": 0},
    ):
        study = {"servers": ["wsgiref"], "load": [{"model": "count", "levels": [1], "requests": 1}]}
        with pytest.raises(UsageError):
            parse_study({**study, **bad}, "s")
