"""Reports of a stored study: a self-contained HTML page, a PNG per chart, and a Markdown summary.

The writer, and with it altair (half a second to import), loads on first use: `show`, which every
run ends with, imports only the modules here that format figures."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wsgibench.report.write import ReportFiles, write_report

__all__ = ["ReportFiles", "write_report"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from wsgibench.report import write

        return getattr(write, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
