"""Fuzz the study-file parser (hypothesis): any TOML text or parsed table either gives a Study or
a UsageError (one clear line), never another exception. Quick and bounded by default (hypothesis
comes with the test extras); `bench/fuzz` runs it longer with WSGIBENCH_FUZZ_EXAMPLES."""

from __future__ import annotations

import os
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wsgibench.errors import UsageError
from wsgibench.study.keys import STUDY_KEYS
from wsgibench.study.load_keys import LOAD_KEYS
from wsgibench.study.model import load_study, parse_study

EXAMPLES = int(os.environ.get("WSGIBENCH_FUZZ_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="WSGIBENCH_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
)

TOP = [*(k.name for k in STUDY_KEYS), "bogus"]  # every key a study may have, and one it may not
LOAD = [*(k.name for k in LOAD_KEYS), "bogus"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "closed",
            "rate",
            "sessions",
            "count",
            "conn_rate",
            "1.0",
            "1.1",
            "wsgiref",
            "gunicorn-sync",
            "pong",
            "poisson",
            "*",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
loads = st.dictionaries(st.sampled_from(LOAD), values, max_size=8)
studies = st.dictionaries(st.sampled_from(TOP), values, max_size=10).flatmap(
    lambda d: st.builds(
        lambda ls, srv: {
            **d,
            **({"load": ls} if ls is not None else {}),
            **({"servers": srv} if srv is not None else {}),
        },
        st.one_of(st.none(), st.lists(loads, max_size=3)),
        st.one_of(
            st.none(),
            st.lists(
                st.sampled_from(["wsgiref", "gunicorn-sync", "nginx-baseline", "fault-hang"]),
                min_size=1,
                max_size=3,
            ),
        ),
    )
)


@SETTINGS
@given(studies)
def test_parsed_tables(raw):
    try:
        parse_study(raw, "fuzz.toml")
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc)


TOML_CHARS = string.ascii_letters + string.digits + " _-.=[]{}\",#\n'+:"


@SETTINGS
@given(st.text(alphabet=TOML_CHARS, max_size=200))
def test_toml_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "s.toml"
    path.write_text('servers = ["wsgiref"]\n' + text)
    try:
        load_study(str(path))
    except UsageError as exc:
        assert str(exc)
