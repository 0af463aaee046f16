//! Both I/O backends give the same counts: every load model, against test servers that reply
//! well, with 500s, wrong bodies, resets, silent keep-alive closes, chunked and read-until-close
//! bodies, and a stall under an open loop, run once on epoll and once on io_uring.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// The counts a run must reproduce on the other backend.
fn counts(r: &Value) -> Value {
    let t = &r["totals"];
    json!({
        "requests_sent": t["requests_sent"], "responses": t["responses"], "ok": t["ok"],
        "errors": t["errors"], "bad_status_codes": t["bad_status_codes"],
        "idle_close": t["idle_close"], "unannounced_closes": t["unannounced_closes"],
        "resent": t["resent"], "connections_opened": t["connections_opened"],
        "connection_close_replies": t["connection_close_replies"],
        "unsolicited_bytes": t["unsolicited_bytes"], "abandoned": t["abandoned"],
        "queue_timeouts": t["queue_timeouts"],
    })
}

/// Run `p` against a fresh server of `policy` on each backend; both runs' counts, checked to
/// be on the backend asked for.
fn on_both<P>(policy: impl Fn() -> P, p: impl Fn(u16) -> Value) -> [Value; 2]
where
    P: Fn(u64, &Req) -> Action + Send + Sync + 'static,
{
    ["epoll", "io_uring"].map(|io| {
        let srv = TestServer::start(policy());
        let mut plan = p(srv.port);
        plan["engine_io"] = json!(io);
        let r = run(&plan);
        assert_eq!(r["cost"]["io_backend"], io, "{}", r["cost"]);
        assert_accounting(&r);
        counts(&r)
    })
}

fn assert_same(what: &str, [epoll, uring]: [Value; 2]) {
    assert_eq!(
        epoll, uring,
        "{what}: epoll (left) and io_uring (right) differ"
    );
}

fn count_plan(port: u16, requests: u64, concurrency: u64) -> Value {
    plan(
        port,
        json!({"kind": "count", "requests": requests, "concurrency": concurrency}),
    )
}

#[test]
fn good_and_bad_replies_count_alike() {
    let mixed = || {
        |seq: u64, _: &Req| match seq % 10 {
            3 => Action::Status500,
            6 => Action::WrongBody,
            _ => Action::Reply,
        }
    };
    let both = on_both(mixed, |port| count_plan(port, 300, 4));
    assert_eq!(both[0]["ok"], 240, "{}", both[0]);
    assert_same("500s and wrong bodies", both);
}

#[test]
fn resets_and_closes_without_reply_count_alike() {
    let broken = || {
        |seq: u64, _: &Req| match seq % 25 {
            7 => Action::Reset,
            19 => Action::CloseNoReply,
            _ => Action::Reply,
        }
    };
    // One connection: the policy counts requests across connections, so with two the request
    // that meets a reset is a connection's first (an error) or a reused one's (resent) as the
    // two interleave, on either backend alike; one keeps the order and the counts exact.
    assert_same(
        "resets and closes",
        on_both(broken, |port| count_plan(port, 200, 1)),
    );
}

#[test]
fn silent_keep_alive_closes_count_alike() {
    for how in [Action::ReplyThenFin, Action::ReplyThenRst] {
        let both = on_both(|| silent_every(5, 1, how), |port| count_plan(port, 200, 3));
        assert!(
            both[0]["unannounced_closes"].as_u64() > Some(0),
            "{}",
            both[0]
        );
        assert_same(&format!("{how:?}"), both);
    }
}

#[test]
fn bodies_by_chunks_and_until_close_count_alike() {
    let chunked = || |_: u64, _: &Req| Action::Chunked;
    assert_same("chunked", on_both(chunked, |port| count_plan(port, 100, 2)));
    let until_close = || |_: u64, _: &Req| Action::UntilClose;
    let both = on_both(until_close, |port| {
        let mut p = count_plan(port, 50, 2);
        p["http"] = json!({"version": "1.0", "keep_alive": false});
        p
    });
    assert_eq!(both[0]["ok"], 50, "{}", both[0]);
    assert_same("read until close", both);
}

#[test]
fn open_models_count_alike() {
    let closing = || |_: u64, _: &Req| Action::CloseAfterReply;
    let both = on_both(closing, |port| {
        plan(
            port,
            json!({"kind": "rate", "rate": 200, "connections_total": 20, "calls": 5}),
        )
    });
    assert_eq!(both[0]["idle_close"], 100, "{}", both[0]);
    assert_same("rate, server closes", both);
    let reply = || |_: u64, _: &Req| Action::Reply;
    assert_same(
        "sessions",
        on_both(reply, |port| {
            plan(
                port,
                json!({"kind": "sessions", "users_per_s": 100, "duration_s": 0.3, "requests": 4,
                       "think_s": 0.01}),
            )
        }),
    );
}

#[test]
fn a_pool_counts_alike() {
    // 500s and wrong bodies on a pool of 3, then a pool whose requests all time out, most of
    // them in the client's queue.
    let mixed = || {
        |seq: u64, _: &Req| match seq % 10 {
            3 => Action::Status500,
            6 => Action::WrongBody,
            _ => Action::Reply,
        }
    };
    let pool = |port, rate, pool| {
        plan(
            port,
            json!({"kind": "rate", "rate": rate, "duration_s": 0.4, "pool": pool}),
        )
    };
    let both = on_both(mixed, |port| pool(port, 300, 3));
    assert_eq!(both[0]["ok"], 96, "{}", both[0]);
    assert_same("pool", both);
    let stall = || |_: u64, _: &Req| Action::Stall;
    let both = on_both(stall, |port| {
        let mut p = pool(port, 50, 1);
        p["timeout_s"] = json!(0.15);
        p
    });
    // Which of them went out before timing out, and which timed out queued, rides on timer
    // order within milliseconds: each is counted once, as a timeout, on both.
    for r in &both {
        assert_eq!(r["errors"]["timeout"], 20, "{r}");
        let (sent, queued) = (r["requests_sent"].as_u64(), r["queue_timeouts"].as_u64());
        assert_eq!(sent.unwrap() + queued.unwrap(), 20, "{r}");
    }
}

#[test]
fn a_stall_under_an_open_loop_counts_alike() {
    let stall = || stall_then_answer(Duration::from_millis(150), Duration::from_millis(300));
    let both = on_both(stall, |port| {
        plan(
            port,
            json!({"kind": "rate", "rate": 200, "duration_s": 0.6, "arrival": "uniform",
                   "calls": 1}),
        )
    });
    assert_eq!(both[0]["ok"], 120, "{}", both[0]);
    assert_same("stall", both);
}

#[test]
fn closed_loop_without_keep_alive_counts_alike() {
    let reply = || |_: u64, _: &Req| Action::Reply;
    let both = on_both(reply, |port| {
        let mut p = count_plan(port, 150, 3);
        p["http"] = json!({"version": "1.1", "keep_alive": false});
        p
    });
    assert_eq!(both[0]["connections_opened"], 150, "{}", both[0]);
    assert_same("a connection per request", both);
}

#[test]
fn batches_larger_than_a_submission_chunk_count_alike() {
    // 300 connections: their first requests, and the refills of replies that come together,
    // are more sends than io_uring submits in one chunk before it looks at the schedule again.
    let mixed = || {
        |seq: u64, _: &Req| match seq % 20 {
            9 => Action::Status500,
            _ => Action::Reply,
        }
    };
    let both = on_both(mixed, |port| count_plan(port, 3000, 300));
    assert_eq!(both[0]["ok"], 2850, "{}", both[0]);
    assert_eq!(both[0]["requests_sent"], 3000, "{}", both[0]);
    assert_same("300 connections at once", both);
}
