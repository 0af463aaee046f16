//! Contract: the built binary's stdout for every model validates against docs/engine-result.schema.json.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_wsgibench-engine");

fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/engine-result.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("schema file"))
        .expect("schema JSON");
    jsonschema::validator_for(&schema).expect("valid schema")
}

/// Run the binary with `plan` on stdin; returns (exit code, stdout, stderr).
fn run_bin(plan: &Value, extra: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(BIN)
        .args(["run", "-"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("engine binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn assert_valid(v: &jsonschema::Validator, stdout: &str, what: &str) -> Value {
    let result: Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{what}: stdout is not JSON: {e}"));
    let errors: Vec<String> = v
        .iter_errors(&result)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: schema violations: {errors:#?}");
    result
}

/// One plan model per load model (and variant) the schema must accept.
fn schema_models() -> [(&'static str, Value); 6] {
    [
        (
            "closed",
            json!({"kind": "closed", "connections": 2, "duration_s": 0.3}),
        ),
        (
            "closed pipelined",
            json!({"kind": "closed", "connections": 2, "duration_s": 0.3, "pipeline": 4}),
        ),
        (
            "rate",
            json!({"kind": "rate", "rate": 100, "duration_s": 0.3, "arrival": "poisson"}),
        ),
        (
            "conn_rate",
            json!({"kind": "conn_rate", "rate": 50, "connections_total": 5, "calls": 10}),
        ),
        (
            "sessions",
            json!({"kind": "sessions", "users_per_s": 20, "duration_s": 0.3, "requests": 2, "think_s": 0.05}),
        ),
        (
            "count",
            json!({"kind": "count", "requests": 20, "concurrency": 2}),
        ),
    ]
}

#[test]
fn every_model_validates_against_the_schema() {
    let v = validator();
    let srv = TestServer::start(|n, _| {
        if n % 9 == 8 {
            Action::Status500
        } else {
            Action::Reply
        }
    });
    let mut bad_status = 0;
    for (what, model) in schema_models() {
        let p = plan(srv.port, model);
        let (code, stdout, stderr) = run_bin(&p, &[]);
        assert_eq!(code, 0, "{what}: exit {code}, stderr {stderr}");
        let r = assert_valid(&v, &stdout, what);
        assert_eq!(r["plan"], p, "{what}: plan echoed back");
        assert_eq!(r["engine"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(
            r["totals"]["ok"].as_u64().unwrap() > 0,
            "{what}: {}",
            r["totals"]
        );
        bad_status += r["totals"]["errors"]["bad_status"].as_u64().unwrap();
        // The schema must catch a broken result, or this test proves nothing.
        let mut broken = r.clone();
        broken["totals"]["errors"]
            .as_object_mut()
            .unwrap()
            .remove("timeout");
        broken["kinds"][0]["latency_us"]["hdr"] = json!("not base64 HdrHistogram");
        assert_eq!(
            v.iter_errors(&broken).count(),
            2,
            "{what}: schema misses broken fields"
        );
    }
    assert!(bad_status > 0, "the 500s the server sent show up");
}

#[test]
fn a_websocket_result_validates_with_its_websocket_object() {
    let v = validator();
    let srv = common::WsServer::start(
        |conn| {
            if conn == 0 {
                common::Upgrade::Status(403)
            } else {
                common::Upgrade::Accept
            }
        },
        |seq| {
            if seq % 3 == 2 {
                common::Msg::Fragment(2)
            } else {
                common::Msg::Echo
            }
        },
    );
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 30, "concurrency": 1}),
    );
    p["requests"] = json!([{"name": "echo", "path": "/ws"}]);
    p["websocket"] = json!({"message_bytes": 300});
    let (code, stdout, stderr) = run_bin(&p, &[]);
    assert_eq!(code, 0, "exit {code}, stderr {stderr}");
    let r = assert_valid(&v, &stdout, "websocket");
    assert_eq!(r["totals"]["ok"], 29, "{}", r["totals"]);
    assert_eq!(r["websocket"]["fragmented"], 9);
    let mut broken = r.clone();
    broken["websocket"]["handshake_failures"]["bogus"] = json!(1);
    assert_eq!(
        v.iter_errors(&broken).count(),
        1,
        "schema misses a bad reason"
    );
}

#[test]
fn an_http2_result_validates_with_its_http2_object() {
    let v = validator();
    let srv = common::H2Server::start(
        common::H2Behaviour {
            rst_every: Some(10),
            max_streams: Some(5),
            ..common::H2Behaviour::default()
        },
        b"",
    );
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 40, "concurrency": 2}),
    );
    p["http2"] = json!({"streams": 8});
    let (code, stdout, stderr) = run_bin(&p, &[]);
    assert_eq!(code, 0, "exit {code}, stderr {stderr}");
    let r = assert_valid(&v, &stdout, "http2");
    assert_eq!(r["totals"]["ok"], 36, "{}", r["totals"]);
    assert_eq!(r["totals"]["errors"]["stream_reset"], 4);
    assert_eq!(r["http2"]["max_concurrent_streams"], 5);
    let mut broken = r.clone();
    broken["http2"]["bogus"] = json!(1);
    assert_eq!(
        v.iter_errors(&broken).count(),
        1,
        "schema misses a stray key"
    );
}

#[test]
fn a_tls_result_validates_with_its_tls_object() {
    let v = validator();
    let ca = common::TestCa::new();
    let srv = common::TestServer::start(|_, _| common::Action::Reply);
    let front = common::TlsFront::start(srv.port, &ca, &[b"http/1.1"]);
    let mut p = plan(
        front.port,
        json!({"kind": "count", "requests": 30, "concurrency": 3}),
    );
    p["http"] = json!({"version": "1.1", "keep_alive": false});
    p["tls"] = json!({"ca_file": ca.ca()});
    let (code, stdout, stderr) = run_bin(&p, &[]);
    assert_eq!(code, 0, "exit {code}, stderr {stderr}");
    let r = assert_valid(&v, &stdout, "tls");
    assert_eq!(r["totals"]["ok"], 30, "{}", r["totals"]);
    assert_eq!(r["tls"]["handshakes"], 30);
    let mut broken = r.clone();
    broken["tls"]["failures"]["bogus"] = json!(1);
    assert_eq!(
        v.iter_errors(&broken).count(),
        1,
        "schema misses a bad reason"
    );
}

#[test]
fn flags_alone_make_a_run_and_errors_validate_too() {
    let v = validator();
    let port = TestServer::closed_port();
    let out = Command::new(BIN)
        .args([
            "run",
            "--url",
            &format!("http://127.0.0.1:{port}/"),
            "--model",
            "count",
            "--requests",
            "3",
            "--concurrency",
            "1",
            "--expect-body",
            "Pong!",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = assert_valid(&v, &String::from_utf8(out.stdout).unwrap(), "refused");
    assert_eq!(r["totals"]["errors"]["connect_refused"], 3);
}

#[test]
fn bad_plan_exits_2_with_one_line() {
    for (plan, needle) in [
        (
            json!({"protocol_version": 1, "target": {"port": 1}, "model": {"kind": "nope"}, "requests": [{}]}),
            "model.kind",
        ),
        (
            json!({"protocol_version": 1, "target": {"host": "192.0.2.7", "port": 80},
                "model": {"kind": "count", "requests": 1, "concurrency": 1}, "requests": [{}]}),
            "loopback",
        ),
    ] {
        let (code, stdout, stderr) = run_bin(&plan, &[]);
        assert_eq!(code, 2, "stderr: {stderr}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr:?}");
        assert!(stderr.contains(needle), "{stderr}");
    }
    for args in [
        &["run", "--connections"][..],
        &["run", "--connections", "5"][..],
        &["fly"][..],
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr)
                .trim_end()
                .lines()
                .count(),
            1
        );
    }
}

#[test]
fn version_prints_versions() {
    let out = Command::new(BIN).arg("version").output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        json!({"engine_version": env!("CARGO_PKG_VERSION"), "protocol_version": 1, "format_version": 2})
    );
}

#[test]
fn engine_additions_are_present() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let p = plan(
        srv.port,
        json!({"kind": "count", "requests": 10, "concurrency": 2}),
    );
    let (code, stdout, stderr) = run_bin(&p, &[]);
    assert_eq!(code, 0, "stderr {stderr}");
    let r = assert_valid(&validator(), &stdout, "count");
    for key in [
        "unannounced_closes",
        "resent",
        "ok_in_window",
        "completed_after_window",
    ] {
        assert!(r["totals"][key].is_u64(), "totals.{key}: {}", r["totals"]);
    }
    assert!(r["totals"]["window_s"].is_f64());
    assert!(r["timeline"][0]["engine_cpu"].is_f64());
    assert!(r["kinds"][0]["resent"].is_u64());
    assert_eq!(
        r["totals"]["turnaround_us"]["count"], 8,
        "10 requests on 2 connections"
    );
}

#[test]
fn a_broadcast_result_validates_with_its_broadcast_object() {
    let v = validator();
    let hub = common::HubServer::start(|_| common::Upgrade::Accept, |_, _| common::Msg::Echo);
    let mut p = plan(
        hub.port,
        json!({"kind": "broadcast", "subscribers": 4, "publish_rate": 40, "duration_s": 0.5}),
    );
    p["requests"] = json!([{"name": "subscribe", "path": "/ws/broadcast"}]);
    p["websocket"] = json!({"message_bytes": 48});
    p["engine_io"] = json!("auto");
    let (code, stdout, stderr) = run_bin(&p, &[]);
    assert_eq!(code, 0, "exit {code}, stderr {stderr}");
    let r = assert_valid(&v, &stdout, "broadcast");
    assert_eq!(r["websocket"]["broadcast"]["due"], 80, "{}", r["websocket"]);
    let mut broken = r.clone();
    broken["websocket"]["broadcast"]["bogus"] = json!(1);
    assert!(
        !v.is_valid(&broken),
        "an unknown broadcast field is refused"
    );
}

#[test]
fn a_trace_result_validates_with_its_arrivals() {
    let v = validator();
    let srv = TestServer::start(|_, _| Action::Reply);
    let schedule =
        std::env::temp_dir().join(format!("wsgibench-contract-{}.trace", std::process::id()));
    let mut bytes = b"WBTRACE1".to_vec();
    for i in 0..20u64 {
        bytes.extend_from_slice(&((i * 50_000) << 16).to_le_bytes());
    }
    std::fs::write(&schedule, bytes).unwrap();
    let model = json!({"kind": "trace", "speed": 2, "schedule": schedule.to_str().unwrap(),
                       "schedule_requests": 20, "span_s": 1});
    let (code, stdout, stderr) = run_bin(&plan(srv.port, model), &[]);
    assert_eq!(code, 0, "exit {code}, stderr {stderr}");
    let r = assert_valid(&v, &stdout, "trace");
    assert_eq!(r["timeline"][0]["arrivals"], 20, "{}", r["timeline"]);
    let mut broken = r.clone();
    broken["timeline"][0]["arrivals"] = json!(-1);
    assert_eq!(
        v.iter_errors(&broken).count(),
        1,
        "schema misses a bad arrivals"
    );
}
