//! Open loop on a schedule file (an access log replayed): each request at its offset divided by
//! the speed, of the kind the schedule names; a new connection each (as `rate` with one call) or
//! a fixed pool of keep-alive connections (as `rate` with `pool`).

use std::sync::Arc;

use serde_json::{json, Value};

use super::{share, Model};
use crate::clock::NS_PER_S;
use crate::plan::trace::{kind_mask, TraceSpec, KIND_BITS};
use crate::reactor::{ConnEnd, EndReason, Reactor, Script};
use crate::stats::ThreadStats;

/// A connection carries the one request it was opened for.
const ONE: Script = Script {
    remaining: 1,
    depth: 1,
    think_ns: 0,
    stop_sending_ns: u64::MAX,
    tag: 0,
};

/// One thread's part of a trace: of the host's records (`first`, `first + stride`, …) every
/// `threads`-th, from its own index, as `rate` splits its slots.
pub struct Trace {
    records: Arc<[u64]>,
    /// The index of this thread's next record.
    next: usize,
    step: usize,
    /// Records at or after this offset are not sent.
    end_us: u64,
    speed: f64,
    /// The run's start: offset 0, and timeline second 0.
    start_ns: u64,
    /// This thread's connections of the pool, when the trace has one.
    pool: Option<u64>,
}

impl Trace {
    pub fn new(spec: &TraceSpec, thread: usize, threads: usize, start_ns: u64) -> Trace {
        let end_s = spec.duration_s.unwrap_or(spec.span_s).min(spec.span_s);
        Trace {
            records: Arc::clone(&spec.records),
            next: (spec.first + spec.stride * thread as u64) as usize,
            step: (spec.stride * threads as u64) as usize,
            end_us: (end_s * 1e6).round() as u64,
            speed: spec.speed,
            start_ns,
            pool: spec.pool.map(|n| share(n, thread, threads)),
        }
    }

    /// The next record's intended time and kind, if it is to be sent.
    pub fn peek(&self) -> Option<(u64, u16)> {
        let r = *self.records.get(self.next)?;
        let offset_us = r >> KIND_BITS;
        if offset_us >= self.end_us {
            return None;
        }
        let ns = (offset_us as f64 * 1000.0 / self.speed).round() as u64;
        Some((self.start_ns + ns, (r & kind_mask()) as u16))
    }

    /// The next record, if it is due by `now`; its intended second counts one arrival.
    fn pop_due(&mut self, now: u64, stats: &mut ThreadStats) -> Option<(u64, u16)> {
        let (t, kind) = self.peek().filter(|&(t, _)| t <= now)?;
        self.next += self.step;
        let sec = ((t - self.start_ns) / NS_PER_S) as usize;
        stats.second(sec).arrivals += 1;
        Some((t, kind))
    }
}

impl Model for Trace {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        if let Some(size) = self.pool {
            rt.start_pool(size, now);
        }
        self.on_timer(now, rt);
    }

    /// Launch every due request, however late: an open loop never waits for the server.
    fn on_timer(&mut self, now: u64, rt: &mut Reactor) {
        while let Some((t, kind)) = self.pop_due(now, &mut rt.stats) {
            if self.pool.is_some() {
                rt.offer_given(kind, t, now);
            } else {
                rt.open_given(kind, ONE, Some(t), now);
            }
        }
        if self.pool.is_some() && self.peek().is_none() {
            rt.drain_pool(now);
        }
    }

    fn next_due_ns(&self) -> Option<u64> {
        self.peek().map(|(t, _)| t)
    }

    /// A pool replaces a connection it lost; a connection of its own ends with its request.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        if self.pool.is_some() {
            rt.pool_lost(end.reason, now);
        } else if end.reason == EndReason::ServerClosed {
            rt.reconnect(end.script, Some(end.resume_at_ns), now);
        }
    }

    fn finished(&self, _now: u64, _rt: &Reactor) -> bool {
        self.peek().is_none()
    }

    fn abandon(&mut self) -> u64 {
        let mut n = 0;
        while self.peek().is_some() {
            self.next += self.step;
            n += 1;
        }
        n
    }
}

/// The result's timeline with each second's `arrivals`: the requests due in it.
pub fn add_arrivals(doc: &mut Value, st: &ThreadStats) {
    let Some(seconds) = doc["timeline"].as_array_mut() else {
        return;
    };
    for (entry, s) in seconds.iter_mut().zip(&st.timeline) {
        entry["arrivals"] = json!(s.arrivals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(records: Vec<u64>, speed: f64, first: u64, stride: u64) -> TraceSpec {
        TraceSpec {
            speed,
            path: String::new(),
            records: records.into(),
            span_s: 10.0,
            duration_s: None,
            pool: None,
            first,
            stride,
        }
    }

    fn drain(t: &mut Trace) -> Vec<(u64, u16)> {
        let mut st = ThreadStats::new(0);
        std::iter::from_fn(|| t.pop_due(u64::MAX - 1, &mut st)).collect()
    }

    #[test]
    fn threads_and_hosts_take_every_record_once_at_its_time_over_the_speed() {
        let records: Vec<u64> = (0..23u64)
            .map(|i| ((i * 250_000) << KIND_BITS) | (i % 3))
            .collect();
        let mut seen = Vec::new();
        for host in 0..2 {
            for thread in 0..3 {
                let mut t = Trace::new(&spec(records.clone(), 2.0, host, 2), thread, 3, 1000);
                seen.extend(drain(&mut t));
            }
        }
        seen.sort();
        let want: Vec<(u64, u16)> = (0..23u64)
            .map(|i| (1000 + i * 125_000_000, (i % 3) as u16))
            .collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn a_duration_replays_the_start_and_arrivals_count_by_second() {
        let records: Vec<u64> = (0..10u64).map(|i| (i * 300_000) << KIND_BITS).collect();
        let mut s = spec(records, 1.0, 0, 1);
        s.duration_s = Some(1.0);
        let mut t = Trace::new(&s, 0, 1, 0);
        let mut st = ThreadStats::new(0);
        let n = std::iter::from_fn(|| t.pop_due(u64::MAX - 1, &mut st)).count();
        assert_eq!(n, 4); // 0, 0.3, 0.6, 0.9 s
        assert_eq!(st.timeline[0].arrivals, 4);
        let mut t = Trace::new(&spec(vec![0, 5], 1.0, 0, 1), 0, 1, 0);
        assert_eq!(t.abandon(), 2);
    }
}
