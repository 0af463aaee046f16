import pytest

from wsgibench.errors import UsageError
from wsgibench.study.model import builtin_names, load_study, parse_study
from wsgibench.study.plan import plan_cells

BASE = {
    "servers": ["nginx-baseline", "gunicorn-sync"],
    "load": [{"name": "c", "model": "closed", "levels": [500, 50], "duration_s": 1}],
}


def test_every_builtin_study_parses():
    assert {"quick", "all", "goldberg2016", "piel2010"} <= set(builtin_names())
    for name in builtin_names():
        study = load_study(name)
        assert study.cell_count() > 0


def test_quick_fits_its_budget():
    study = load_study("quick")
    measured = sum(load.nominal_seconds() + load.warmup_s for load in study.loads) * study.repeats
    assert "nginx-baseline" in study.servers and len(study.servers) >= 12
    assert study.cell_count() * measured < 600


def test_cells_ascend_levels_and_shuffle_servers_reproducibly():
    study = parse_study(
        dict(
            BASE,
            servers=[f"gunicorn-{w}" for w in ("sync", "gthread", "gevent")] + ["nginx-baseline"],
        ),
        "t",
    )
    cells = plan_cells(study)
    assert [c.level for c in cells] == [50] * 4 + [500] * 4
    assert [c.position for c in cells] == list(range(8))  # the order they run in, each once
    assert [c.server for c in cells] == [c.server for c in plan_cells(study)]
    orders = {tuple(c.server for c in cells[:4]), tuple(c.server for c in cells[4:])}
    assert len(orders) == 2  # random order within each level (seed 004), fixed by the seed


@pytest.mark.parametrize(
    "change, message",
    [
        ({"servers": ["gunicorn-snyc"]}, "did you mean 'gunicorn-sync'"),
        ({"load": [{"model": "closed", "levels": [-5], "duration_s": 1}]}, "levels item 1 must be"),
        ({"load": [{"model": "teleport", "levels": [1]}]}, "model must be one of"),
        ({"load": [{"model": "rate", "levels": [10]}]}, "duration_s or connections_total"),
        (
            {"load": [{"model": "closed", "levels": [1], "duration_s": 1, "bogus": 1}]},
            "unknown key",
        ),
        ({"server_cpus": [99]}, "this machine has CPUs"),
        ({"repeats": 2, "trim": 1}, "repeats - 2 × trim"),
        ({"colour": "red"}, "unknown key colour"),
        (
            {"load": [{"model": "closed", "levels": [1], "duration_s": 1, "streams": 4}]},
            'streams is for protocol = "h2c" or "h2" only',
        ),
        (
            {
                "load": [
                    {
                        "model": "closed",
                        "levels": [1],
                        "duration_s": 1,
                        "protocol": "h2c",
                        "http": "1.0",
                    }
                ]
            },
            'protocol = "h2c" needs http = "1.1" with keep-alive',
        ),
        (
            {
                "load": [
                    {
                        "model": "closed",
                        "levels": [1],
                        "duration_s": 1,
                        "protocol": "h2c",
                        "pipeline": 4,
                    }
                ]
            },
            "takes streams, not pipeline",
        ),
        (
            {
                "load": [
                    {
                        "model": "closed",
                        "levels": [1],
                        "duration_s": 1,
                        "protocol": "h2c",
                        "streams": 1001,
                    }
                ]
            },
            "streams",
        ),
        (
            {
                "load": [
                    {
                        "model": "closed",
                        "levels": [1],
                        "duration_s": 1,
                        "protocol": "h2",
                        "tls": False,
                    }
                ]
            },
            'protocol = "h2" is HTTP/2 over TLS: tls cannot be false',
        ),
        (
            {
                "load": [
                    {
                        "model": "closed",
                        "levels": [1],
                        "duration_s": 1,
                        "protocol": "h2c",
                        "tls": True,
                    }
                ]
            },
            'protocol = "h2c" is clear text: for TLS, protocol = "h2"',
        ),
        (
            {"load": [{"model": "rate", "levels": [10], "duration_s": 1, "pool": 8, "calls": 10}]},
            "pool carries one request per arrival for duration_s: no calls",
        ),
        (
            {
                "load": [
                    {
                        "model": "capacity",
                        "slo_p99_ms": 10,
                        "duration_s": 1,
                        "pool": 8,
                        "keep_alive": False,
                    }
                ]
            },
            'pool needs http = "1.1" with keep-alive',
        ),
        (
            {"load": [{"model": "closed", "levels": [1], "duration_s": 1, "pool": 8}]},
            "pool is not a key of model closed",
        ),
    ],
)
def test_bad_study_gets_one_clear_line(change, message):
    with pytest.raises(UsageError) as exc:
        parse_study(dict(BASE, **change), "study.toml")
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_malformed_toml_names_the_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('servers = ["a"\nrepeats = 3\n')
    with pytest.raises(UsageError) as exc:
        load_study(str(bad))
    assert "bad.toml" in str(exc.value) and "line" in str(exc.value)


def test_unknown_study_suggests():
    with pytest.raises(UsageError, match="did you mean 'quick'"):
        load_study("quik")
