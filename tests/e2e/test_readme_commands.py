"""Every command line the README and the documentation's task pages show (the pages the README's
text moved to), run through the installed `wsgibench` script as a newcomer would copy it (at small
sizes): none may end in an internal error or an unexpected exit code. A command a page gains
without an entry here fails the test, so the two cannot drift apart. A line that a test of its own
already runs in full through the script is not run twice: its entry names that test, which must
exist and hold the line's words."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from .helpers import SCRIPT, cli, require

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The documentation's pages that show commands to copy: the README's own text moved there. The
# reference pages (cli.md, studies.md, measurement.md, …) name commands rather than show lines.
TASK_PAGES = (
    "index.md",
    "getting-started.md",
    "how-it-works.md",
    "your-app.md",
    "capacity-and-tuning.md",
    "versions-and-history.md",
    "protocols.md",
    "seeds.md",
    "replay.md",
    "calibration.md",
    "reports.md",
    "robustness.md",
    "results.md",
)
PAGES = (README, *(ROOT / "docs" / name for name in TASK_PAGES))
SMALL = ["--duration", "0.5", "--repeats", "1"]


def readme_commands() -> set[str]:
    """`wsgibench …` lines of the pages' shell blocks (comments dropped) and inline spans."""
    return {command for page in PAGES for command in page_commands(page.read_text())}


def page_commands(text: str) -> set[str]:
    """`wsgibench …` lines of one page's shell blocks (comments dropped) and inline spans."""
    found = set()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#")[0].strip()
            if line.startswith((".venv/bin/wsgibench", "wsgibench")):
                found.add(line.removeprefix(".venv/bin/"))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    found |= set(re.findall(r"`(wsgibench [^`]+)`", prose))
    return {" ".join(c.split()) for c in found}


Command = list[str] | str  # an argv for the script, or a shell line (a redirection)


@dataclass(frozen=True)
class Elsewhere:
    """A README line that another e2e test runs in full through the installed script:
    `test` is "FILE::FUNCTION" in tests/e2e."""

    test: str


def _calibrate(pairs: int) -> list[str]:
    """calibrate, made short: a pair or two of bjoern, 2 repeats over 2 starts of 0.3 s."""
    return ["calibrate", "bjoern", "--pairs", str(pairs), "--repeats", "2", "--starts", "2",
            "--duration", "0.3", "--results", "{tmp}/cal.sqlite"]  # fmt: skip


OK = {0}
QUICK = ["quick", "--servers", "bjoern", "--levels", "20", *SMALL, "--no-report"]
SLEEP = ["--app-env", "WSGIBENCH_SLEEP_S=0.02", "--servers", "tornado-native-async"]
# README form -> the concrete command lines that stand for it, at small sizes, and the exit codes
# each may end with. Stores: {g} (goldberg2016's), {s} (a quick run's), {r} (scratch); {tmp}.
COMMANDS: dict[str, list[tuple[Command, set[int]]] | Elsewhere] = {
    "wsgibench servers": [(["servers"], OK)],
    "wsgibench servers --faults": [(["servers", "--faults"], OK)],
    "wsgibench studies": [(["studies"], OK)],
    "wsgibench studies --keys": [(["studies", "--keys"], OK)],
    "wsgibench install bjoern waitress": [(["install", "bjoern", "waitress"], OK)],
    "wsgibench check uwsgi-http": [(["check", "uwsgi-http"], OK)],
    "wsgibench check uwsgi-http11 --app myapp:app": Elsewhere(
        "test_own_app_framing.py::test_one_server_checked_on_ones_own_app"
    ),
    "wsgibench traffic access.log": Elsewhere("test_replay.py::test_traffic_prints_the_logs_model"),
    "wsgibench doctor": [(["doctor"], OK)],
    "wsgibench calibrate SERVER": [(_calibrate(1), OK)],
    "wsgibench calibrate SERVER --pairs 20": [(_calibrate(2), OK)],
    "wsgibench doctor [--fix]": [(["doctor"], OK), (["doctor", "--fix"], OK)],
    "wsgibench run goldberg2016 --results results/g.sqlite": [
        (
            [
                "run",
                "goldberg2016",
                "--results",
                "{g}",
                "--servers",
                "bjoern",
                "--levels",
                "100",
                *SMALL,
            ],
            OK,
        )
    ]
    * 2,  # fmt: skip  (two runs: `compare` of one store compares them)
    "wsgibench show results/g.sqlite": [(["show", "{g}"], OK)],
    "wsgibench run quick --servers nginx-baseline": [
        (
            [
                "run",
                "quick",
                "--servers",
                "nginx-baseline",
                "--levels",
                "20",
                *SMALL,
                "--no-report",
                "--results",
                "{tmp}/ceiling.sqlite",
            ],
            OK,
        )
    ],  # fmt: skip
    "wsgibench export results/g.sqlite --format csv > g.csv": [
        ("{script} export {g} --format csv > {tmp}/g.csv", OK)
    ],
    "wsgibench report results/g.sqlite --out report/": [
        (["report", "{g}", "--out", "{tmp}/report"], OK)
    ],
    "wsgibench report RESULTS --out DIR": [(["report", "{g}", "--out", "{tmp}/r2"], OK)],
    "wsgibench compare old.sqlite new.sqlite": [(["compare", "{g}", "{g}"], OK)],
    "wsgibench compare results/g.sqlite": [(["compare", "{g}"], OK)],
    "wsgibench compare A B": [(["compare", "{g}", "{g}", "--study-a", "1", "--study-b", "2"], OK)],
    "wsgibench run STUDY --levels 100,200 --duration 10 --repeats 5 --servers a,b": [
        (
            [
                "run",
                "quick",
                "--levels",
                "10,20",
                "--duration",
                "0.5",
                "--repeats",
                "2",
                "--servers",
                "bjoern,waitress",
                "--results",
                "{s}",
                "--no-report",
            ],
            OK,
        )
    ],  # fmt: skip
    "wsgibench run STUDY --load-hosts 3": [
        (["run", *QUICK, "--load-hosts", "3", "--results", "{r}"], OK)
    ],
    "wsgibench run quick --servers bjoern --levels 50 --duration 2 --repeats 1 --load-hosts 2": (
        Elsewhere("test_first_steps.py::test_the_readme_load_hosts_line")
    ),
    "wsgibench run STUDY --results X --resume": [
        (["run", *QUICK, "--results", "{s}", "--resume"], OK)
    ],
    "wsgibench run db2011": Elsewhere(
        "test_seed_sections.py::test_seed_section_rests_on_trusted_cells_only"
    ),
    "wsgibench run scaling": [
        (["run", "scaling", "--servers", "bjoern", *SMALL, "--results", "{r}", "--no-report"], OK)
    ],
    "wsgibench run tornado2015": [
        (["run", "tornado2015", *SLEEP, "--repeats", "1", "--results", "{r}", "--no-report"], OK)
    ],
    "wsgibench run tornado2015 --app-env WSGIBENCH_SLEEP_S=0.1": [
        (
            [
                "run",
                "tornado2015",
                "--app-env",
                "WSGIBENCH_SLEEP_S=0.1",
                "--servers",
                "tornado-native-async",
                "--repeats",
                "1",
                "--results",
                "{r}",
                "--no-report",
            ],
            OK,
        )
    ],  # fmt: skip
    "wsgibench run tornado2015-mixed": [
        (
            [
                "run",
                "tornado2015-mixed",
                *SLEEP,
                "--repeats",
                "1",
                "--results",
                "{r}",
                "--no-report",
            ],
            OK,
        )
    ],  # fmt: skip
    # One's own app: the README's example folder, and an app file written where the command runs.
    "wsgibench run examples/flask-app/study.toml": [
        (
            [
                "run",
                str(ROOT / "examples" / "flask-app" / "study.toml"),
                "--levels",
                "4",
                *SMALL,
                "--results",
                "{tmp}/example.sqlite",
                "--no-report",
            ],
            OK,
        )
    ],  # fmt: skip
    "wsgibench run quick --app myapp:app --requirements requirements.txt --path /api/items": [
        (
            "printf 'import humanize\\ndef app(environ, start_response):\\n"
            '    start_response("200 OK", [("Content-Length", "2")])\\n'
            '    return [b"ok"]\\n\' > myapp.py && '
            "echo humanize==4.12.3 > requirements.txt && "
            "{script} run quick --app myapp:app --requirements requirements.txt --path /api/items "
            "--servers waitress --no-ceiling --levels 4 --duration 0.5 --repeats 1 "
            "--results {tmp}/mine.sqlite --no-report",
            OK,
        )
    ],
    "wsgibench run frameworks": Elsewhere(
        "test_frameworks.py::test_every_framework_on_two_servers_every_endpoint_valid"
    ),
    "wsgibench tune gunicorn-gthread --app sleep --app-env WSGIBENCH_SLEEP_S=0.05 --p99-ms 200": (
        Elsewhere("test_tune.py::test_tune_ranks_eight_threads_over_one")
    ),
    "wsgibench tune SERVER... --app APP --p99-ms 200": [(["tune", "--help"], OK)],
    "wsgibench history DIR_OR_STORES... [--study NAME] [--server S] [--order time|version]": [
        (["history", "{g}", "{s}", "--order", "version"], OK)
    ],
    "wsgibench history results/nightly/ --server gunicorn-gthread --fail-on-regression 5%": [
        (["history", "{g}", "--server", "bjoern", "--fail-on-regression", "5%"], OK)
    ],
    "wsgibench lock gunicorn-gthread@19.9.0": [(["lock", "gunicorn-gthread@19.9.0"], OK)],
    # Prose that names a command rather than a line to copy: its help must work.
    "wsgibench run": [(["run", "--help"], OK)],
    "wsgibench lock": [(["lock", "--help"], OK)],
}


def _concrete(command: Command, tmp: Path) -> Command:
    paths = {
        "g": tmp / "results" / "g.sqlite",
        "s": tmp / "s.sqlite",
        "r": tmp / "r.sqlite",
        "tmp": tmp,
        "script": SCRIPT,
    }
    if isinstance(command, str):
        return command.format(**paths)
    return [part.format(**paths) for part in command]


def _run(command: Command, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        command if isinstance(command, str) else cli(*command),
        shell=isinstance(command, str),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_every_readme_command_has_a_small_version():
    missing = readme_commands() - set(COMMANDS)
    assert not missing, f"README commands without a small version here: {sorted(missing)}"


def _words_of(path: Path, function: str) -> set[str]:
    """The words of every string in the test file `path`, which must define `function`."""
    tree = ast.parse(path.read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert function in names, f"{path.name} has no test {function}"
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    return {w for v in strings if isinstance(v, str) for w in v.split()}


def test_a_line_run_elsewhere_is_in_that_test():
    for form, entry in COMMANDS.items():
        if isinstance(entry, Elsewhere):
            file, _, function = entry.test.partition("::")
            words = _words_of(Path(__file__).parent / file, function)
            absent = set(form.split()[1:]) - words
            assert not absent, f"{entry.test} does not run {form!r}: no {sorted(absent)}"


# Some forty commands, each bounded by _run's own timeout: more than the suite's 10 minutes a test.
@pytest.mark.timeout(2400)
def test_every_readme_command_runs_through_the_installed_script(tmp_path: Path):
    for server in ("bjoern", "waitress", "uwsgi-http", "tornado-native-async"):
        require(server)
    (tmp_path / "results").mkdir()
    failures = []
    for form in sorted(readme_commands(), key=_order):
        entry = COMMANDS[form]
        for command, codes in [] if isinstance(entry, Elsewhere) else entry:
            command = _concrete(command, tmp_path)
            proc = _run(command, tmp_path)
            said = proc.stdout + proc.stderr
            if "internal error" in said or "Traceback" in said or proc.returncode not in codes:
                shown = command if isinstance(command, str) else " ".join(command)
                failures.append(f"{shown} -> exit {proc.returncode}: {said[-600:]}")
            if form.endswith("--resume"):  # the store's run of quick finished: nothing to do
                assert "nothing to resume" in proc.stdout, proc.stdout[-600:]
    assert not failures, "\n".join(failures)
    assert (tmp_path / "g.csv").read_text().startswith("study,cell_id,")
    assert (tmp_path / "report" / "report.html").exists()


def _order(form: str) -> tuple[int, str]:
    """Runs that write a store come before the commands that read it."""
    writes = " run " in f" {form} " and "--help" not in form
    first = "goldberg2016" in form or "--levels 100,200" in form
    return (0 if first else 1 if writes else 2 if "--resume" not in form else 3, form)
