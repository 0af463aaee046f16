"""The study reference (docs/studies.md, `wsgibench studies --keys`), written from study/keys.py and
the built-in studies, so that the page and the parser cannot disagree."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from wsgibench.paths import STUDIES_DIR
from wsgibench.study.keys import SECTIONS
from wsgibench.study.kinds import Key

INTRO = """\
# Study files

A study is a TOML file (or a built-in name: `wsgibench studies`) that `wsgibench run` reads. Every
key below is checked before anything starts: an unknown key is refused with the nearest known
one, a value of the wrong type or out of range is refused naming the file and the key (exit 2),
and every engine plan of the study is validated by the engine itself. This page is written from
the code that checks the keys (`python/wsgibench/study/keys.py` and `load_keys.py`); a test fails
when the two differ. `wsgibench studies --keys` prints it.

"Used in" names the built-in studies that set a key and the seeds they reproduce.

```toml
name = "mine"
servers = ["nginx-baseline", "bjoern", "gunicorn-gthread"]
app = "pong"
repeats = 4

[[load]]
name = "closed"
model = "closed"
levels = [50, 500]
duration_s = 10.0
```

The command line changes a study without editing it (`--servers`, `--levels`, `--duration`,
`--repeats`, `--app-env`, `--full`, `--server-cpus`, `--engine-cpus`, `--load-hosts`,
`--cluster`, `--server-host`); each change is checked like the key it replaces, stored with the
run and shown at the top of its report.
"""


Use = tuple[str, tuple[str, ...]]  # a built-in study's name, and the seeds it follows


def _builtin_uses() -> dict[str, dict[str, set[Use]]]:
    """section title -> key -> the built-ins that set it, each with the seeds it follows."""
    uses: dict[str, dict[str, set[Use]]] = {}

    def mark(section: str, table: dict[str, Any], label: Use) -> None:
        for key in table:
            uses.setdefault(section, {}).setdefault(key, set()).add(label)

    for path in sorted(STUDIES_DIR.glob("*.toml")):
        raw = tomllib.loads(path.read_text())
        seeds = tuple(sorted(set(re.findall(r"seeds? (\d{3})", f"{raw.get('source', '')}"))))
        label = (path.stem, seeds)
        mark("study (top level)", raw, label)
        for load in raw.get("load", []):
            mark("[[load]]", load, label)
        for request in raw.get("requests", []):
            mark("[[requests]]", request, label)
            mark("[[requests]] expect", request.get("expect", {}), label)
        for settings in raw.get("server_settings", {}).values():
            mark("[server_settings.NAME]", settings, label)
    return uses


def _used(labels: set[Use], builtins: int) -> str:
    """The built-ins that set a key, and the seeds they follow, in few words."""
    if not labels:
        return "—"
    seeds = sorted({seed for _, followed in labels for seed in followed})
    said = f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)})" if seeds else ""
    if len(labels) == builtins:
        return f"every built-in{said}"
    if len(labels) > 4:
        return f"{len(labels)} of {builtins} built-ins{said}"
    return ", ".join(sorted(name for name, _ in labels)) + said


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(key: Key, used: str, with_models: bool) -> str:
    meaning = key.doc + (f" Example: `{key.example}`." if key.example else "")
    cells = [f"`{key.name}`", key.kind.describe(), key.unit or "", key.default]
    if with_models:
        needs = f" (needed by {', '.join(key.required)})" if key.required else ""
        cells.append((", ".join(key.models) if key.models else "every model") + needs)
    cells += [used, meaning]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def reference_markdown() -> str:
    uses = _builtin_uses()
    builtins = len(list(STUDIES_DIR.glob("*.toml")))
    parts = [INTRO]
    for title, keys in SECTIONS:
        with_models = title == "[[load]]"
        head = ["key", "type", "unit", "default"] + (["models"] if with_models else [])
        head += ["used in", "meaning"]
        parts += [
            f"## {title}",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *(
                _row(k, _used(uses.get(title, {}).get(k.name, set()), builtins), with_models)
                for k in keys
            ),
            "",
        ]
    return "\n".join(parts)
