"""Vega-Lite rendering without a browser or network: PNG/SVG via vl-convert, and its bundled JavaScript."""

from __future__ import annotations

from functools import cache
from typing import Any

import altair as alt
import vl_convert as vlc


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
    js = vlc.javascript_bundle(vl_version=vl_version())  # type: ignore[call-arg]  # optional at run time
    # Nothing in a script may end the <script> element early.
    return js.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def versions() -> dict[str, str]:
    return {
        "vega": vlc.get_vega_version(),
        "vega-lite": vl_version() or "latest",
        "vega-embed": vlc.get_vega_embed_version(),
        "altair": alt.__version__,
    }
