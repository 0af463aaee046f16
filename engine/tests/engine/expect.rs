//! The checks of a JSON reply (`body_contains`, `json`, `content_type`) against a real server:
//! every reply that fails one is counted bad_body, exactly, and every other one ok.

use crate::common;

use common::*;
use serde_json::{json, Value};
use wsgibench_engine::validate::BUFFER_CAP;

fn kind(name: &str, path: &str, weight: f64, expect: Value) -> Value {
    json!({"name": name, "method": "GET", "path": path, "weight": weight, "expect": expect})
}

/// What "Hello, World!" with 20 rows must be.
fn world() -> Value {
    json!({"status": 200, "body_contains": "Hello, World!", "content_type": "application/json",
           "json": {"message": "Hello, World!", "rows.19.id": 1020, "rows.0.n": 1}})
}

fn ok_of(r: &Value, k: usize) -> u64 {
    r["kinds"][k]["ok"].as_u64().unwrap()
}

fn bad_body_of(r: &Value, k: usize) -> u64 {
    r["kinds"][k]["errors"]["bad_body"].as_u64().unwrap()
}

#[test]
fn json_replies_are_ok_or_bad_body_exactly() {
    // Every 4th request to /json/20 gets a body that is not JSON, every 4th one a chunked reply.
    let srv = TestServer::start(|n, req| match (req.path.as_str(), n % 4) {
        ("/json/20", 3) => Action::WrongBody,
        ("/json/20", 1) => Action::Chunked,
        _ => Action::Reply,
    });
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 600, "concurrency": 4}),
    );
    let mut typed = world();
    typed["content_type"] = json!("text/html");
    p["requests"] = json!([
        kind("world", "/json/20", 3.0, world()),
        kind("short", "/json/19", 1.0, world()),
        kind("typed", "/json/20?html", 1.0, typed),
        kind(
            "untyped",
            "/",
            1.0,
            json!({"status": 200, "content_type": "text/plain"})
        ),
        kind(
            "pong",
            "/",
            1.0,
            json!({"status": 200, "body": "Pong!", "body_contains": "ong"})
        ),
    ]);
    let r = run(&p);
    assert_accounting(&r);
    let (world_n, wrong) = (srv.counts.path("/json/20"), srv.n(Action::WrongBody));
    assert!(wrong > 10 && srv.n(Action::Chunked) > 10, "{wrong}");
    assert_eq!((ok_of(&r, 0), bad_body_of(&r, 0)), (world_n - wrong, wrong));
    let requests = |k: usize| r["kinds"][k]["requests_sent"].as_u64().unwrap();
    assert_eq!(requests(1), srv.counts.path("/json/19"));
    assert_eq!(requests(2), srv.counts.path("/json/20?html"));
    for k in 1..=3 {
        assert_eq!(
            (ok_of(&r, k), bad_body_of(&r, k)),
            (0, requests(k)),
            "kind {k}"
        );
    }
    assert_eq!((ok_of(&r, 4), bad_body_of(&r, 4)), (requests(4), 0));
    assert_eq!(requests(3) + requests(4), srv.counts.path("/"));
    assert_eq!(total(&r, "ok"), world_n - wrong + requests(4));
    assert_eq!(all_errors(&r), err(&r, "bad_body"));
    assert_eq!(total(&r, "requests_sent"), 600);
}

#[test]
fn a_body_beyond_the_cap_is_bad_body() {
    let (under, over) = (40_000, 50_000);
    assert!(json_world(under).len() < BUFFER_CAP && json_world(over).len() > BUFFER_CAP);
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 12, "concurrency": 2}),
    );
    let first = json!({"status": 200, "json": {"rows.0.id": 1001}});
    p["requests"] = json!([
        kind("under", &format!("/json/{under}"), 1.0, first.clone()),
        kind("over", &format!("/json/{over}"), 1.0, first),
    ]);
    let r = run(&p);
    assert_accounting(&r);
    let under_n = srv.counts.path(&format!("/json/{under}"));
    let over_n = srv.counts.path(&format!("/json/{over}"));
    assert_eq!(under_n + over_n, 12);
    assert_eq!((ok_of(&r, 0), bad_body_of(&r, 0)), (under_n, 0));
    assert_eq!((ok_of(&r, 1), bad_body_of(&r, 1)), (0, over_n));
}
