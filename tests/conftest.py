"""Shared test settings. Server environments live in the normal WSGIBENCH_HOME so runs reuse them."""
