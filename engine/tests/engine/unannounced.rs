//! Unannounced keep-alive closes (RFC 9110 §9.2.2, RFC 9112 §9.3.1): a server that silently
//! closes a reused connection, by FIN or by reset, costs no request in any keep-alive model:
//! the outstanding GETs go again once on a new connection. POSTs are not re-sent.

use crate::common;

use common::*;
use serde_json::{json, Value};

/// Run `model` against a server that silently closes (`how`) after every `every`-th reply
/// (to requests at index `min_seq` or later on their connection) and check the exact counts.
fn check_silent_closes(model: Value, every: u64, min_seq: u64, how: Action) -> Value {
    let srv = TestServer::start(silent_every(every, min_seq, how));
    let r = run(&plan(srv.port, model.clone()));
    let what = format!("{model} {how:?}: {}", r["totals"]);
    assert!(srv.silent_closes() >= 3, "too few silent closes: {what}");
    assert_eq!(total(&r, "ok"), srv.ok_replies(), "{what}");
    assert_eq!(all_errors(&r), 0, "{what}");
    assert_eq!(
        total(&r, "unannounced_closes"),
        srv.silent_closes(),
        "{what}"
    );
    assert!(total(&r, "resent") >= total(&r, "unannounced_closes"));
    assert_eq!(r["kinds"][0]["resent"], r["totals"]["resent"]);
    assert_eq!(total(&r, "idle_close"), 0, "{what}");
    assert_accounting(&r);
    r
}

#[test]
fn closed_model_resends_after_silent_fin_and_reset() {
    for how in [Action::ReplyThenFin, Action::ReplyThenRst] {
        let model = json!({"kind": "closed", "connections": 4, "duration_s": 0.5});
        let r = check_silent_closes(model, 7, 0, how);
        // One request outstanding per connection: one re-send per close.
        assert_eq!(total(&r, "resent"), total(&r, "unannounced_closes"));
        assert_eq!(
            total(&r, "requests_sent"),
            total(&r, "ok"),
            "a re-send is not a new request"
        );
    }
}

#[test]
fn closed_pipelined_resends_every_outstanding_request_once() {
    let model = json!({"kind": "closed", "connections": 2, "duration_s": 0.5, "pipeline": 4});
    // Closing after replies at index 3 or later: re-sent requests (at most 4, sent first on
    // their new connection) are answered before that connection closes in turn.
    let r = check_silent_closes(model, 5, 3, Action::ReplyThenFin);
    assert!(total(&r, "resent") > total(&r, "unannounced_closes"));
}

#[test]
fn count_model_resends_after_silent_fin_and_reset() {
    for how in [Action::ReplyThenFin, Action::ReplyThenRst] {
        let model = json!({"kind": "count", "requests": 300, "concurrency": 4});
        let r = check_silent_closes(model, 9, 0, how);
        assert_eq!(total(&r, "ok"), 300);
        assert_eq!(total(&r, "requests_sent"), 300);
    }
}

#[test]
fn rate_model_with_calls_resends_after_silent_fin_and_reset() {
    for how in [Action::ReplyThenFin, Action::ReplyThenRst] {
        let model = json!({"kind": "rate", "rate": 100, "connections_total": 30, "calls": 5});
        let r = check_silent_closes(model, 4, 0, how);
        assert_eq!(total(&r, "ok"), 150);
        let k = &r["kinds"][0];
        assert_eq!(k["service_us"]["count"], 150);
    }
}

#[test]
fn sessions_model_resends_after_silent_fin_and_reset() {
    for how in [Action::ReplyThenFin, Action::ReplyThenRst] {
        let model = json!({"kind": "sessions", "users_per_s": 40, "duration_s": 0.5,
                           "requests": 4, "think_s": 0.02});
        let r = check_silent_closes(model, 3, 0, how);
        assert_eq!(total(&r, "ok"), 80);
    }
}

#[test]
fn close_racing_the_next_request_is_never_an_error() {
    // Reply and FIN at once: the client sees the close before sending (idle close) or after
    // (unannounced close); either way nothing fails.
    let srv = TestServer::start(silent_every(5, 0, Action::ReplyThenClose));
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 4, "duration_s": 0.5}),
    ));
    assert!(srv.silent_closes() > 5);
    assert_eq!(total(&r, "ok"), srv.ok_replies());
    assert_eq!(all_errors(&r), 0, "{}", r["totals"]);
    // Each close is seen as one or the other, except that a connection done when the window
    // ends (at most one per connection) may be closed by the engine before it reads the FIN.
    let seen = total(&r, "unannounced_closes") + total(&r, "idle_close");
    assert!(
        (seen..=seen + 4).contains(&srv.silent_closes()),
        "seen {seen}, server {}",
        srv.silent_closes()
    );
    assert!(total(&r, "unannounced_closes") > 0 || total(&r, "idle_close") > 0);
    assert_accounting(&r);
}

#[test]
fn post_is_not_resent() {
    for (how, class) in [
        (Action::ReplyThenFin, "closed_before_response"),
        (Action::ReplyThenRst, "reset"),
    ] {
        let srv = TestServer::start(silent_every(5, 0, how));
        let mut p = plan(
            srv.port,
            json!({"kind": "closed", "connections": 2, "duration_s": 0.5}),
        );
        p["requests"][0]["method"] = json!("POST");
        let r = run(&p);
        assert!(srv.silent_closes() > 5);
        assert_eq!(err(&r, class), srv.silent_closes(), "{}", r["totals"]);
        assert_eq!(all_errors(&r), err(&r, class));
        assert_eq!(total(&r, "ok"), srv.ok_replies());
        assert_eq!(
            (total(&r, "resent"), total(&r, "unannounced_closes")),
            (0, 0)
        );
        assert_accounting(&r);
    }
}

#[test]
fn close_before_any_reply_and_failed_resend_are_errors() {
    // Requests n: 0 ok; 1 closed unanswered on a reused connection (re-sent); 2 (its re-send,
    // first on a new connection) closed unanswered again: an error; then all ok.
    let srv = TestServer::start(|n, _| {
        if n == 1 || n == 2 {
            Action::CloseNoReply
        } else {
            Action::Reply
        }
    });
    let r = run(&plan(
        srv.port,
        json!({"kind": "count", "requests": 5, "concurrency": 1}),
    ));
    assert_eq!(total(&r, "ok"), 4, "{}", r["totals"]);
    assert_eq!(err(&r, "closed_before_response"), 1);
    assert_eq!(all_errors(&r), 1);
    assert_eq!(
        (total(&r, "unannounced_closes"), total(&r, "resent")),
        (1, 1)
    );
    assert_eq!(total(&r, "requests_sent"), 5);
    assert_eq!(
        srv.counts
            .requests
            .load(std::sync::atomic::Ordering::SeqCst),
        6
    );
    assert_accounting(&r);
}

#[test]
fn resent_request_latency_runs_from_its_first_send() {
    let quiet = Quiet::start();
    // The server holds the next request 100 ms before closing silently: the re-sent request's
    // latency must include that wait (closed loop: from its first send; open model: from its
    // intended time), while its service time runs from the re-send.
    for model in [
        json!({"kind": "count", "requests": 10, "concurrency": 1}),
        json!({"kind": "rate", "rate": 50, "connections_total": 4, "calls": 3}),
    ] {
        let srv = TestServer::start(|n, _| {
            if n == 0 {
                Action::ReplyThenLateFin
            } else {
                Action::Reply
            }
        });
        let r = run(&plan(srv.port, model.clone()));
        assert_eq!(srv.silent_closes(), 1, "{model}");
        assert_eq!(
            (total(&r, "unannounced_closes"), total(&r, "resent")),
            (1, 1)
        );
        assert_eq!(total(&r, "ok"), srv.ok_replies());
        assert_eq!(all_errors(&r), 0);
        let k = &r["kinds"][0];
        assert!(
            k["latency_us"]["max"].as_u64().unwrap() >= 100_000,
            "{model}: {}",
            k["latency_us"]
        );
        if !k["service_us"].is_null() {
            let max = k["service_us"]["max"].as_u64().unwrap();
            quiet.bound(max < 100_000, || format!("{model}: service max {max} µs"));
        }
    }
}
