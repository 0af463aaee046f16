"""Random mutations of every built-in study (hypothesis): each is either a study whose every plan
can be built, or refused with one line naming the file (exit 2) — never another exception. The
end-to-end half (tests/e2e/test_study_plans.py) gives the accepted ones' plans to the engine."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings

from wsgibench.errors import EXIT_USAGE, UsageError
from wsgibench.study.model import parse_study
from wsgibench.study.plan import every_plan

from .mutations import mutants

EXAMPLES = int(os.environ.get("WSGIBENCH_FUZZ_EXAMPLES", "150"))


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="WSGIBENCH_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
)


def test_a_mutated_builtin_parses_or_is_refused_in_one_line():
    outcomes = {"accepted": 0, "refused": 0}

    @SETTINGS
    @given(mutants())
    def check(mutant):
        name, raw = mutant
        try:
            study = parse_study(raw, f"built-in study {name}")
        except UsageError as exc:
            assert exc.exit_code == EXIT_USAGE
            text = str(exc)
            assert text.startswith(f"built-in study {name}") and "\n" not in text, text
            outcomes["refused"] += 1
            return
        # every plan can be built and sent
        json.dumps([plan.to_dict() for _, plan in every_plan(study)])
        outcomes["accepted"] += 1

    check()
    assert outcomes["accepted"] >= 10 and outcomes["refused"] >= 10, outcomes
