"""`wsgibench export`: cell summaries as CSV, or the whole study (repeats and engine JSON) as JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from wsgibench.results.store import Store
from wsgibench.results.summary import summarise_study


def export_csv(store: Store, study_id: int | None = None) -> str:
    study = store.study(study_id)
    trim = int(json.loads(study["config_json"]).get("trim", 0))
    rows = [{"study": study["name"], **s.flat()} for s in summarise_study(store, study["id"], trim)]
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def export_json(store: Store, study_id: int | None = None) -> str:
    study = store.study(study_id)
    cells: list[dict[str, Any]] = []
    for cell in store.cells(study["id"]):
        repeats = []
        for rep in store.repeats(cell.id):
            record = {k: rep[k] for k in rep.keys() if k != "engine_json"}
            record["engine"] = json.loads(rep["engine_json"])
            repeats.append(record)
        cells.append({**cell.__dict__, "repeats": repeats})
    doc = {
        "format": "wsgibench-study",
        "schema_version": 1,
        "study": {
            k: study[k] for k in ("id", "name", "started_unix_s", "finished_unix_s", "status")
        },
        "config": json.loads(study["config_json"]),
        "environment": json.loads(study["environment_json"]),
        "cells": cells,
    }
    return json.dumps(doc, indent=1, default=str)
