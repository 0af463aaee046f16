"""wsgibench: reproducible, honest benchmarks of Python web servers."""

__version__ = "0.1.0"
