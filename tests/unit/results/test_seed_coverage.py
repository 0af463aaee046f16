"""The claims files against their seeds as a whole: every finding issue 56 found unclaimed is a
claim or a line listed as not claimed with its reason; every metric a claim ranks or bounds has a
direction; every number a claim holds says whose it is (the seed's or the project's reading)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.results.seed_claims import (
    BETTER,
    METRICS,
    NUMBER_KEYS,
    RANKS,
    TRENDS,
    SeedClaims,
    claims,
    seed_text_dir,
    studies,
)
from wsgibench.results.seed_verdicts import theirs_text

ROOT = Path(__file__).resolve().parents[3]
SEEDS = seed_text_dir(Path(__file__))

# The seed lines with a finding that had no claim (issue 56), per seed.
FINDINGS: dict[str, list[int]] = {
    "000": [86, *range(104, 118), 716, 717, 723, 763, 764, 848, 926, 934, 949, 1079]
    + [1113, 1114, 1115, 1116],
    "001": [45, 47, 87, 88, 91, 92],
    "002": [32, 96, 119, 127, 128, 158, 196, 238, 243, 271, 290, 312, 314, 317, 319, 329],
    "003": [91, 92, 95, 96, 160, 177, 196],
    "004": [46, 47, 51, 66, 67, 68, 75, 76, 77, 78, 79, 85, 90, 95, 96, 97],
}


def _all() -> list[SeedClaims]:
    found = [claims(s) for s in studies()]
    return [s for s in found if s is not None]


def _by_seed() -> dict[str, list[SeedClaims]]:
    out: dict[str, list[SeedClaims]] = {}
    for s in _all():
        out.setdefault(s.seed, []).append(s)
    return out


@pytest.mark.parametrize("seed", sorted(FINDINGS))
def test_every_finding_is_claimed_or_listed_as_not_claimed_with_a_reason(seed: str):
    files = _by_seed()[seed]
    cited = {c.line for s in files for claim in s.claims for c in claim.cite}
    listed = {n.line: n.reason for s in files for n in s.not_claimed}
    missing = [line for line in FINDINGS[seed] if line not in cited and line not in listed]
    assert not missing, f"seed {seed}: lines {missing} neither claimed nor listed"
    assert all(len(reason) > 20 for reason in listed.values()), listed


@pytest.mark.parametrize("study", studies())
def test_lines_listed_as_not_claimed_are_lines_of_the_seed(study: str):
    seed = claims(study)
    assert seed is not None
    if SEEDS is None:
        pytest.skip("the seed write-ups are not beside this clone (shared/seeds)")
    lines = (SEEDS / seed.file).read_text().splitlines()
    for entry in seed.not_claimed:
        assert 1 <= entry.line <= len(lines) and lines[entry.line - 1].strip(), entry


def test_every_metric_a_claim_uses_has_a_direction():
    """CPU had none, so every rank claim on it was judged backwards."""
    used = {claim.metric for s in _all() for claim in s.claims}
    assert used <= set(METRICS)
    for metric in used:
        assert METRICS[metric][1] in BETTER, metric
    assert METRICS["cpu_pct"][1] == "lower"  # "less strain on the system"


def test_every_number_says_whose_it_is():
    """A number the seed never gave is the project's reading, said in words, never the seed's."""
    for s in _all():
        for claim in s.claims:
            numbered = claim.kind in TRENDS or any(claim.get(k) is not None for k in NUMBER_KEYS)
            source = claim.get("threshold_source")
            if not numbered:
                continue
            text = theirs_text(claim)
            if source == "project":
                assert claim.get("reading") and "the project's reading: " in text, claim.id
                assert "the seed's number" not in text, claim.id
            else:
                assert source == "seed" and text.endswith("(the seed's number)"), claim.id


def test_the_project_s_readings_are_listed_in_the_docs():
    page = (ROOT / "docs" / "seed-verdicts.md").read_text()
    for s in _all():
        for claim in s.claims:
            if claim.get("threshold_source") == "project":
                assert f"`{claim.id}`" in page, (s.study, claim.id)


def test_rank_claims_rank_the_servers_they_name():
    for s in _all():
        for claim in s.claims:
            if claim.kind in RANKS:
                assert set(claim.servers) <= set(claim.ranked), claim.id
                assert len(claim.ranked) >= 2, claim.id
