//! WebSocket broadcast loads against a hub that drops, duplicates, corrupts and fragments known
//! deliveries, pings, closes a subscriber, and refuses upgrades: the engine's counts must equal
//! what the hub did, and every message be due at every subscriber open when publishing began.

use crate::common;

use common::{assert_accounting, err, total, HubServer, Msg, Upgrade};
use serde_json::{json, Value};

fn plan(port: u16, subscribers: u64, rate: f64, duration_s: f64, threads: u64) -> Value {
    let model = json!({"kind": "broadcast", "subscribers": subscribers,
                       "publish_rate": rate, "duration_s": duration_s});
    let mut p = common::plan(port, model);
    p["requests"] = json!([{"name": "subscribe", "method": "GET", "path": "/ws/broadcast"}]);
    p["websocket"] = json!({"message_bytes": 64});
    p["timeout_s"] = json!(1.0);
    p["threads"] = json!(threads);
    // Broadcast runs on epoll whatever the suite's backend.
    p["engine_io"] = json!("auto");
    p
}

fn run(p: &Value) -> Value {
    let r = common::run(p);
    assert_accounting(&r);
    r
}

fn b(r: &Value, key: &str) -> u64 {
    r["websocket"]["broadcast"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("websocket.broadcast.{key} missing: {}", r["websocket"]))
}

#[test]
fn every_message_reaches_every_subscriber_once_with_its_latency() {
    let quiet = common::Quiet::start();
    let hub = HubServer::start(|_| Upgrade::Accept, |_, _| Msg::Echo);
    let r = run(&plan(hub.port, 20, 200.0, 1.0, 2));
    assert_eq!(b(&r, "published"), 200, "{}", r["websocket"]);
    assert_eq!(hub.published(), 200);
    assert_eq!((b(&r, "subscribers"), b(&r, "subscribers_open")), (20, 20));
    assert_eq!(b(&r, "due"), 4000);
    assert_eq!(total(&r, "requests_sent"), 4000);
    assert_eq!(total(&r, "ok"), 4000);
    assert_eq!(hub.delivered(Msg::Echo), 4000);
    assert_eq!(
        (b(&r, "lost"), b(&r, "duplicates"), b(&r, "corrupt")),
        (0, 0, 0)
    );
    assert_eq!(r["websocket"]["handshakes_ok"], 21);
    assert_eq!(r["kinds"][0]["latency_us"]["count"], 4000);
    assert_eq!(r["cost"]["io_backend"], "epoll");
    // Each subscriber said goodbye with 1000 once every message had come.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        hub.counts.client_closes.lock().unwrap().get(&1000),
        Some(&21)
    );
    // Loopback delivers within milliseconds of the due time.
    let p50 = r["kinds"][0]["latency_us"]["p50"].as_u64().unwrap();
    quiet.bound(p50 < 50_000, || format!("delivery p50 {p50} µs"));
}

/// What the hub does with message `seq` to connection `to`.
fn faulty(to: u64, seq: u64) -> Msg {
    match (to + seq) % 20 {
        3 => Msg::Drop,
        5 => Msg::Duplicate,
        7 => Msg::Corrupt,
        11 => Msg::Fragment(3),
        13 => Msg::PingThenEcho,
        _ => Msg::Echo,
    }
}

#[test]
fn dropped_duplicated_corrupted_and_fragmented_deliveries_are_counted_exactly() {
    let hub = HubServer::start(|_| Upgrade::Accept, faulty);
    let r = run(&plan(hub.port, 10, 100.0, 1.0, 1));
    let published = b(&r, "published");
    assert_eq!(published, 100);
    let (dropped, dup, bad) = (
        hub.delivered(Msg::Drop),
        hub.delivered(Msg::Duplicate),
        hub.delivered(Msg::Corrupt),
    );
    let (frag, ping) = (
        hub.delivered(Msg::Fragment(3)),
        hub.delivered(Msg::PingThenEcho),
    );
    assert!(dropped > 0 && dup > 0 && bad > 0 && frag > 0 && ping > 0);
    assert_eq!(b(&r, "due"), 1000);
    assert_eq!(b(&r, "lost"), dropped);
    assert_eq!(err(&r, "message_lost"), dropped);
    assert_eq!(b(&r, "duplicates"), dup);
    assert_eq!(b(&r, "corrupt"), bad);
    assert_eq!(err(&r, "bad_body"), bad);
    assert_eq!(
        total(&r, "ok"),
        hub.delivered(Msg::Echo) + dup + frag + ping
    );
    assert_eq!(r["websocket"]["fragmented"], frag);
    // A ping before each PingThenEcho delivery and in the middle of each fragmented one.
    assert_eq!(r["websocket"]["pings"], ping + frag);
    assert_eq!(r["websocket"]["pongs_sent"], ping + frag);
}

#[test]
fn a_subscriber_the_server_closes_loses_every_later_message() {
    // Connection 2 (a subscriber: one thread connects them first) gets message 40, then a close.
    let hub = HubServer::start(
        |_| Upgrade::Accept,
        |to, seq| match (to, seq) {
            (2, 40) => Msg::EchoThenClose(1001),
            _ => Msg::Echo,
        },
    );
    let r = run(&plan(hub.port, 5, 100.0, 1.0, 1));
    assert_eq!(b(&r, "published"), 100);
    assert_eq!(b(&r, "subscribers_cut"), 1);
    assert_eq!(b(&r, "lost"), 100 - 41);
    assert_eq!(total(&r, "ok"), 4 * 100 + 41);
    assert_eq!(r["websocket"]["close_codes"]["1001"], 1);
}

#[test]
fn refused_and_silent_upgrades_fail_and_the_others_still_get_everything() {
    let hub = HubServer::start(
        |i| match i {
            1 => Upgrade::Status(403),
            3 => Upgrade::Hang,
            _ => Upgrade::Accept,
        },
        |_, _| Msg::Echo,
    );
    let r = run(&plan(hub.port, 6, 50.0, 0.5, 1));
    assert_eq!(
        err(&r, "handshake_failed"),
        2,
        "{} {}",
        r["websocket"],
        r["totals"]
    );
    assert_eq!(r["websocket"]["handshake_failures"]["status"], 1);
    assert_eq!(r["websocket"]["handshake_failures"]["timeout"], 1);
    assert_eq!(r["websocket"]["handshake_statuses"]["403"], 1);
    assert_eq!(b(&r, "subscribers_open"), 4);
    assert_eq!(b(&r, "published"), 25);
    assert_eq!((b(&r, "due"), total(&r, "ok")), (100, 100));
}

#[test]
fn a_publisher_that_cannot_upgrade_publishes_nothing_and_says_so() {
    // With one thread the publisher is the last connection.
    let hub = HubServer::start(
        |i| {
            if i == 3 {
                Upgrade::Status(404)
            } else {
                Upgrade::Accept
            }
        },
        |_, _| Msg::Echo,
    );
    let r = run(&plan(hub.port, 3, 50.0, 0.5, 1));
    assert_eq!(r["websocket"]["broadcast"]["publisher_open"], false);
    assert_eq!((b(&r, "published"), b(&r, "due")), (0, 0));
    assert_eq!(err(&r, "handshake_failed"), 1);
    assert_eq!(total(&r, "ok"), 0);
}

#[test]
fn broadcast_plans_that_cannot_run_are_refused_with_the_reason() {
    let base = plan(9, 3, 10.0, 1.0, 1);
    let refused = |p: &Value, why: &str| {
        let e = wsgibench_engine::run_value(p)
            .expect_err("refused")
            .to_string();
        assert!(e.contains(why), "{e}");
    };
    let mut p = base.clone();
    p.as_object_mut().unwrap().remove("websocket");
    refused(&p, "needs a websocket section");
    let mut p = base.clone();
    p["websocket"]["message_bytes"] = json!(20);
    refused(&p, "message_bytes must be >= 32");
    let mut p = base.clone();
    p["tls"] = json!({"verify": false});
    refused(&p, "plain TCP");
    let mut p = base;
    p["model"]["publish_rate"] = json!(0);
    refused(&p, "publish_rate");
}
