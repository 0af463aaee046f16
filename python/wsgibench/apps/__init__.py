"""WSGI apps served unchanged by every server; each module is importable on its own."""
