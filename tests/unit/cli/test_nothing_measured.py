"""`run` exits 4 when it measured nothing: no cell has a number of the server's, or every server
of a load (the nginx ceiling aside) was disqualified, unavailable or failed."""

from __future__ import annotations

from wsgibench.cli.run import nothing_measured
from wsgibench.errors import EXIT_NOTHING_MEASURED, NothingMeasured
from wsgibench.results.store import Cell
from wsgibench.results.verdict import CellStatus


def _cell(server: str, load: str, status: CellStatus, reason: str | None = None) -> Cell:
    return Cell(0, 1, server, load, "closed", 4, 0, status, reason, [], None, None, None, [])


def test_a_load_whose_every_server_failed_measured_nothing():
    dq = CellStatus.DISQUALIFIED
    cells = [
        _cell("nginx-baseline", "a", CellStatus.MEASURED),
        _cell("waitress", "a", dq, "no valid reply"),
        _cell("bjoern", "a", CellStatus.UNAVAILABLE, "no such app"),
        _cell("waitress", "b", CellStatus.MEASURED),
    ]
    said = nothing_measured(cells)
    assert said is not None and said.startswith("load a measured nothing: every server was")
    assert "(first: waitress: disqualified: no valid reply)" in said
    cells[2] = _cell("bjoern", "a", CellStatus.CONTENDED)
    assert nothing_measured(cells) is None
    assert NothingMeasured("x").exit_code == EXIT_NOTHING_MEASURED == 4


def test_no_cell_with_a_number_anywhere_is_nothing():
    cells = [
        _cell("waitress", "a", CellStatus.DISQUALIFIED, "no valid reply"),
        _cell("bjoern", "a", CellStatus.FAILED, "engine: gone"),
    ]
    said = nothing_measured(cells)
    assert said is not None and said.startswith("nothing was measured: every one of the 2 cells")
    assert nothing_measured([]) is None
    # numbers the harness limited, or other work contended, are numbers, said beside them
    for status in (CellStatus.DEATHS, CellStatus.INVALID, CellStatus.CONTENDED):
        assert nothing_measured([_cell("waitress", "a", status)]) is None
