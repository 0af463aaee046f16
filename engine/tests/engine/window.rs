//! The measured window: a closed run's elapsed time includes draining in-flight requests, so
//! its honest rate is ok_in_window / window_s, which a stalled connection must not dilute.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn drain_after_a_closed_window_does_not_dilute_the_rate() {
    // One connection's first request is answered after 1 s (or never: it times out after
    // 1 s), far beyond the 0.5 s window; the other connection works through the window.
    for (action, late_replies) in [(Action::LateReply, 1), (Action::Stall, 0)] {
        let srv = TestServer::start(move |n, _| if n == 0 { action } else { Action::Reply });
        let mut p = plan(
            srv.port,
            json!({"kind": "closed", "connections": 2, "duration_s": 0.5}),
        );
        p["timeout_s"] = json!(1.2);
        let r = run(&p);
        let t = &r["totals"];
        let (ok, ok_in, after) = (
            total(&r, "ok"),
            total(&r, "ok_in_window"),
            total(&r, "completed_after_window"),
        );
        assert_eq!(t["window_s"], 0.5, "{t}");
        assert_eq!(ok, srv.ok_replies(), "{t}");
        assert_eq!(err(&r, "timeout"), 1 - late_replies, "{t}");
        // Every reply is ok here: each counts in the window or after it, never both.
        assert_eq!(ok_in + after, ok, "{t}");
        // After the window: the late reply, and at most the one request the other
        // connection had in flight when the window closed.
        assert!((late_replies..=late_replies + 1).contains(&after), "{t}");
        let elapsed = r["elapsed_s"].as_f64().unwrap();
        assert!(elapsed >= 1.0, "the run drains the slow request: {elapsed}");
        let honest = ok_in as f64 / t["window_s"].as_f64().unwrap();
        let diluted = t["rps_ok"].as_f64().unwrap();
        assert!(honest > 1.8 * diluted, "honest {honest}, rps_ok {diluted}");
        assert!(ok_in > 100, "{t}");
    }
}

#[test]
fn window_of_each_model() {
    let srv = TestServer::start(|_, _| Action::Reply);
    for (model, window) in [
        (
            json!({"kind": "rate", "rate": 40, "connections_total": 10}),
            0.25,
        ),
        (json!({"kind": "rate", "rate": 100, "duration_s": 0.2}), 0.2),
        (
            json!({"kind": "sessions", "users_per_s": 20, "duration_s": 0.3, "requests": 2, "think_s": 0.05}),
            0.3,
        ),
    ] {
        let r = run(&plan(srv.port, model.clone()));
        assert_eq!(r["totals"]["window_s"], window, "{model}");
        assert_eq!(
            total(&r, "ok_in_window") + total(&r, "completed_after_window"),
            total(&r, "ok"),
            "{model}"
        );
    }
    // count: the window ends at the last completion, so every reply is in it.
    let r = run(&plan(
        srv.port,
        json!({"kind": "count", "requests": 50, "concurrency": 2}),
    ));
    let w = r["totals"]["window_s"].as_f64().unwrap();
    assert!(w > 0.0 && w <= r["elapsed_s"].as_f64().unwrap(), "{w}");
    assert_eq!(total(&r, "ok_in_window"), 50);
    assert_eq!(total(&r, "completed_after_window"), 0);
}

#[test]
fn timeline_reports_engine_cpu_per_second() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 2, "duration_s": 1.2}),
    ));
    let tl = r["timeline"].as_array().unwrap();
    assert!(tl.len() >= 2, "{tl:?}");
    for s in tl {
        let c = s["engine_cpu"]
            .as_f64()
            .expect("engine_cpu in every second");
        assert!((0.0..=1.05).contains(&c), "{s}");
    }
    // A closed loop against a local server keeps its thread busy: it uses CPU every second.
    assert!(tl[0]["engine_cpu"].as_f64().unwrap() > 0.0);
    assert!(tl[1]["engine_cpu"].as_f64().unwrap() > 0.0);
}
