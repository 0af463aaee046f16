"""Vega-Lite rendering without a browser or network: PNG/SVG via vl-convert, and its bundled JavaScript."""

from __future__ import annotations

import contextlib
import os
from functools import cache
from typing import Any

import altair as alt
import vl_convert as vlc

from wsgibench.paths import cache_dir


@cache
def vl_version() -> str | None:
    """The Vega-Lite version altair writes specs for, if vl-convert ships it (else its newest)."""
    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return major_minor if major_minor in vlc.get_vegalite_versions() else None


def png(spec: dict[str, Any], scale: float = 2.0) -> bytes:
    return vlc.vegalite_to_png(spec, vl_version=vl_version(), scale=scale)


def svg(spec: dict[str, Any]) -> str:
    return vlc.vegalite_to_svg(spec, vl_version=vl_version())


@cache
def javascript() -> str:
    """Vega, Vega-Lite and vega-embed in one script defining window.vegaEmbed; no imports, no CDN."""
    js = _bundle()
    # Nothing in a script may end the <script> element early.
    return js.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def _bundle() -> str:
    """vl-convert's bundle (about 3 s to build), kept on disk under its vl-convert and Vega-Lite
    versions: the same bytes for every report until either changes. A cache that cannot be read
    or written is skipped, never an error."""
    made_by = getattr(vlc, "__version__", None)
    if made_by is None:  # no version to key the file on: built each time
        return _build()
    path = cache_dir() / f"vega-bundle-{made_by}-{vl_version() or 'latest'}.js"
    try:
        if (js := path.read_text(encoding="utf-8")) != "":
            return js
    except (OSError, UnicodeDecodeError):
        pass
    js = _build()
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(js, encoding="utf-8")
        tmp.chmod(0o644)
        tmp.replace(path)  # whole or absent, whatever runs beside it
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)  # left only when the write failed
    return js


def _build() -> str:
    return vlc.javascript_bundle(vl_version=vl_version())  # type: ignore[call-arg]  # optional at run time


def versions() -> dict[str, str]:
    return {
        "vega": vlc.get_vega_version(),
        "vega-lite": vl_version() or "latest",
        "vega-embed": vlc.get_vega_embed_version(),
        "altair": alt.__version__,
    }
