"""An app factory named as gunicorn takes it: a call of a name with literal arguments, read from
the spec, and the module of two lines a server imports to get the app."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.study.factory import check_call, is_call, shim_source, write_shim
from wsgibench.study.userapps import locate


@pytest.mark.parametrize(
    "attr", ["create_app()", "create_app('prod')", "make(1, -2.5, debug=True, name=None)"]
)
def test_a_factory_with_literal_arguments_is_an_app(tmp_path: Path, attr: str):
    (tmp_path / "fac.py").write_text("def create_app(): ...\n")
    assert is_call(attr)
    assert locate(f"fac:{attr}", tmp_path) == (tmp_path, "fac", attr)


@pytest.mark.parametrize(
    ("attr", "words"),
    [
        (
            "create_app(CONFIG)",
            "must be literals (strings, numbers, True/False/None), not 'CONFIG'",
        ),
        ("create_app(**opts)", "must be literals"),
        ("create_app(", "neither a callable's name nor a call of one"),
        ("mod.create_app()", "neither a callable's name nor a call of one"),
        ("create_app()()", "neither a callable's name nor a call of one"),
    ],
)
def test_anything_else_in_the_call_is_one_line_naming_it(attr: str, words: str):
    with pytest.raises(UsageError, match=r"^app 'fac:.*': ") as err:
        check_call(f"fac:{attr}", attr)
    assert words in str(err.value)
    assert not is_call("app")


def test_the_shim_makes_the_app_as_gunicorn_would(tmp_path: Path):
    (tmp_path / "fac.py").write_text(
        "def create_app(word='ok', n=1):\n    return lambda: (word, n)\n"
    )
    assert write_shim(tmp_path, "fac", "create_app('hi', n=2)") == "wsgibench_factory"
    assert (tmp_path / "wsgibench_factory.py").read_text() == shim_source(
        "fac", "create_app('hi', n=2)"
    )
    space: dict[str, object] = {}
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        exec((tmp_path / "wsgibench_factory.py").read_text(), space)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fac", None)
    assert space["app"]() == ("hi", 2)  # type: ignore[operator]
