//! Intended send times survive reconnects: a request that goes on a new connection because the
//! server closed the old one is intended when it would have gone on the old one, so its
//! latency includes the reconnect.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn rate_calls_on_new_connections_keep_their_intended_time() {
    // HTTP/1.1 with Connection: close: each of the 20 calls of an arrival needs a connection
    // of its own; calls 2.. are intended at the previous reply, before their reconnect. (Many
    // calls per arrival, so that the first calls' schedule lag can not make up for the
    // reconnects the latency would lack without the fix.)
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "rate", "rate": 50, "connections_total": 10, "calls": 20}),
    );
    p["http"] = json!({"version": "1.1", "keep_alive": false});
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 200, "{}", r["totals"]);
    assert_eq!(total(&r, "connections_opened"), 200);
    assert_eq!(all_errors(&r), 0);
    assert_latency_holds_connects(&r, "rate calls=20, Connection: close");
}

#[test]
fn rate_calls_after_the_server_drops_the_connection_keep_their_intended_time() {
    // The client asks for keep-alive; the server closes after every reply unannounced (FIN
    // with the reply, nothing outstanding: an idle close).
    let srv = TestServer::start(|_, _| Action::CloseAfterReply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "rate", "rate": 50, "connections_total": 10, "calls": 20}),
    ));
    assert_eq!(total(&r, "ok"), 200, "{}", r["totals"]);
    assert_eq!(total(&r, "connections_opened"), 200);
    assert_eq!(total(&r, "idle_close"), 200);
    assert_eq!(all_errors(&r), 0);
    assert_latency_holds_connects(&r, "rate calls=20, server closes");
}

#[test]
fn sessions_resumed_after_a_close_during_think_keep_their_intended_time() {
    // The server closes after every reply, during the user's think time: each next request
    // is intended at the end of the think time and goes on a new connection.
    let srv = TestServer::start(|_, _| Action::CloseAfterReply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "sessions", "users_per_s": 40, "duration_s": 0.25, "requests": 3,
               "think_s": 0.02}),
    ));
    assert_eq!(total(&r, "ok"), 30, "{}", r["totals"]);
    assert_eq!(total(&r, "connections_opened"), 30);
    assert_eq!(all_errors(&r), 0);
    assert_latency_holds_connects(&r, "sessions, server closes during think");
}
