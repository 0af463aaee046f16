//! The result document (format_version 2): totals, per-kind histograms, timeline, cost, saturation.

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

/// 2: `latency_us` covers every request that ended, failures at the time they failed, beside
/// `reply_latency_us` and `failed_latency_us`; per-thread CPUs read back; null timeline seconds.
pub const FORMAT_VERSION: u64 = 2;
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
            "ok_in_window": k.ok_in_window,
            "latency_us": hist_summary(&k.latency_us),
            "reply_latency_us": hist_summary(&k.reply_latency_us),
            "failed_latency_us": hist_summary(&k.failed_latency_us),
            "service_us": if open { hist_summary(&k.service_us) } else { Value::Null },
            "connect_us": hist_summary(&k.connect_us),
            "wrong_replies": k.wrong.to_json(),
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
            // A second in which nothing ended has no latency: null, never 0.
            let q = |p: f64| s.latency_us.as_ref().map(|h| h.value_at_quantile(p));
            json!({"t_s": i, "completed": s.completed, "ok": s.ok, "errors": errors_obj(&s.errors, true),
                   "resent": s.resent, "open_connections": s.open_connections,
                   "p50_us": q(0.5), "p99_us": q(0.99),
                   "engine_cpu": s.engine_cpu(), "busiest_thread_cpu": s.busiest_cpu})
        })
        .collect()
}

/// The engine's CPU seconds within the measured window: its timeline's seconds before the
/// window's end (a partial last second in proportion).
fn window_cpu_s(st: &ThreadStats, window_s: f64) -> f64 {
    st.timeline
        .iter()
        .enumerate()
        .map(|(i, s)| s.cpu_ns as f64 / NS_PER_S as f64 * (window_s - i as f64).clamp(0.0, 1.0))
        .sum()
}

/// Each thread: the CPUs the kernel held for it (read back after pinning) and its CPU share.
fn threads(st: &ThreadStats) -> Vec<Value> {
    let mut all: Vec<_> = st.threads.iter().collect();
    all.sort_by_key(|t| t.thread);
    all.iter()
        .map(|t| {
            json!({"thread": t.thread, "cpus": t.cpus, "cpu_s": t.cpu_ns as f64 / NS_PER_S as f64,
                   "cpu_fraction": t.fraction(), "responses": t.responses})
        })
        .collect()
}

/// The engine's own cost: CPU (all threads, the busiest, the measured window), memory, the
/// CPUs each thread got, I/O backend and system calls.
fn cost(plan: &Plan, out: &RunOutcome, cpu_fraction: f64, window_s: f64) -> Value {
    let st = &out.stats;
    let cpu_s = out.user_s + out.sys_s;
    let responses = st.window.responses_in;
    let win_cpu = window_cpu_s(st, window_s);
    let per_response = |n: f64| {
        if st.kinds.iter().map(|k| k.responses).sum::<u64>() > 0 {
            n / st.kinds.iter().map(|k| k.responses).sum::<u64>() as f64
        } else {
            0.0
        }
    };
    let mut pinned: Vec<usize> = st.threads.iter().flat_map(|t| t.cpus.clone()).collect();
    pinned.sort_unstable();
    pinned.dedup();
    json!({
        "user_s": out.user_s, "sys_s": out.sys_s, "cpu_fraction": cpu_fraction,
        "busiest_thread_cpu_fraction": busiest_thread(st), "threads": st.threads.len(),
        "thread_cpus": threads(st), "window_cpu_s": win_cpu,
        "max_rss_kib": out.max_rss_kib, "nofile_limit": out.nofile_limit,
        "pinned_cpus": if plan.cpus.is_empty() { Vec::new() } else { pinned }, "pin_error": Value::Null,
        "io_backend": out.io_backend, "io_note": out.io_note,
        "syscalls": st.syscalls, "syscalls_per_response": per_response(st.syscalls as f64),
        // Over the measured window: replies that completed in it per engine CPU-second in it.
        "responses_per_cpu_s": if win_cpu > 0.0 { responses as f64 / win_cpu } else if cpu_s > 0.0 {
            responses as f64 / cpu_s } else { 0.0 },
    })
}

/// The busiest thread's CPU share over the run (its own CPU time over its own wall time).
pub fn busiest_thread(st: &ThreadStats) -> f64 {
    st.threads.iter().map(|t| t.fraction()).fold(0.0, f64::max)
}

/// The open models' schedule lag: its p99 and max in µs (0 when nothing was scheduled).
fn lag_of(st: &ThreadStats) -> (u64, u64) {
    let lag = &st.lag_us;
    if lag.is_empty() {
        (0, 0)
    } else {
        (lag.value_at_quantile(0.99), lag.max())
    }
}

pub fn build(plan: &Plan, plan_echo: &Value, out: &RunOutcome) -> Value {
    let st = &out.stats;
    let k = kinds(plan, st);
    let elapsed = out.elapsed_s.max(1e-9);
    let cpu_fraction = (out.user_s + out.sys_s) / (elapsed * plan.threads as f64);
    let (lag_p99, lag_max) = lag_of(st);
    let window_s = crate::models::window_s(plan)
        .unwrap_or(st.window.last_completion_ns as f64 / NS_PER_S as f64);
    let busiest = busiest_thread(st).max(cpu_fraction);
    let reasons = saturation::reasons(plan, out, busiest, lag_p99, window_s);
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
            "responses_in_window": st.window.responses_in,
            "completed_after_window": st.window.completed_after,
            "turnaround_us": turnaround(plan, st),
        },
        "kinds": k.entries,
        "timeline": timeline(st),
        "cost": cost(plan, out, cpu_fraction, window_s),
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
