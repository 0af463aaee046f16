"""A broadcast load: its keys checked against its model and protocol, its engine plan, and a
plan that runs whole on one load host; the result's broadcast object read back and said."""

import pytest

from wsgibench.errors import UsageError
from wsgibench.results.websocket_result import WebSocketResult
from wsgibench.study.model import load_study, parse_study

LOAD = {
    "name": "fan",
    "model": "broadcast",
    "app": "ws_broadcast",
    "protocol": "websocket",
    "levels": [100],
    "publish_rate": 20.0,
    "duration_s": 2.0,
}


def study(**changes):
    load = {k: v for k, v in dict(LOAD, **changes).items() if v is not None}
    return parse_study({"servers": ["uvicorn"], "app": "ws_echo", "load": [load]}, "t.toml")


def test_a_broadcast_load_plans_subscribers_a_publish_rate_and_the_subscribe_path():
    s = study()
    load = s.loads[0]
    plan = load.plan(level=100, port=8000, requests=list(s.requests_of(load)), cpus=None, seed=3)
    d = plan.to_dict()
    assert d["model"] == {
        "kind": "broadcast",
        "duration_s": 2.0,
        "publish_rate": 20.0,
        "subscribers": 100,
    }
    assert d["websocket"] == {"message_bytes": 64}
    assert [r["path"] for r in d["requests"]] == ["/ws/broadcast"]
    # One clock for due and receipt times: the whole load on the first host.
    assert [p.model.level for p in plan.split(3)] == [100]
    assert plan.bound_s > 2.0 + 2 * plan.timeout_s


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"protocol": None}, 'model broadcast needs protocol = "websocket"'),
        ({"message_bytes": 16}, "message_bytes >= 32"),
        ({"tls": True}, "plain TCP"),
        ({"publish_rate": None}, "needs publish_rate"),
        ({"duration_s": None}, "needs duration_s"),
    ],
)
def test_a_broadcast_load_that_cannot_run_is_refused_with_the_reason(changes, said):
    with pytest.raises(UsageError, match=said):
        study(**changes)


def test_the_websockets_study_broadcasts_to_a_thousand_subscribers():
    s = load_study("websockets")
    (fan,) = [load for load in s.loads if load.model == "broadcast"]
    assert 1000 in fan.levels and s.workers == 1
    assert [r.path for r in s.requests_of(fan)] == ["/ws/broadcast"]


def test_the_broadcast_object_is_read_and_said_in_one_line():
    ws = WebSocketResult.read(
        {
            "handshakes_ok": 11,
            "broadcast": {
                "subscribers": 10,
                "subscribers_open": 10,
                "subscribers_cut": 1,
                "publisher_open": True,
                "published": 50,
                "due": 500,
                "delivered": 480,
                "lost": 15,
                "corrupt": 5,
                "duplicates": 2,
            },
        }
    )
    assert ws is not None and ws.broadcast is not None
    assert ws.broadcast.due == ws.broadcast.delivered + ws.broadcast.lost + ws.broadcast.corrupt
    assert ws.broadcast.summary() == (
        "broadcast: 10 of 10 subscribers open, 50 published, 500 due: 480 delivered, 15 lost, "
        "5 corrupt, 2 duplicated, 1 subscribers cut"
    )
    silent = WebSocketResult.read({"broadcast": {"subscribers": 3, "subscribers_open": 3}})
    assert silent is not None and silent.broadcast is not None
    assert (
        silent.broadcast.summary() == "broadcast: the publisher did not open (3 subscribers open)"
    )
    assert WebSocketResult.read({"handshakes_ok": 1}).broadcast is None  # type: ignore[union-attr]


def test_a_broadcast_load_takes_the_broadcast_role_and_no_other():
    assert study().loads[0].role == "broadcast"  # the model's own, said or not
    assert study(role="broadcast").loads[0].role == "broadcast"
    with pytest.raises(UsageError, match='judged on delivery latency and loss: role = "broadcast"'):
        study(role="framework")


def test_a_role_is_declared_and_checked_never_guessed():
    base = {"name": "l", "model": "closed", "levels": [4], "duration_s": 1.0}

    def role(**keys):
        raw = {"servers": ["uvicorn"], "app": "ws_echo", "load": [base | keys]}
        return parse_study(raw, "t.toml").loads[0].role

    assert role(app="flask") is None  # an app of its own makes no framework
    assert role(app="flask", role="framework") == "framework"
    assert role(role="ceiling") == "ceiling"
    assert role(protocol="websocket", role="echo") == "echo"
    with pytest.raises(UsageError, match='role = "echo" is for protocol = "websocket" only'):
        role(role="echo")
    with pytest.raises(UsageError, match='role = "broadcast" is for model broadcast only'):
        role(role="broadcast")
    with pytest.raises(UsageError, match=r'role must be one of .*not "frame" \(did you mean'):
        role(role="frame")


def test_the_built_in_studies_declare_their_roles():
    frameworks = {load.name: load.role for load in load_study("frameworks").loads}
    assert frameworks.pop("pong") == "ceiling" and set(frameworks.values()) == {"framework"}
    websockets = {load.name: load.role for load in load_study("websockets").loads}
    assert websockets == {"echo": "echo", "broadcast": "broadcast"}
