import sqlite3

import pytest

from wsgibench.errors import EnvironmentProblem
from wsgibench.results.store import SCHEMA_VERSION, Store
from wsgibench.results.summary import summarise_study


def _repeat(idx, rps):
    return {
        "idx": idx,
        "rps_ok": rps,
        "requests": 10,
        "ok": 10,
        "errors": 0,
        "error_rate": 0.0,
        "latency_p50_us": 100.0,
        "latency_p90_us": 150.0,
        "latency_p99_us": 200.0,
        "latency_max_us": 300.0,
        "cpu_mean_pct": 90.0,
        "cpu_peak_pct": 99.0,
        "rss_start_bytes": 1,
        "rss_end_bytes": 2,
        "rss_peak_bytes": 3,
        "rss_mean_bytes": 2,
        "conns_peak": 5,
        "engine_cpu_s": 0.1,
        "sampler_cpu_s": 0.01,
        "saturated": 0,
        "engine": {"format_version": 1, "totals": {"ok": 10}},
        "samples": [(0.0, 0.0, 1, 1, 0, 0.5), (0.1, 95.0, 3, 1, 5, None)],
    }


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
