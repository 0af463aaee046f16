"""Random mutations of the built-in studies (hypothesis strategies), shared by the unit test (each
mutant parses or is refused in one line) and the end-to-end test (the engine accepts every plan
of every mutant the parser accepted)."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

from hypothesis import strategies as st

from wsgibench.paths import STUDIES_DIR
from wsgibench.study.keys import STUDY_KEYS
from wsgibench.study.load_keys import LOAD_KEYS

BUILTINS = {p.stem: tomllib.loads(p.read_text()) for p in sorted(STUDIES_DIR.glob("*.toml"))}

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 20_000),
    st.floats(-10, 1e5, allow_nan=False),
    st.sampled_from(["", "two", "1.1", "1.0", "auto", "poisson", "posson", "closed", "*", "/x"]),
    st.lists(st.one_of(st.integers(-2, 600), st.floats(0, 100), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.sampled_from(["workers", "threads", "x"]), st.integers(-1, 4), max_size=2),
)
TOP_NAMES = [k.name for k in STUDY_KEYS if k.name not in ("load", "full")] + ["levles", "bogus"]
LOAD_NAMES = [k.name for k in LOAD_KEYS] + ["levles", "duration", "bogus"]


@st.composite
def mutants(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(built-in name, its table with one to three keys set, replaced or deleted)."""
    name = draw(st.sampled_from(sorted(BUILTINS)))
    raw = copy.deepcopy(BUILTINS[name])
    for _ in range(draw(st.integers(1, 3))):
        in_load = draw(st.booleans()) and raw.get("load")
        table = raw["load"][draw(st.integers(0, len(raw["load"]) - 1))] if in_load else raw
        key = draw(st.sampled_from(LOAD_NAMES if in_load else TOP_NAMES))
        if draw(st.integers(0, 4)) == 0:
            table.pop(key, None)
        else:
            value = draw(VALUES)
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
    return name, raw
