"""Fuzz the study-file parser (hypothesis): any TOML text or parsed table either gives a Study or
a UsageError (one clear line), never another exception; the inputs drawn are counted, and both
outcomes must be drawn often (good studies too, not only refusals). Quick and bounded by default
(hypothesis comes with the test extras); `bench/fuzz` runs it longer with WSGIBENCH_FUZZ_EXAMPLES."""

from __future__ import annotations

import copy
import os
import string
import tomllib
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from wsgibench.errors import UsageError
from wsgibench.study.keys import STUDY_KEYS
from wsgibench.study.load_keys import LOAD_KEYS
from wsgibench.study.model import load_study, parse_study

from .mutations import BUILTINS, mutants

EXAMPLES = int(os.environ.get("WSGIBENCH_FUZZ_EXAMPLES", "60"))
# Every health check on: a strategy that hypothesis finds too slow, or that filters away most of
# what it draws, is a finding of this test, not noise to silence.
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="WSGIBENCH_FUZZ_EXAMPLES" not in os.environ,
)
T = TypeVar("T")

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


# Each top-level key's example value (docs/studies.md), set on a built-in study.
EXAMPLE_VALUES = {
    k.name: value
    for k in STUDY_KEYS
    if k.example and (value := tomllib.loads(k.example).get(k.name)) is not None
}
edited = st.builds(
    lambda name, keys: copy.deepcopy({**BUILTINS[name], **{k: EXAMPLE_VALUES[k] for k in keys}}),
    st.sampled_from(sorted(BUILTINS)),
    st.lists(st.sampled_from(sorted(EXAMPLE_VALUES)), max_size=3),
)


def _fuzz(strategy: st.SearchStrategy[T], attempt: Callable[[T], str]) -> Counter[str]:
    """Run `attempt` on every example hypothesis draws, counting what each came to."""
    seen: Counter[str] = Counter()

    @SETTINGS
    @given(strategy)
    def check(example: T) -> None:
        seen[attempt(example)] += 1

    check()
    return seen


def _both_outcomes(seen: Counter[str]) -> None:
    """Both outcomes drawn, each often: a generator that gives only refused input (or only good
    input) never reaches half of what this test is for, and fails here."""
    assert seen["accepted"] >= EXAMPLES // 10 and seen["refused"] >= EXAMPLES // 10, seen


def test_parsed_tables():
    def attempt(raw: dict[str, object]) -> str:
        try:
            parse_study(raw, "fuzz.toml")
        except UsageError as exc:
            assert str(exc) and "\n" not in str(exc)
            return "refused"
        return "accepted"

    # random tables, the built-in studies with random changes, and with keys set to the values
    # the reference gives as examples (most of those still good)
    drawn = st.one_of(studies, mutants().map(lambda m: m[1]), edited)
    _both_outcomes(_fuzz(drawn, attempt))


TOML_CHARS = string.ascii_letters + string.digits + " _-.=[]{}\",#\n'+:"
# Lines of a good study file (each key's own example, a load), mixed with random text below.
GOOD_LINES = [k.example for k in STUDY_KEYS if k.example and k.name not in ("servers", "load")]
GOOD_LOAD = '[[load]]\nmodel = "closed"\nlevels = [2]\nduration_s = 1\n'
noise = st.text(alphabet=TOML_CHARS, max_size=40)
# good lines then a load, or lines and random text anywhere
texts = st.one_of(
    st.builds(
        lambda head: "\n".join([*head, GOOD_LOAD]),
        st.lists(st.sampled_from(GOOD_LINES), max_size=3, unique=True),
    ),
    st.builds(
        lambda head, load, tail: "\n".join([*head, *([GOOD_LOAD] if load else []), tail]),
        st.lists(st.one_of(st.sampled_from(GOOD_LINES), noise), max_size=4),
        st.booleans(),
        st.one_of(st.just(""), noise),
    ),
)


def test_toml_text(tmp_path):
    def attempt(text: str) -> str:
        path = tmp_path / "s.toml"
        path.write_text('servers = ["wsgiref"]\n' + text)
        try:
            load_study(str(path))
        except UsageError as exc:
            assert str(exc) and "\n" not in str(exc)
            return "refused"
        return "accepted"

    _both_outcomes(_fuzz(texts, attempt))
