import json
import sqlite3
from dataclasses import replace

import pytest

from wsgibench.errors import EnvironmentProblem
from wsgibench.machine.cpustat import Interference as CpuUse
from wsgibench.machine.sampler import Sample
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Counters, Interference, Repeat, StoredRepeat, Window
from wsgibench.results.store import SCHEMA_VERSION, Store
from wsgibench.results.summary import summarise_study

from ..synthetic import engine_result


def _repeat(idx, rps):
    return Repeat(
        idx=idx,
        rps_ok=rps,
        requests=10,
        ok=10,
        errors=0,
        error_rate=0.0,
        latency_p50_us=100.0,
        latency_p90_us=150.0,
        latency_p99_us=200.0,
        latency_max_us=300.0,
        cpu_mean_pct=90.0,
        cpu_peak_pct=99.0,
        rss_start_bytes=1,
        rss_end_bytes=2,
        rss_peak_bytes=3,
        rss_mean_bytes=2,
        conns_peak=5,
        engine_cpu_s=0.1,
        sampler_cpu_s=0.01,
        saturated=False,
        engine=EngineResult.from_dict(engine_result(10, 100.0, 200.0)),
        samples=(Sample(0.0, 0.0, 1, 1, 0, 0.5), Sample(0.1, 95.0, 3, 1, 5, None)),
    )


def _cell(server, level, status="measured"):
    return {
        "server": server,
        "load": "closed",
        "model": "closed",
        "level": level,
        "position": 0,
        "status": status,
        "notes": ["a note"],
        "capabilities": {"keep_alive": True},
        "server_info": {"flavour": "native", "version": "1.0"},
        "isolation": {"memory": "x"},
    }


def test_round_trip_and_summaries(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    sid = store.begin_study("t", {"trim": 1}, {"cpu_model": "x"})
    store.save_cell(sid, _cell("a", 50), [_repeat(i, r) for i, r in enumerate([90, 100, 110, 500])])
    store.finish_study(sid)
    store.close()

    again = Store(tmp_path / "r.sqlite", create=False)
    assert again.study()["status"] == "finished"
    (summary,) = summarise_study(again, sid, trim=1)
    assert summary.value("rps_ok", "trimmed_mean") == 105
    assert summary.value("rps_ok", "median") == 105
    assert summary.cell.notes == ["a note"] and summary.version == "1.0"
    rep = again.repeats(summary.cell.id)[0]
    assert len(again.samples(rep["id"])) == 2


def test_same_cell_twice_is_refused(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    sid = store.begin_study("t", {}, {})
    store.save_cell(sid, _cell("a", 50), [])
    with pytest.raises(sqlite3.IntegrityError):
        store.save_cell(sid, _cell("a", 50), [])
    assert len(store.cells(sid)) == 1  # the failed transaction left nothing behind


def test_unknown_schema_version_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.commit()
    db.close()
    with pytest.raises(
        EnvironmentProblem, match=f"version 99; this wsgibench reads version {SCHEMA_VERSION}"
    ):
        Store(path)


def test_foreign_files_are_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(EnvironmentProblem, match="not a wsgibench store"):
        Store(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all" * 100)
    with pytest.raises(EnvironmentProblem, match="not a wsgibench results store"):
        Store(text)


def test_missing_store_when_reading(tmp_path):
    with pytest.raises(EnvironmentProblem, match="no results store"):
        Store(tmp_path / "absent.sqlite", create=False)


def _judged_repeat() -> Repeat:
    """A repeat with a distinct value in every column, every counter, and judging's reasons."""
    side = CpuUse((0, 1), 180.123, 170.5, 9.623, 0.004)
    return Repeat(
        idx=2,
        rps_ok=12_345.5,
        requests=24_700,
        ok=24_691,
        errors=9,
        error_rate=0.000243,
        latency_p50_us=810,  # an int from the histogram: the REAL column keeps it as 810.0
        latency_p90_us=950.5,
        latency_p99_us=1_700.25,
        latency_max_us=9_000.0,
        cpu_mean_pct=97.5,
        cpu_peak_pct=101.25,
        rss_start_bytes=10_000,
        rss_end_bytes=30_000,
        rss_peak_bytes=31_000,
        rss_mean_bytes=20_000,
        conns_peak=64,
        engine_cpu_s=1.75,
        sampler_cpu_s=0.0125,
        saturated=True,
        engine=EngineResult.from_dict(engine_result(12_345.5, 810.0, 1_700.0)),
        samples=(Sample(0.0, 0.0, 10_000, 1, None, None), Sample(0.1, 97.5, 31_000, 2, 64, 1.5)),
        counters=Counters(
            netstat={"ListenOverflows": 3, "ListenDrops": 0},
            log_bytes=42,
            kinds={"pong": {"ok": 24_691, "p50_us": 810}},
            window=Window(2.0, 24_600, 91, 1, 1, {"count": 5.0, "mean": 3.5}),
            interference=Interference(
                0.011, side, CpuUse((2,), 60.0, 55.0, 5.0, 0.0), None, 7.5, True
            ),
            expected_requests=None,
            nothing_dropped=False,
        ),
        saturation_reasons=("engine CPU 99 %", "engine starved"),
        more={"later": [1, 2]},
    )


# The extra_json of _judged_repeat(): its counters in the order the store has always kept them,
# judging's reasons, then the rest.
STORED_EXTRA = {
    "netstat": {"ListenOverflows": 3, "ListenDrops": 0},
    "log_bytes": 42,
    "kinds": {"pong": {"ok": 24_691, "p50_us": 810}},
    "window": {
        "window_s": 2.0,
        "ok_in_window": 24_600,
        "completed_after_window": 91,
        "unannounced_closes": 1,
        "resent": 1,
        "engine_turnaround_us": {"count": 5.0, "mean": 3.5},
    },
    "interference": {
        "harness_cpu_s": 0.011,
        "server": {
            "cpus": [0, 1],
            "busy_pct": 180.12,
            "own_pct": 170.5,
            "other_pct": 9.62,
            "steal_pct": 0.0,
        },
        "engine": {
            "cpus": [2],
            "busy_pct": 60.0,
            "own_pct": 55.0,
            "other_pct": 5.0,
            "steal_pct": 0.0,
        },
        "contended": None,
        "engine_waited_pct": 7.5,
        "engine_starved": True,
        "resolution_pct": None,
        "unticked_pct": None,
    },
    "expected_requests": None,
    "nothing_dropped": False,
    "saturation_reasons": ["engine CPU 99 %", "engine starved"],
    "later": [1, 2],
}


def test_a_saved_repeat_reads_back_column_by_column(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    sid = store.begin_study("t", {}, {})
    rep = _judged_repeat()
    store.save_cell(sid, _cell("a", 50), [rep])
    (row,) = store.repeats(store.cells(sid)[0].id)
    expected = {
        "idx": 2,
        "rps_ok": 12_345.5,
        "requests": 24_700,
        "ok": 24_691,
        "errors": 9,
        "error_rate": 0.000243,
        "latency_p50_us": 810.0,
        "latency_p90_us": 950.5,
        "latency_p99_us": 1_700.25,
        "latency_max_us": 9_000.0,
        "cpu_mean_pct": 97.5,
        "cpu_peak_pct": 101.25,
        "rss_start_bytes": 10_000,
        "rss_end_bytes": 30_000,
        "rss_peak_bytes": 31_000,
        "rss_mean_bytes": 20_000,
        "conns_peak": 64,
        "engine_cpu_s": 1.75,
        "sampler_cpu_s": 0.0125,
        "saturated": 1,
        "engine_json": json.dumps(rep.engine.raw),
        "extra_json": json.dumps(STORED_EXTRA),
    }
    assert set(row.keys()) == {"id", "cell_id", *expected}  # every column of the table
    assert {k: row[k] for k in expected} == expected
    assert {k: type(row[k]) for k in expected} == {k: type(v) for k, v in expected.items()}
    samples = [tuple(s)[1:] for s in store.samples(row["id"])]
    assert samples == [(0.0, 0.0, 10_000, 1, None, None), (0.1, 97.5, 31_000, 2, 64, 1.5)]


def test_an_unjudged_repeat_stores_no_saturation_reasons(tmp_path):
    # as a disqualified repeat always has: judging stopped before looking at the engine
    store = Store(tmp_path / "r.sqlite")
    sid = store.begin_study("t", {}, {})
    store.save_cell(sid, _cell("a", 50), [_repeat(0, 100.0)])
    (row,) = store.repeats(store.cells(sid)[0].id)
    assert row["extra_json"] == "{}" and row["saturated"] == 0


def test_a_repeat_reads_back_typed_and_saves_again_as_it_was(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    sid = store.begin_study("t", {}, {})
    rep = _judged_repeat()
    store.save_cell(sid, _cell("a", 50), [rep])
    cell = store.cells(sid)[0]
    (back,) = store.stored_repeats(cell.id)
    assert (back.id, back.processes_peak, back.samples) == (1, 2, ())  # samples: Store.samples
    assert back.engine == rep.engine and back.engine.raw == rep.engine.raw
    assert back.more == rep.extra() and back.extra() == rep.extra()
    assert replace(back, id=0, processes_peak=None, more={}) == StoredRepeat(
        **{**vars(rep), "samples": (), "counters": None, "saturation_reasons": None, "more": {}}
    )
    # saved again (in another cell), the row is the one first written
    store.save_cell(sid, _cell("a", 64), [back])
    first, again = (store.repeats(c.id)[0] for c in store.cells(sid))
    assert {k: again[k] for k in again.keys() if k not in ("id", "cell_id")} == {
        k: first[k] for k in first.keys() if k not in ("id", "cell_id")
    }
