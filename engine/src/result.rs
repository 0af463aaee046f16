//! The result document (format_version 1): totals, per-kind histograms, timeline, cost, saturation.

use std::collections::BTreeMap;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

use crate::clock::NS_PER_S;
use crate::plan::{Plan, PROTOCOL_VERSION};
use crate::runner::RunOutcome;
use crate::saturation;
use crate::stats::{add_errors, Errors, ThreadStats, ERROR_CLASSES, ERROR_NAMES};

pub const FORMAT_VERSION: u64 = 1;
pub const ENGINE_NAME: &str = "wsgibench-engine";
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// HdrHistogram V2 compressed (deflate) encoding, base64: what HdrHistogram.decode() reads.
pub fn encode_hdr(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serialising to memory");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn hist_summary(h: &Histogram<u64>) -> Value {
    let empty = h.is_empty();
    let q = |p: f64| if empty { 0 } else { h.value_at_quantile(p) };
    json!({
        "count": h.len(),
        "min": if empty { 0 } else { h.min() },
        "mean": if empty { 0.0 } else { h.mean() },
        "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999),
        "max": if empty { 0 } else { h.max() },
        "stdev": if empty { 0.0 } else { h.stdev() },
        "hdr": encode_hdr(h),
    })
}

fn errors_obj(e: &Errors, only_nonzero: bool) -> Value {
    let mut m = Map::new();
    for (name, n) in ERROR_NAMES.iter().zip(e) {
        if !only_nonzero || *n > 0 {
            m.insert((*name).to_owned(), json!(n));
        }
    }
    Value::Object(m)
}

fn codes_obj<'a>(codes: impl Iterator<Item = (&'a u16, &'a u64)>) -> Value {
    let mut m = Map::new();
    for (c, n) in codes {
        m.insert(c.to_string(), json!(n));
    }
    Value::Object(m)
}

/// Sums over all request kinds, and each kind's own entry.
struct Kinds {
    entries: Vec<Value>,
    errors: Errors,
    sent: u64,
    resent: u64,
    responses: u64,
    ok: u64,
    codes: BTreeMap<u16, u64>,
}

fn kinds(plan: &Plan, st: &ThreadStats) -> Kinds {
    let open = plan.model.is_open();
    let mut t = Kinds {
        entries: Vec::new(),
        errors: [0; ERROR_CLASSES],
        sent: 0,
        resent: 0,
        responses: 0,
        ok: 0,
        codes: BTreeMap::new(),
    };
    for (spec, k) in plan.requests.iter().zip(&st.kinds) {
        add_errors(&mut t.errors, &k.errors);
        t.sent += k.requests_sent;
        t.resent += k.resent;
        t.responses += k.responses;
        t.ok += k.ok;
        for (c, n) in &k.bad_status_codes {
            *t.codes.entry(*c).or_default() += n;
        }
        t.entries.push(json!({
            "name": spec.name,
            "requests_sent": k.requests_sent,
            "resent": k.resent,
            "responses": k.responses,
            "ok": k.ok,
            "errors": errors_obj(&k.errors, false),
            "bad_status_codes": codes_obj(k.bad_status_codes.iter()),
            "latency_us": hist_summary(&k.latency_us),
            "service_us": if open { hist_summary(&k.service_us) } else { Value::Null },
            "connect_us": hist_summary(&k.connect_us),
        }));
    }
    t
}

/// The closed loops' turnaround (see `ThreadStats::turnaround_ns`), in µs with ns precision;
/// null for the open models.
fn turnaround(plan: &Plan, st: &ThreadStats) -> Value {
    if plan.model.is_open() {
        return Value::Null;
    }
    let h = &st.turnaround_ns;
    let us = |ns: f64| ns / 1000.0;
    let q = |p: f64| {
        if h.is_empty() {
            0.0
        } else {
            us(h.value_at_quantile(p) as f64)
        }
    };
    json!({
        "count": h.len(),
        "mean": if h.is_empty() { 0.0 } else { us(h.mean()) },
        "p50": q(0.5),
        "p99": q(0.99),
    })
}

fn timeline(st: &ThreadStats) -> Vec<Value> {
    st.timeline
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (p50, p99) = s.latency_us.as_ref().map_or((0, 0), |h| (h.value_at_quantile(0.5), h.value_at_quantile(0.99)));
            json!({"t_s": i, "completed": s.completed, "ok": s.ok, "errors": errors_obj(&s.errors, true),
                   "open_connections": s.open_connections, "p50_us": p50, "p99_us": p99,
                   "engine_cpu": s.engine_cpu()})
        })
        .collect()
}

/// The engine's own cost: CPU, memory, pinning, I/O backend and system calls.
fn cost(plan: &Plan, out: &RunOutcome, cpu_fraction: f64, responses: u64) -> Value {
    let st = &out.stats;
    let cpu_s = out.user_s + out.sys_s;
    let per_response = |n: f64| {
        if responses > 0 {
            n / responses as f64
        } else {
            0.0
        }
    };
    json!({
        "user_s": out.user_s, "sys_s": out.sys_s, "cpu_fraction": cpu_fraction, "threads": plan.threads,
        "max_rss_kib": out.max_rss_kib, "nofile_limit": out.nofile_limit,
        "pinned_cpus": plan.cpus, "pin_error": out.pin_error,
        "io_backend": out.io_backend, "io_note": out.io_note,
        "syscalls": st.syscalls, "syscalls_per_response": per_response(st.syscalls as f64),
        "responses_per_cpu_s": if cpu_s > 0.0 { responses as f64 / cpu_s } else { 0.0 },
    })
}

pub fn build(plan: &Plan, plan_echo: &Value, out: &RunOutcome) -> Value {
    let st = &out.stats;
    let k = kinds(plan, st);
    let elapsed = out.elapsed_s.max(1e-9);
    let cpu_fraction = (out.user_s + out.sys_s) / (elapsed * plan.threads as f64);
    let lag = &st.lag_us;
    let (lag_p99, lag_max) = if lag.is_empty() {
        (0, 0)
    } else {
        (lag.value_at_quantile(0.99), lag.max())
    };
    let window_s = crate::models::window_s(plan)
        .unwrap_or(st.window.last_completion_ns as f64 / NS_PER_S as f64);
    let reasons = saturation::reasons(plan, out, cpu_fraction, lag_p99, window_s);
    let mut doc = json!({
        "format_version": FORMAT_VERSION,
        "engine": {"name": ENGINE_NAME, "version": ENGINE_VERSION, "protocol_version": PROTOCOL_VERSION},
        "plan": plan_echo,
        "started_unix_s": out.started_unix_s,
        "elapsed_s": out.elapsed_s,
        "totals": {
            "requests_sent": k.sent, "responses": k.responses, "ok": k.ok,
            "errors": errors_obj(&k.errors, false),
            "bad_status_codes": codes_obj(k.codes.iter()),
            "idle_close": st.idle_close,
            "unannounced_closes": st.unannounced_closes,
            "resent": k.resent,
            "connections_opened": st.connections_opened,
            "connection_close_replies": st.connection_close_replies,
            "bytes_received": st.bytes_received,
            "rps_ok": k.ok as f64 / elapsed,
            "unsolicited_bytes": st.unsolicited_bytes,
            "abandoned": st.abandoned,
            "queue_timeouts": st.queue_timeouts,
            "peak_open_connections": st.peak_open,
            "window_s": window_s,
            "ok_in_window": st.window.ok_in,
            "completed_after_window": st.window.completed_after,
            "turnaround_us": turnaround(plan, st),
        },
        "kinds": k.entries,
        "timeline": timeline(st),
        "cost": cost(plan, out, cpu_fraction, k.responses),
        "schedule": {"lag_p99_us": lag_p99, "lag_max_us": lag_max},
        "saturated": !reasons.is_empty(),
        "saturation_reasons": reasons,
    });
    if matches!(plan.model, crate::plan::ModelSpec::Trace(_)) {
        crate::models::add_arrivals(&mut doc, st);
    }
    if plan.websocket.is_some() {
        doc["websocket"] = st.ws.to_json();
    }
    if plan.http2.is_some() {
        doc["http2"] = st.h2.to_json();
    }
    if let Some(t) = &plan.tls {
        doc["tls"] = st.tls.to_json(&t.server_name, t.ca.is_some());
    }
    doc
}
