"""The engine itself accepts every plan of every study the parser accepts: random mutations of the
built-in studies (tests/unit/study/mutations.py) either are refused by `parse_study` in one line,
or every plan they would give the engine passes `wsgibench-engine check`. A study that the parser
passes can therefore never fail at the engine with `bad plan` halfway through a run."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from unit.study.mutations import mutants
from wsgibench.errors import UsageError
from wsgibench.run.engine import check_plans
from wsgibench.study.model import parse_study
from wsgibench.study.plan import every_plan

SETTINGS = settings(
    max_examples=int(os.environ.get("WSGIBENCH_FUZZ_EXAMPLES", "120")),
    deadline=None,
    derandomize="WSGIBENCH_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
)


def test_the_engine_accepts_what_the_parser_accepts():
    accepted: list[str] = []

    @SETTINGS
    @given(mutants())
    def check(mutant):
        name, raw = mutant
        try:
            study = parse_study(raw, name)
        except UsageError:
            return
        accepted.append(name)
        plans = every_plan(study)
        refused = check_plans([plan for _, plan in plans])
        assert not refused, [(name, plans[i][0], why) for i, why in refused]

    check()
    assert len(accepted) >= 10, accepted  # the property was not vacuous
