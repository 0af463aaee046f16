"""The report's JavaScript bundle is built once per vl-convert and Vega-Lite version and read from
the cache after that; a cache that cannot be written costs the build, never an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.report import vega


@pytest.fixture()
def built(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Each call of vl-convert's bundler, by the Vega-Lite version asked for (the real one takes
    about 3 s)."""
    calls: list[str | None] = []

    def bundle(vl_version: str | None = None) -> str:
        calls.append(vl_version)
        return f"/* bundle for {vl_version} */ window.vegaEmbed = function () {{}};"

    monkeypatch.setattr(vega.vlc, "javascript_bundle", bundle)
    vega.javascript.cache_clear()
    yield calls
    vega.javascript.cache_clear()


def test_the_bundle_is_built_once_and_then_read(
    built: list[str | None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("WSGIBENCH_HOME", str(tmp_path))
    first = vega.javascript()
    vega.javascript.cache_clear()  # a new process
    assert vega.javascript() == first and len(built) == 1
    (kept,) = (tmp_path / "cache").glob("vega-bundle-*.js")
    assert vega.vlc.__version__ in kept.name and kept.read_text() in first
    assert not list((tmp_path / "cache").glob("*.tmp"))  # no temporary file left
    # another vl-convert: another file, built again
    monkeypatch.setattr(vega.vlc, "__version__", "0.0.1-other")
    vega.javascript.cache_clear()
    vega.javascript()
    assert len(built) == 2 and len(list((tmp_path / "cache").glob("vega-bundle-*.js"))) == 2


def test_an_unwritable_cache_only_costs_the_build(
    built: list[str | None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "home"
    home.write_text("a file where the cache's folder would be")
    monkeypatch.setenv("WSGIBENCH_HOME", str(home))
    assert "vegaEmbed" in vega.javascript()
    vega.javascript.cache_clear()
    assert "vegaEmbed" in vega.javascript() and len(built) == 2
