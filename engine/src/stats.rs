//! Counters and HdrHistograms one worker thread collects, and their merge across threads.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::clock::Stamp;
pub use crate::seconds::{Second, ThreadCpu, Window};

/// Number of error classes.
pub const ERROR_CLASSES: usize = 15;

/// Error classes, in the order of the result's `errors` object.
pub const ERROR_NAMES: [&str; ERROR_CLASSES] = [
    "connect_refused",
    "connect_timeout",
    "connect_error",
    "reset",
    "closed_before_response",
    "timeout",
    "bad_status",
    "bad_body",
    "protocol_error",
    "fd_limit",
    "ports_exhausted",
    "handshake_failed",
    "message_lost",
    "stream_reset",
    "tls_failed",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    ConnectRefused = 0,
    ConnectTimeout,
    ConnectError,
    Reset,
    ClosedBeforeResponse,
    Timeout,
    BadStatus,
    BadBody,
    ProtocolError,
    /// A connect failed for want of a file descriptor (EMFILE, ENFILE): the engine's limit.
    FdLimit,
    /// A connect found no free local address and port (EADDRNOTAVAIL): the engine's limit.
    PortsExhausted,
    /// A WebSocket upgrade was refused or answered wrongly: the messages the connection was
    /// opened for (reasons in the result's `websocket.handshake_failures`).
    HandshakeFailed,
    /// A WebSocket echo that never came while a later message's did.
    MessageLost,
    /// An HTTP/2 stream the server reset (RST_STREAM; codes in the result's
    /// `http2.rst_streams`).
    StreamReset,
    /// The TLS handshake failed (or ALPN chose no protocol the load speaks): the requests the
    /// connection was opened for, never sent (reasons in the result's `tls.failures`).
    TlsFailed,
}

pub type Errors = [u64; ERROR_CLASSES];

/// Histogram range: 1 µs .. 1 h at 3 significant digits (the protocol's `hdr`).
pub const HIST_MAX_US: u64 = 3_600_000_000;

pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("valid histogram bounds")
}

/// Timeline buckets only need p50/p99, so 2 digits keep a per-second histogram small.
fn new_coarse_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 2).expect("valid histogram bounds")
}

pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    h.saturating_record(us.clamp(1, HIST_MAX_US));
}

/// The engine's turnaround is mostly below a microsecond: its histogram counts ns, 1 ns .. 1 h.
fn new_ns_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US * 1000, 3).expect("valid histogram bounds")
}

pub struct KindStats {
    /// Requests put on the wire, each once (a re-send is not a new request).
    pub requests_sent: u64,
    /// Requests sent again after an unannounced keep-alive close.
    pub resent: u64,
    pub responses: u64,
    pub ok: u64,
    pub errors: Errors,
    pub bad_status_codes: BTreeMap<u16, u64>,
    /// Valid replies completed within the measured window.
    pub ok_in_window: u64,
    /// Every request that ended: complete replies at their latency, failures at the time they
    /// failed (from when they were intended to go), so that percentiles cover every request.
    pub latency_us: Histogram<u64>,
    /// Complete replies only (ok or not): the latency of the requests that were answered.
    pub reply_latency_us: Histogram<u64>,
    /// Failures only, at the time they failed: where a percentile of `latency_us` falls among
    /// these, it is a lower bound (the request never got its reply).
    pub failed_latency_us: Histogram<u64>,
    pub service_us: Histogram<u64>,
    pub connect_us: Histogram<u64>,
    /// The first wrong reply of each class, quoted (`wrong.rs`).
    pub wrong: crate::wrong::WrongReplies,
}

impl KindStats {
    fn new() -> KindStats {
        KindStats {
            requests_sent: 0,
            resent: 0,
            responses: 0,
            ok: 0,
            errors: [0; ERROR_CLASSES],
            bad_status_codes: BTreeMap::new(),
            ok_in_window: 0,
            latency_us: new_hist(),
            reply_latency_us: new_hist(),
            failed_latency_us: new_hist(),
            service_us: new_hist(),
            connect_us: new_hist(),
            wrong: crate::wrong::WrongReplies::default(),
        }
    }

    fn merge(&mut self, o: &KindStats) {
        self.requests_sent += o.requests_sent;
        self.resent += o.resent;
        self.responses += o.responses;
        self.ok += o.ok;
        add_errors(&mut self.errors, &o.errors);
        for (code, n) in &o.bad_status_codes {
            *self.bad_status_codes.entry(*code).or_default() += n;
        }
        self.ok_in_window += o.ok_in_window;
        self.latency_us.add(&o.latency_us).expect("same bounds");
        self.reply_latency_us
            .add(&o.reply_latency_us)
            .expect("same bounds");
        self.failed_latency_us
            .add(&o.failed_latency_us)
            .expect("same bounds");
        self.service_us.add(&o.service_us).expect("same bounds");
        self.connect_us.add(&o.connect_us).expect("same bounds");
        self.wrong.merge(&o.wrong);
    }
}

pub fn add_errors(a: &mut Errors, b: &Errors) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Resources the engine itself ran out of: these make a result `saturated`.
#[derive(Default, Clone, Copy)]
pub struct Exhaustion {
    pub fd_limit: u64,
    pub ephemeral_ports: u64,
}

pub struct ThreadStats {
    pub kinds: Vec<KindStats>,
    pub idle_close: u64,
    /// Reused keep-alive connections the server closed silently with a request outstanding.
    pub unannounced_closes: u64,
    pub connections_opened: u64,
    pub connection_close_replies: u64,
    pub bytes_received: u64,
    /// Connections dropped because bytes arrived with no request outstanding.
    pub unsolicited_bytes: u64,
    /// System calls the thread made (reads, writes, waits, connects, closes, ring enters).
    pub syscalls: u64,
    /// Requests a model planned but never attempted because the run hit its hard stop.
    pub abandoned: u64,
    /// Rate with a pool: arrivals that waited for a free connection past the request timeout
    /// (counted as `timeout` errors, never sent).
    pub queue_timeouts: u64,
    pub timeline: Vec<Second>,
    /// Open models: how late arrivals and think-time sends started, in µs.
    pub lag_us: Histogram<u64>,
    /// Closed loops (closed, count): per request sent after a reply on its connection, ns from
    /// the clock reading that saw the reply complete to the one just before the write.
    pub turnaround_ns: Histogram<u64>,
    pub exhaustion: Exhaustion,
    /// Peak simultaneously open connections.
    pub peak_open: u64,
    pub window: Window,
    /// WebSocket loads: handshakes, control frames, duplicates, closes.
    pub ws: crate::ws::WsStats,
    /// HTTP/2 loads: settings, GOAWAY, RST_STREAM, flow control.
    pub h2: crate::h2::H2Stats,
    /// TLS loads: handshakes, resumption, ALPN, failures.
    pub tls: crate::tls::TlsStats,
    /// Each thread's CPUs and CPU time (one entry per thread once merged).
    pub threads: Vec<ThreadCpu>,
}

impl ThreadStats {
    pub fn new(kinds: usize) -> ThreadStats {
        ThreadStats {
            kinds: (0..kinds).map(|_| KindStats::new()).collect(),
            idle_close: 0,
            unannounced_closes: 0,
            connections_opened: 0,
            connection_close_replies: 0,
            bytes_received: 0,
            unsolicited_bytes: 0,
            syscalls: 0,
            abandoned: 0,
            queue_timeouts: 0,
            timeline: Vec::new(),
            lag_us: new_hist(),
            turnaround_ns: new_ns_hist(),
            exhaustion: Exhaustion::default(),
            peak_open: 0,
            window: Window::default(),
            ws: crate::ws::WsStats::default(),
            h2: crate::h2::H2Stats::default(),
            tls: crate::tls::TlsStats::default(),
            threads: Vec::new(),
        }
    }

    /// `n` requests written `ns` after the reply they follow (closed loops).
    pub fn turnaround(&mut self, ns: u64, n: u64) {
        self.turnaround_ns.saturating_record_n(ns.max(1), n);
    }

    pub fn second(&mut self, sec: usize) -> &mut Second {
        if self.timeline.len() <= sec {
            self.timeline.resize_with(sec + 1, Second::default);
        }
        &mut self.timeline[sec]
    }

    /// A request that failed with `class` at `at`, `latency_us` after it was intended to go:
    /// counted, and recorded in the latency at the time it failed (a lower bound of what its
    /// reply would have taken). The engine's own limits (descriptors, ports) are no latency of
    /// the server's: counted only.
    pub fn error(&mut self, kind: usize, class: ErrorClass, at: Stamp, latency_us: u64) {
        self.errors_n(kind, class, 1, at, latency_us);
    }

    /// A failure that is no message's (a broadcast subscriber's or publisher's connection that
    /// never opened): counted, not in the latency, which is the messages' delivery.
    pub fn link_error(&mut self, kind: usize, class: ErrorClass, at: Stamp) {
        self.kinds[kind].errors[class as usize] += 1;
        self.window.completion(at);
        let s = self.second(at.sec);
        s.completed += 1;
        s.errors[class as usize] += 1;
    }

    /// `n` failures of class `class` at once (0: nothing), each `latency_us` after it was due.
    pub fn errors_n(&mut self, kind: usize, class: ErrorClass, n: u64, at: Stamp, latency_us: u64) {
        if n == 0 {
            return;
        }
        let engine_limit = matches!(class, ErrorClass::FdLimit | ErrorClass::PortsExhausted);
        let k = &mut self.kinds[kind];
        k.errors[class as usize] += n;
        let us = latency_us.clamp(1, HIST_MAX_US);
        if !engine_limit {
            k.latency_us.saturating_record_n(us, n);
            k.failed_latency_us.saturating_record_n(us, n);
        }
        self.window.completion(at);
        let s = self.second(at.sec);
        s.completed += n;
        s.errors[class as usize] += n;
        if !engine_limit {
            s.latency_us
                .get_or_insert_with(new_coarse_hist)
                .saturating_record_n(us, n);
        }
    }

    /// A request of `kind` sent again after an unannounced close, at `at`.
    pub fn resent(&mut self, kind: usize, at: Stamp) {
        self.kinds[kind].resent += 1;
        self.second(at.sec).resent += 1;
    }

    /// A complete reply: classified ok / bad_status / bad_body by the caller.
    pub fn response(
        &mut self,
        kind: usize,
        status: u16,
        outcome: Result<(), ErrorClass>,
        latency_us: u64,
        service_us: Option<u64>,
        at: Stamp,
    ) {
        let k = &mut self.kinds[kind];
        k.responses += 1;
        record_us(&mut k.latency_us, latency_us);
        record_us(&mut k.reply_latency_us, latency_us);
        if let Some(s) = service_us {
            record_us(&mut k.service_us, s);
        }
        match outcome {
            Ok(()) => k.ok += 1,
            Err(c) => {
                k.errors[c as usize] += 1;
                if c == ErrorClass::BadStatus {
                    *k.bad_status_codes.entry(status).or_default() += 1;
                }
            }
        }
        self.window.completion(at);
        if at.in_window {
            self.window.responses_in += 1;
        }
        if !at.in_window {
            self.window.completed_after += 1;
        } else if outcome.is_ok() {
            self.window.ok_in += 1;
            self.kinds[kind].ok_in_window += 1;
        }
        let s = self.second(at.sec);
        s.completed += 1;
        match outcome {
            Ok(()) => s.ok += 1,
            Err(c) => s.errors[c as usize] += 1,
        }
        record_us(s.latency_us.get_or_insert_with(new_coarse_hist), latency_us);
    }

    pub fn merge(&mut self, o: &ThreadStats) {
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.merge(b);
        }
        self.idle_close += o.idle_close;
        self.unannounced_closes += o.unannounced_closes;
        self.connections_opened += o.connections_opened;
        self.connection_close_replies += o.connection_close_replies;
        self.bytes_received += o.bytes_received;
        self.unsolicited_bytes += o.unsolicited_bytes;
        self.syscalls += o.syscalls;
        self.abandoned += o.abandoned;
        self.queue_timeouts += o.queue_timeouts;
        self.lag_us.add(&o.lag_us).expect("same bounds");
        self.turnaround_ns
            .add(&o.turnaround_ns)
            .expect("same bounds");
        self.exhaustion.fd_limit += o.exhaustion.fd_limit;
        self.exhaustion.ephemeral_ports += o.exhaustion.ephemeral_ports;
        self.peak_open += o.peak_open;
        self.window.merge(&o.window);
        self.ws.merge(&o.ws);
        self.h2.merge(&o.h2);
        self.tls.merge(&o.tls);
        self.threads.extend(o.threads.iter().cloned());
        for (i, s) in o.timeline.iter().enumerate() {
            let d = self.second(i);
            d.completed += s.completed;
            d.ok += s.ok;
            add_errors(&mut d.errors, &s.errors);
            d.resent += s.resent;
            d.open_connections += s.open_connections;
            d.cpu_ns += s.cpu_ns;
            d.wall_ns += s.wall_ns;
            d.busiest_cpu = d.busiest_cpu.max(s.busiest_cpu);
            d.arrivals += s.arrivals;
            if let Some(h) = &s.latency_us {
                d.latency_us
                    .get_or_insert_with(new_coarse_hist)
                    .add(h)
                    .expect("same bounds");
            }
        }
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
