"""What each seed published (figures, ratios, rank orders, each with its source line), kept in
results/seeds/<study>.toml beside the study that reproduces it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

SEEDS_DIR = Path(__file__).resolve().parent / "seeds"


def claims(study: str) -> dict[str, Any] | None:
    """The seed's published figures for a built-in seed study, or None when it has none."""
    path = SEEDS_DIR / f"{study}.toml"
    if not path.exists():
        return None
    return tomllib.loads(path.read_text())


def kendall_tau(ours: list[str], theirs: list[str]) -> tuple[float | None, list[str]]:
    """Kendall's tau between two rankings over the items both have (None below two), and them."""
    common = [x for x in theirs if x in ours]
    n = len(common)
    if n < 2:
        return None, common
    position = {x: ours.index(x) for x in common}
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if position[common[i]] < position[common[j]]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (n * (n - 1) / 2), common
