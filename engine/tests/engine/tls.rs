//! TLS loads (HTTP/1.1 over TLS, h2 over ALPN, WebSocket over TLS) through a TLS front in front
//! of the test servers: the engine's handshakes, resumptions and ALPN counts must equal the
//! server's, and every way a TLS connection fails is its own reason under `tls_failed`.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;

use common::{
    assert_accounting, err, run, settled, total, Action, H2Behaviour, H2Server, Msg, TestCa,
    TestServer, TlsFront, Upgrade, WsServer,
};
use serde_json::{json, Value};

fn tls_plan(port: u16, model: Value, tls: Value) -> Value {
    let mut p = common::plan(port, model);
    p["tls"] = tls;
    p
}

fn tls(r: &Value, key: &str) -> u64 {
    r["tls"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("tls.{key} missing: {}", r["tls"]))
}

fn failures(r: &Value, why: &str) -> u64 {
    r["tls"]["failures"][why].as_u64().unwrap_or(0)
}

#[test]
fn an_https_load_answers_every_request_and_counts_each_handshake() {
    let ca = TestCa::new();
    let srv = TestServer::start(|_, _| Action::Reply);
    let front = TlsFront::start(srv.port, &ca, &[b"http/1.1"]);
    let r = run(&tls_plan(
        front.port,
        json!({"kind": "count", "requests": 1000, "concurrency": 4}),
        json!({"ca_file": ca.ca()}),
    ));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 1000, "{}", r["totals"]);
    assert_eq!(srv.n(Action::Reply), 1000);
    assert_eq!(tls(&r, "handshakes"), 4);
    assert_eq!(settled(4, || front.n(|c| &c.handshakes)), 4);
    assert_eq!(r["tls"]["alpn"], json!({"http/1.1": 4}));
    assert_eq!(front.n(|c| &c.alpn_http11), 4);
    assert_eq!(r["tls"]["verified"], true);
    assert_eq!(r["tls"]["version"], "TLSv1.3");
    assert!(r["tls"]["handshake_us"]["p50"].as_u64().unwrap() > 0);
}

#[test]
fn a_new_connection_per_request_resumes_the_session_as_the_server_counts() {
    let ca = TestCa::new();
    let srv = TestServer::start(|_, _| Action::Reply);
    let front = TlsFront::start(srv.port, &ca, &[b"http/1.1"]);
    for resume in [true, false] {
        let mut p = tls_plan(
            front.port,
            json!({"kind": "count", "requests": 200, "concurrency": 2}),
            json!({"ca_file": ca.ca(), "resume": resume}),
        );
        p["http"] = json!({"version": "1.1", "keep_alive": false});
        let before = front.n(|c| &c.resumed);
        let r = run(&p);
        assert_accounting(&r);
        assert_eq!(total(&r, "ok"), 200, "{}", r["totals"]);
        assert_eq!(tls(&r, "handshakes"), 200);
        let resumed = tls(&r, "resumed");
        assert_eq!(
            settled(before + resumed, || front.n(|c| &c.resumed)) - before,
            resumed
        );
        if resume {
            // Only the first connections of each thread find no ticket yet.
            assert!(resumed >= 190, "resumed {resumed} of 200");
        } else {
            assert_eq!(resumed, 0);
        }
    }
}

#[test]
fn h2_over_tls_is_chosen_by_alpn_and_refused_without_it() {
    let ca = TestCa::new();
    // Over TLS every request says `:scheme https`; the server counts any other as bad.
    let want_https = H2Behaviour {
        scheme: Some("https"),
        ..H2Behaviour::default()
    };
    let srv = H2Server::start(want_https, b"");
    let model = json!({"kind": "count", "requests": 1000, "concurrency": 2});
    // The CA as PEM text in the plan (what the harness sends to load hosts).
    let pem = std::fs::read_to_string(&ca.ca_file).unwrap();
    let mut p = tls_plan(0, model, json!({"ca_pem": pem}));
    p["http2"] = json!({"streams": 10});
    let h2_front = TlsFront::start(srv.port, &ca, &[b"h2", b"http/1.1"]);
    p["target"]["port"] = json!(h2_front.port);
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 1000, "{}", r["totals"]);
    assert_eq!(r["tls"]["alpn"], json!({"h2": 2}));
    assert_eq!(r["http2"]["streams"], 1000);
    assert_eq!(srv.n(|c| &c.answered), 1000);
    assert_eq!(srv.n(|c| &c.bad_requests), 0);
    assert_eq!(settled(2, || h2_front.n(|c| &c.alpn_h2)), 2);

    // A server that chooses no protocol, and one that offers only HTTP/1.1.
    for offer in [&[][..], &[&b"http/1.1"[..]][..]] {
        let front = TlsFront::start(srv.port, &ca, offer);
        p["target"]["port"] = json!(front.port);
        p["model"] = json!({"kind": "count", "requests": 20, "concurrency": 2});
        let r = run(&p);
        assert_accounting(&r);
        assert_eq!(total(&r, "ok"), 0);
        // Each request of the count opened a connection of its own, and each failed.
        assert_eq!(err(&r, "tls_failed"), 20, "{}", r["totals"]);
        assert_eq!(failures(&r, "alpn"), 20, "{}", r["tls"]);
    }
}

#[test]
fn a_websocket_echo_runs_over_tls() {
    let ca = TestCa::new();
    let srv = WsServer::start(|_| Upgrade::Accept, |_| Msg::Echo);
    let front = TlsFront::start(srv.port, &ca, &[b"http/1.1"]);
    let mut p = tls_plan(
        front.port,
        json!({"kind": "count", "requests": 500, "concurrency": 5}),
        json!({"verify": false, "server_name": "localhost"}),
    );
    p["requests"] = json!([{"name": "echo", "method": "GET", "path": "/ws"}]);
    p["websocket"] = json!({"message_bytes": 256});
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 500, "{}", r["totals"]);
    assert_eq!(r["websocket"]["handshakes_ok"], 5);
    assert_eq!(r["tls"]["verified"], false);
    assert_eq!(srv.msgs(Msg::Echo), 500);
}

#[test]
fn a_plaintext_server_a_foreign_ca_and_a_silent_server_fail_tls_by_reason() {
    let ca = TestCa::new();
    let other = TestCa::new();
    let srv = TestServer::start(|_, _| Action::Reply);
    let front = TlsFront::start(srv.port, &ca, &[b"http/1.1"]);
    // A plaintext server answers the ClientHello with an HTTP 400 and closes.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let plain_port = plain.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in plain.incoming().filter_map(Result::ok) {
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let held = std::thread::spawn({
        let silent = silent.try_clone().unwrap();
        move || {
            silent
                .incoming()
                .take(2)
                .filter_map(Result::ok)
                .collect::<Vec<_>>()
        }
    });
    let cases = [
        (plain_port, ca.ca(), "not_tls"),
        (front.port, other.ca(), "certificate"),
        (silent.local_addr().unwrap().port(), ca.ca(), "timeout"),
    ];
    for (port, ca_file, why) in cases {
        let mut p = tls_plan(
            port,
            json!({"kind": "count", "requests": 2, "concurrency": 2}),
            json!({"ca_file": ca_file}),
        );
        p["timeout_s"] = json!(0.5);
        let r = run(&p);
        assert_accounting(&r);
        assert_eq!(err(&r, "tls_failed"), 2, "{why}: {}", r["totals"]);
        assert_eq!(failures(&r, why), 2, "{why}: {}", r["tls"]);
        assert_eq!(tls(&r, "handshakes"), 0);
    }
    assert_eq!(settled(2, || front.n(|c| &c.failed)), 2);
    drop(held);
}

#[test]
fn an_unreadable_ca_file_is_a_clear_error() {
    let mut p = tls_plan(
        1,
        json!({"kind": "count", "requests": 1, "concurrency": 1}),
        json!({"ca_file": "/nonexistent/ca.pem"}),
    );
    p["target"]["port"] = json!(1);
    let e = wsgibench_engine::run_value(&p).unwrap_err();
    assert!(
        e.to_string().contains("tls.ca_file /nonexistent/ca.pem"),
        "{e}"
    );
}
