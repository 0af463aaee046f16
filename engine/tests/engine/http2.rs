//! HTTP/2 (h2c) loads against a server that sends GOAWAY after N streams, resets every k-th
//! stream, gives small flow-control windows, pings and sends large bodies: the engine's counts
//! must equal what the server did, no stream lost, on the backend the suite runs on.

use crate::common;

use common::{assert_accounting, err, run, settled, total, H2Behaviour, H2Server};
use serde_json::{json, Value};

fn h2_plan(port: u16, model: Value, streams: u32) -> Value {
    let mut p = common::plan(port, model);
    p["http2"] = json!({"streams": streams});
    p
}

fn h2(r: &Value, key: &str) -> u64 {
    r["http2"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("http2.{key} missing: {}", r["http2"]))
}

#[test]
fn a_clean_h2c_load_answers_every_stream_once() {
    let srv = H2Server::start(H2Behaviour::default(), b"");
    let r = run(&h2_plan(
        srv.port,
        json!({"kind": "count", "requests": 2000, "concurrency": 4}),
        10,
    ));
    assert_accounting(&r);
    assert_eq!(
        (total(&r, "requests_sent"), total(&r, "ok")),
        (2000, 2000),
        "{}",
        r["totals"]
    );
    assert_eq!(srv.n(|c| &c.answered), 2000);
    assert_eq!(srv.n(|c| &c.bad_requests), 0);
    assert_eq!((h2(&r, "connections"), h2(&r, "streams")), (4, 2000));
    assert_eq!(srv.n(|c| &c.connections), 4);
    assert_eq!(h2(&r, "settings_received"), 4);
    assert_eq!(r["kinds"][0]["latency_us"]["count"], 2000);
}

#[test]
fn goaway_and_reset_streams_are_counted_exactly_and_none_is_lost() {
    let b = H2Behaviour {
        goaway_after: Some(100),
        rst_every: Some(50),
        ping_every: Some(10),
        ..H2Behaviour::default()
    };
    let srv = H2Server::start(b, b"");
    let r = run(&h2_plan(
        srv.port,
        json!({"kind": "count", "requests": 1000, "concurrency": 2}),
        8,
    ));
    assert_accounting(&r);
    // Every request was taken by the server exactly once: 20 reset, the rest answered.
    assert_eq!(srv.n(|c| &c.taken), 1000);
    assert_eq!(err(&r, "stream_reset"), 20, "{}", r["totals"]);
    assert_eq!(total(&r, "ok"), 980, "{}", r["totals"]);
    assert_eq!(total(&r, "requests_sent"), 1000);
    assert_eq!(r["http2"]["rst_streams"], json!({"2": 20}));
    // Streams sent past each GOAWAY were never processed: each went again, once.
    let refused = srv.n(|c| &c.after_goaway);
    assert!(refused > 0, "the test must send streams past a GOAWAY");
    assert_eq!(h2(&r, "refused_by_goaway"), refused);
    assert_eq!(total(&r, "resent"), refused);
    let goaways = srv.n(|c| &c.goaways);
    assert_eq!(r["http2"]["goaways"], json!({"0": goaways}));
    assert_eq!(h2(&r, "connections"), srv.n(|c| &c.connections));
    // Every ping the server sent was answered.
    let pings = srv.n(|c| &c.pings_sent);
    assert!(pings > 0);
    assert_eq!(h2(&r, "pings"), pings);
    assert_eq!(settled(pings, || srv.n(|c| &c.pings_acked)), pings);
}

#[test]
fn a_ping_just_before_a_goaway_is_answered_before_the_connection_closes() {
    // One stream a connection: the server pings, answers, says GOAWAY and shuts its side. No
    // stream is refused, so the engine ends the connection as closed by the server; the PING's
    // ACK it owes must still go out before its close (on either backend).
    let b = H2Behaviour {
        goaway_after: Some(1),
        ping_every: Some(1),
        ..H2Behaviour::default()
    };
    let srv = H2Server::start(b, b"");
    let r = run(&h2_plan(
        srv.port,
        json!({"kind": "count", "requests": 30, "concurrency": 1}),
        1,
    ));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 30, "{}", r["totals"]);
    assert_eq!(srv.n(|c| &c.connections), 30);
    assert_eq!(h2(&r, "refused_by_goaway"), 0);
    assert_eq!((srv.n(|c| &c.pings_sent), h2(&r, "pings")), (30, 30));
    assert_eq!(settled(30, || srv.n(|c| &c.pings_acked)), 30);
}

#[test]
fn flow_control_is_honoured_both_ways_with_small_windows() {
    let b = H2Behaviour {
        window: Some(1000),
        body_bytes: 100_000,
        ..H2Behaviour::default()
    };
    let body = "b".repeat(3000);
    let srv = H2Server::start(b, body.as_bytes());
    let mut p = h2_plan(
        srv.port,
        json!({"kind": "count", "requests": 200, "concurrency": 2}),
        4,
    );
    p["http2"]["window_bytes"] = json!(4096);
    p["requests"][0]["method"] = json!("POST");
    p["requests"][0]["body"] = json!(body);
    p["requests"][0]["expect"] = json!({"status": 200, "body_len": 100_000});
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 200, "{}", r["totals"]);
    assert_eq!(srv.n(|c| &c.bad_requests), 0);
    assert_eq!(srv.n(|c| &c.window_violations), 0);
    assert_eq!(srv.n(|c| &c.body_bytes), 200 * 3000);
    assert!(h2(&r, "window_stalls") > 0, "{}", r["http2"]);
    // 100,000 bytes through a 4,096-byte window: updates given back on every stream.
    assert!(h2(&r, "window_updates_sent") >= 200 * 40, "{}", r["http2"]);
    assert!(h2(&r, "window_updates_received") > 0);
}

#[test]
fn header_blocks_over_16_kib_go_both_ways_in_continuation_frames() {
    // A 40,000-byte request header: HEADERS and two CONTINUATION frames from the engine; a
    // 40,000-byte reply header: the same from the server. Every stream answered and valid.
    let big = "v".repeat(40_000);
    let b = H2Behaviour {
        want_header: Some((b"x-big".to_vec(), big.as_bytes().to_vec())),
        reply_pad: 40_000,
        ..H2Behaviour::default()
    };
    let srv = H2Server::start(b, b"");
    let mut p = h2_plan(
        srv.port,
        json!({"kind": "count", "requests": 60, "concurrency": 2}),
        3,
    );
    p["requests"][0]["headers"] = json!({"X-Big": big});
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 60, "{}", r["totals"]);
    assert_eq!(srv.n(|c| &c.bad_requests), 0);
    assert_eq!(srv.n(|c| &c.answered), 60);
    assert_eq!(srv.n(|c| &c.continuations_in), 60 * 2);
    assert_eq!(srv.n(|c| &c.continuations_out), 60 * 2);
    assert_eq!(r["http2"]["protocol_errors"], json!({}));
}
