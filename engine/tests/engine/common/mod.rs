//! In-process HTTP test servers (std::net, a thread per connection) that misbehave on purpose
//! and count what they did, so tests can demand that the engine's counts equal the server's;
//! and helpers to build plans, run them and read results.
#![allow(dead_code)]

mod h2_server;
mod hub_server;
mod quiet;
mod serve;
mod server;
mod tls_front;
mod ws_server;

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[allow(unused_imports)]
pub use h2_server::{H2Behaviour, H2Server};
#[allow(unused_imports)]
pub use hub_server::HubServer;
#[allow(unused_imports)]
pub use quiet::{OtherWork, Quiet, BUSY_PCT};
#[allow(unused_imports)]
pub use server::{Action, Req, TestServer};
#[allow(unused_imports)]
pub use tls_front::{TestCa, TlsFront};
#[allow(unused_imports)]
pub use ws_server::{Msg, Upgrade, WsServer};

/// `{"message": "Hello, World!", "rows": [{"id": 1001, "n": 1.0}, …]}` with `rows` rows.
pub fn json_world(rows: usize) -> String {
    let rows: Vec<String> = (0..rows)
        .map(|i| format!(r#"{{"id": {}, "n": 1.0}}"#, 1001 + i))
        .collect();
    format!(
        r#"{{"message": "Hello, World!", "rows": [{}]}}"#,
        rows.join(", ")
    )
}

/// The I/O backend the suite runs on: `WSGIBENCH_ENGINE_IO` (epoll, io_uring), else the
/// engine's choice (auto). The suite runs once per backend.
pub fn engine_io() -> String {
    std::env::var("WSGIBENCH_ENGINE_IO").unwrap_or_else(|_| "auto".to_owned())
}

/// A plan against `port` with one "pong" kind expecting 200 "Pong!".
pub fn plan(port: u16, model: Value) -> Value {
    json!({
        "engine_io": engine_io(),
        "protocol_version": 1,
        "target": {"host": "127.0.0.1", "port": port},
        "model": model,
        "http": {"version": "1.1", "keep_alive": true},
        "requests": [{"name": "pong", "method": "GET", "path": "/", "weight": 1,
                      "expect": {"status": 200, "body": "Pong!"}}],
        "timeout_s": 2.0,
        "connect_timeout_s": 2.0,
        "threads": 1,
        "seed": 1
    })
}

/// What `count` reads once it reaches `want`, or after 3 s: a test server's threads may still
/// be reading the last bytes (or counting the last handshake) when the engine returns.
pub fn settled(want: u64, count: impl Fn() -> u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(3);
    while count() != want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    count()
}

/// Accept connections on `listener` until `stop` is set, each served by `serve` (with its
/// index among the accepted) on a thread of its own.
pub fn accept_until(
    listener: TcpListener,
    stop: Arc<AtomicBool>,
    serve: impl Fn(u64, TcpStream) + Send + Sync + 'static,
) {
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().enumerate() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            let serve = serve.clone();
            std::thread::spawn(move || serve(i as u64, conn));
        }
    });
}

pub fn run(plan: &Value) -> Value {
    wsgibench_engine::run_value(plan).unwrap_or_else(|e| panic!("run failed: {e}"))
}

pub fn total(r: &Value, key: &str) -> u64 {
    r["totals"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("totals.{key} missing"))
}

pub fn err(r: &Value, class: &str) -> u64 {
    r["totals"]["errors"][class]
        .as_u64()
        .unwrap_or_else(|| panic!("errors.{class} missing"))
}

/// Sum of all error classes.
pub fn all_errors(r: &Value) -> u64 {
    r["totals"]["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Every request sent ended exactly once: ok, or one error class (connect errors are pre-send).
pub fn assert_accounting(r: &Value) {
    let t = &r["totals"];
    let connect: u64 = [
        "connect_refused",
        "connect_timeout",
        "connect_error",
        "fd_limit",
        "ports_exhausted",
        // The upgrade failed: the messages reserved for the connection were never sent.
        "handshake_failed",
        // The TLS handshake failed: nothing was sent on the connection.
        "tls_failed",
    ]
    .iter()
    .map(|c| err(r, c))
    .sum();
    // Arrivals that timed out waiting for a free connection of a pool were never sent.
    let outcomes = total(r, "ok") + all_errors(r) - connect - total(r, "queue_timeouts");
    assert_eq!(
        t["requests_sent"].as_u64().unwrap(),
        outcomes,
        "requests_sent != ok + errors: {t}"
    );
    let broadcast = r["plan"]["model"]["kind"] == "broadcast";
    for k in r["kinds"].as_array().unwrap() {
        let count = |h: &str| k[h]["count"].as_u64().unwrap();
        let kind_err = |c: &str| k["errors"][c].as_u64().unwrap();
        assert_eq!(
            count("reply_latency_us"),
            k["responses"].as_u64().unwrap(),
            "every response has a latency"
        );
        assert_eq!(
            count("latency_us"),
            count("reply_latency_us") + count("failed_latency_us"),
            "every request that ended is in the latency: replies and failures"
        );
        // Every failure but the engine's own limits, at the time it failed (a broadcast's
        // connections that never opened are no message's).
        let failures: u64 = k["errors"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
            - (k["responses"].as_u64().unwrap() - k["ok"].as_u64().unwrap())
            - kind_err("fd_limit")
            - kind_err("ports_exhausted");
        if !broadcast {
            assert_eq!(
                count("failed_latency_us"),
                failures,
                "every failure has a latency"
            );
        }
    }
}

/// A policy that answers every request, and after every `every`-th reply to a request at index
/// `min_seq` or later on its connection, closes that connection silently as `how` says
/// (`ReplyThenFin`, `ReplyThenRst`, `ReplyThenClose`).
pub fn silent_every(
    every: u64,
    min_seq: u64,
    how: Action,
) -> impl Fn(u64, &Req) -> Action + Send + Sync + 'static {
    let seen = AtomicU64::new(0);
    move |_, req| {
        if req.conn_seq >= min_seq && seen.fetch_add(1, Ordering::SeqCst) % every == every - 1 {
            how
        } else {
            Action::Reply
        }
    }
}

/// A server stall: t0 is `after` past the first request the server sees; every request that
/// arrives in [t0, t0 + hold) is held (its connection thread reads nothing more) and answered
/// at t0 + hold exactly, all at once; every other request is answered at once.
pub fn stall_then_answer(
    after: Duration,
    hold: Duration,
) -> impl Fn(u64, &Req) -> Action + Send + Sync + 'static {
    let first = OnceLock::new();
    move |_, _| {
        let now = Instant::now();
        let t0 = *first.get_or_init(|| now) + after;
        if (t0..t0 + hold).contains(&now) {
            Action::ReplyAt(t0 + hold)
        } else {
            Action::Reply
        }
    }
}

/// Sum of the values in a histogram summary (count × mean; exact below 2048 µs).
pub fn sum_us(h: &Value) -> f64 {
    h["count"].as_f64().unwrap() * h["mean"].as_f64().unwrap()
}

/// Every request's corrected latency is its service time plus the time from its intended send
/// to its actual send, which holds its connection's handshake whenever the request opened one
/// (and the schedule lag before the connect began): so Σ latency ≥ Σ service + Σ connect when
/// every connection carried the request it was opened for at an intended time before the
/// connect began. Fails when latency is measured from the connect's end or the actual send.
pub fn assert_latency_holds_connects(r: &Value, what: &str) {
    let k = &r["kinds"][0];
    let (lat, svc, conn) = (
        sum_us(&k["latency_us"]),
        sum_us(&k["service_us"]),
        sum_us(&k["connect_us"]),
    );
    assert_eq!(k["latency_us"]["count"], k["service_us"]["count"]);
    // Histogram values are whole µs (floors), exact below 2048 µs; allow 0.1 % beyond that.
    let slack = 0.001 * (lat + svc + conn);
    assert!(
        lat + slack >= svc + conn,
        "{what}: Σlatency {lat} µs < Σservice {svc} + Σconnect {conn} µs"
    );
}
