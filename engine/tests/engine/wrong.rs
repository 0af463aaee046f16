//! Wrong replies quoted (`wrong_replies`): the first of each class per kind, with its status,
//! head, first body bytes and the check's reason, against a real server, on either backend.

use crate::common;

use common::*;
use serde_json::{json, Value};
use wsgibench_engine::wrong::BODY_KEEP;

/// The kind's quoted replies, by error class.
fn quoted(r: &Value, k: usize, class: &str) -> Value {
    let all = r["kinds"][k]["wrong_replies"].as_array().unwrap();
    let found: Vec<&Value> = all.iter().filter(|w| w["error"] == class).collect();
    assert_eq!(found.len(), 1, "one {class} quoted in {all:?}");
    found[0].clone()
}

fn count(port: u16, requests: u64) -> Value {
    plan(
        port,
        json!({"kind": "count", "requests": requests, "concurrency": 2}),
    )
}

#[test]
fn a_500_is_quoted_with_its_head_and_body() {
    let srv = TestServer::start(|n, _| {
        if n % 3 == 2 {
            Action::Status500
        } else {
            Action::Reply
        }
    });
    let r = run(&count(srv.port, 30));
    assert!(srv.n(Action::Status500) > 0);
    let w = quoted(&r, 0, "bad_status");
    assert_eq!(w["status"], 500);
    assert_eq!(w["reason"], "status 500, expected 200");
    let head = w["head"].as_str().unwrap();
    assert!(
        head.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{head}"
    );
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    assert_eq!(w["body"], "Error");
    assert_eq!(
        (w["head_cut"].clone(), w["body_cut"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(r["kinds"][0]["wrong_replies"].as_array().unwrap().len(), 1);
}

#[test]
fn a_wrong_json_value_is_named_and_a_clean_run_quotes_nothing() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = count(srv.port, 6);
    p["requests"] = json!([
        {"name": "world", "method": "GET", "path": "/json/5", "weight": 1,
         "expect": {"status": 200, "json": {"rows.0.id": 1001, "rows.4.id": 8}}},
        {"name": "pong", "method": "GET", "path": "/", "weight": 1,
         "expect": {"status": 200, "body": "Pong!"}},
    ]);
    let r = run(&p);
    let w = quoted(&r, 0, "bad_body");
    assert_eq!(w["reason"], "json rows.4.id: got 1005, expected 8");
    assert_eq!(w["status"], 200);
    assert_eq!(w["body"], json_world(5));
    assert!(w["head"]
        .as_str()
        .unwrap()
        .contains("Content-Type: application/json"));
    assert_eq!(
        r["kinds"][1]["wrong_replies"],
        json!([]),
        "valid replies are not quoted"
    );
}

#[test]
fn long_and_chunked_bodies_are_quoted_as_sent_and_cut() {
    // 3,000 rows: about 80 KB, over several reads; the quote keeps the first 512 bytes.
    let srv = TestServer::start(|_, req| {
        if req.path == "/" {
            Action::Chunked
        } else {
            Action::Reply
        }
    });
    let mut p = count(srv.port, 8);
    p["requests"] = json!([
        {"name": "big", "method": "GET", "path": "/json/3000", "weight": 1,
         "expect": {"status": 200, "body_contains": "no such text"}},
        {"name": "chunked", "method": "GET", "path": "/", "weight": 1,
         "expect": {"status": 200, "body": "Ping!"}},
    ]);
    let r = run(&p);
    let big = quoted(&r, 0, "bad_body");
    assert_eq!(big["reason"], "body does not contain \"no such text\"");
    assert_eq!(
        big["body"].as_str().unwrap(),
        &json_world(3000)[..BODY_KEEP]
    );
    assert_eq!(big["body_cut"], true);
    assert!(big["head"].as_str().unwrap().starts_with("HTTP/1.1 200"));
    let chunked = quoted(&r, 1, "bad_body");
    assert_eq!(
        chunked["reason"],
        "body differs from the expected \"Ping!\" at byte 1 (5 bytes)"
    );
    assert_eq!(chunked["body"], "2\r\nPo\r\n3\r\nng!\r\n0\r\n\r\n");
}

#[test]
fn bytes_that_are_not_http_are_quoted_from_where_parsing_failed() {
    let srv = TestServer::start(|_, _| Action::Garbage);
    let r = run(&count(srv.port, 2));
    let w = quoted(&r, 0, "protocol_error");
    assert_eq!(w["status"], 0);
    assert!(
        w["reason"].as_str().unwrap().starts_with("not HTTP: "),
        "{w}"
    );
    assert_eq!(w["head"], Value::Null);
    assert!(
        w["body"].as_str().unwrap().starts_with("garbage, not http"),
        "{w}"
    );
}
