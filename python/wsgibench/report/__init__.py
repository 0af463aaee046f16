"""Reports of a stored study: a self-contained HTML page, a PNG per chart, and a Markdown summary."""

from wsgibench.report.write import ReportFiles, write_report

__all__ = ["ReportFiles", "write_report"]
