"""The check of one reply per request kind before the load: a wrong one is an error quoting the
engine's reason and the body's first bytes (escaped); other failures are not wrong replies; and
which loads are checked (not a WebSocket load, each app and mix once)."""

from __future__ import annotations

import pytest

from wsgibench.results.engine_result import EngineResult
from wsgibench.run.replycheck import WrongReply, _judge, checked_loads
from wsgibench.study.loads import RequestKind
from wsgibench.study.model import parse_study

from .fakes import result

KIND = RequestKind(name="item", path="/items", expect={"status": 200})


def _result(errors: dict[str, int], quoted: list[dict] | None = None) -> EngineResult:
    doc = result(ok=0 if errors else 1, errors=errors).raw
    doc["kinds"][0]["wrong_replies"] = quoted or []
    return EngineResult.from_dict(doc)


def _load():
    study = parse_study(
        {"servers": ["waitress"], "load": [{"model": "closed", "levels": [2], "duration_s": 1}]},
        "s",
    )
    return study.loads[0]


def test_a_wrong_reply_is_quoted_with_its_reason_and_first_body_bytes():
    quoted = {
        "error": "bad_status", "status": 500, "reason": "status 500, expected 200",
        "head": "HTTP/1.1 500 Oops\r\n\r\n", "head_cut": False,
        "body": "\x1b[2J" + "x" * 300, "body_cut": False,
    }  # fmt: skip
    with pytest.raises(WrongReply) as said:
        _judge(KIND, _load(), "waitress", _result({"bad_status": 1}, [quoted]))
    text = str(said.value)
    assert text.startswith("load closed, request kind item (GET /items) on waitress")
    assert 'status 500, expected 200; its body: "\\x1b[2J' + "x" * 196 + '"…' in text
    assert "\x1b" not in text and said.value.exit_code == 2


def test_other_failures_are_not_wrong_replies_and_a_valid_reply_passes():
    _judge(KIND, _load(), "waitress", _result({}))
    _judge(KIND, _load(), "waitress", _result({"timeout": 1}))
    with pytest.raises(WrongReply, match="bad_body \\(the engine quoted no reply\\)"):
        _judge(KIND, _load(), "waitress", _result({"bad_body": 1}))


def test_each_app_and_request_mix_is_checked_once_and_no_websocket_load():
    study = parse_study(
        {
            "servers": ["uvicorn"],
            "load": [
                {"name": "a", "model": "closed", "levels": [2], "duration_s": 1},
                {"name": "b", "model": "closed", "levels": [8], "duration_s": 1},
                {"name": "ws", "model": "closed", "levels": [2], "duration_s": 1,
                 "protocol": "websocket", "app": "ws_echo"},
            ],
        },
        "s",
    )  # fmt: skip

    class Ctx:
        pass

    ctx = Ctx()
    ctx.study = study
    ctx.app = study.app_of
    assert [load.name for load in checked_loads(ctx)] == ["a"]


def test_a_disqualification_cites_the_first_reply_of_the_commonest_wrong_class():
    from wsgibench.run.judge import first_wrong

    quoted = [
        {"error": "bad_status", "status": 500, "reason": "status 500, expected 200",
         "head": None, "head_cut": False, "body": None, "body_cut": False},
        {"error": "bad_body", "status": 200, "reason": "json id: got 7, expected 8\x1b[2J",
         "head": None, "head_cut": False, "body": None, "body_cut": False},
    ]  # fmt: skip
    said = first_wrong(_result({"bad_status": 2, "bad_body": 9}, quoted))
    assert said == "; first bad_body (kind pong): json id: got 7, expected 8\\x1b[2J"
    assert first_wrong(_result({})) == ""
