//! WebSocket echo loads against a server that drops, duplicates, corrupts and fragments known
//! messages, pings, closes, and refuses upgrades in each way: the engine's counts must equal
//! what the server did, on the backend the suite runs on (`WSGIBENCH_ENGINE_IO`).

use crate::common;

use std::sync::atomic::Ordering;

use common::{assert_accounting, err, run, settled, total, Msg, Upgrade, WsServer};
use serde_json::{json, Value};

fn ws_plan(port: u16, model: Value, message_bytes: u64) -> Value {
    let mut p = common::plan(port, model);
    p["requests"] = json!([{"name": "echo", "method": "GET", "path": "/ws"}]);
    p["websocket"] = json!({"message_bytes": message_bytes});
    p["timeout_s"] = json!(1.0);
    p
}

fn ws(r: &Value, key: &str) -> u64 {
    r["websocket"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("websocket.{key} missing: {}", r["websocket"]))
}

#[test]
fn a_clean_echo_load_counts_every_message_once_and_masks_every_frame() {
    let srv = WsServer::start(|_| Upgrade::Accept, |_| Msg::Echo);
    let r = run(&ws_plan(
        srv.port,
        json!({"kind": "count", "requests": 3000, "concurrency": 6}),
        200,
    ));
    assert_accounting(&r);
    assert_eq!(
        (total(&r, "requests_sent"), total(&r, "ok")),
        (3000, 3000),
        "{}",
        r["totals"]
    );
    assert_eq!(srv.msgs(Msg::Echo), 3000);
    assert_eq!(ws(&r, "handshakes_ok"), 6);
    assert_eq!(ws(&r, "messages_received"), 3000);
    assert_eq!(r["websocket"]["handshake_us"]["count"], 6);
    assert_eq!(r["kinds"][0]["latency_us"]["count"], 3000);
    // Every frame the engine sent was masked, and each connection said goodbye (1000).
    assert_eq!(settled(6, || srv.client_closes(1000)), 6);
    assert_eq!(srv.counts.unmasked.load(Ordering::SeqCst), 0);
}

#[test]
fn lost_duplicated_corrupt_fragmented_and_pinged_messages_are_counted_exactly() {
    let policy = |seq| match seq {
        3 | 13 => Msg::Drop,
        5 => Msg::Duplicate,
        7 => Msg::Corrupt,
        9 => Msg::Fragment(3),
        11 => Msg::PingThenEcho,
        _ => Msg::Echo,
    };
    let srv = WsServer::start(|_| Upgrade::Accept, policy);
    // 10 connections, 20 messages each, all in flight at once (a rate per connection).
    let model = json!({"kind": "rate", "rate": 200, "connections_total": 10, "calls": 20,
                       "pipeline": true});
    let r = run(&ws_plan(srv.port, model, 100));
    assert_accounting(&r);
    assert_eq!(total(&r, "requests_sent"), 200);
    assert_eq!(err(&r, "message_lost"), 20, "{}", r["totals"]);
    assert_eq!(err(&r, "bad_body"), 10);
    assert_eq!(total(&r, "ok"), 170);
    assert_eq!(ws(&r, "duplicates"), 10);
    assert_eq!(ws(&r, "fragmented"), 10);
    // A ping inside each fragmented echo, and one before each PingThenEcho.
    assert_eq!((ws(&r, "pings"), ws(&r, "pongs_sent")), (20, 20));
    assert_eq!(settled(20, || srv.counts.pongs.load(Ordering::SeqCst)), 20);
    assert_eq!(srv.msgs(Msg::Drop), 20);
    assert_eq!(common::all_errors(&r), 30);
}

#[test]
fn a_server_close_is_answered_with_its_code_and_ends_the_connection() {
    let srv = WsServer::start(
        |_| Upgrade::Accept,
        |seq| {
            if seq == 4 {
                Msg::EchoThenClose(1001)
            } else {
                Msg::Echo
            }
        },
    );
    let model = json!({"kind": "rate", "rate": 100, "connections_total": 5, "calls": 5});
    let r = run(&ws_plan(srv.port, model, 64));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 25, "{}", r["totals"]);
    assert_eq!(r["websocket"]["close_codes"], json!({"1001": 5}));
    assert_eq!(total(&r, "idle_close"), 0);
    assert_eq!(settled(5, || srv.client_closes(1001)), 5);
}

#[test]
fn refused_and_broken_upgrades_fail_their_messages_by_reason() {
    let upgrade = |conn| match conn {
        0 => Upgrade::Status(403),
        1 => Upgrade::WrongAccept,
        2 => Upgrade::NoUpgradeHeader,
        3 => Upgrade::CloseBeforeReply,
        4 => Upgrade::Hang,
        _ => Upgrade::Accept,
    };
    let srv = WsServer::start(upgrade, |_| Msg::Echo);
    // One connection at a time, so that connection i meets upgrade policy i.
    let model = json!({"kind": "count", "requests": 8, "concurrency": 1});
    let mut p = ws_plan(srv.port, model, 32);
    p["timeout_s"] = json!(0.5);
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(err(&r, "handshake_failed"), 5, "{}", r["totals"]);
    assert_eq!(total(&r, "ok"), 3);
    assert_eq!(
        r["websocket"]["handshake_failures"],
        json!({"status": 1, "headers": 1, "accept": 1, "closed": 1, "timeout": 1})
    );
    assert_eq!(r["websocket"]["handshake_statuses"], json!({"403": 1}));
    assert_eq!(ws(&r, "handshakes_ok"), 1);
}
