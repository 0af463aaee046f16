//! Timers: connect and request timeouts, think timers and deferred opens, and firing them.
//!
//! Each queue has a constant delay, so pushing in time order keeps it sorted: a FIFO is enough.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{ConnEnd, EndReason, Reactor, Script};
use crate::stats::{record_us, ErrorClass};

/// A request's timeout: (slot, generation, sequence number of the request).
pub(super) type RequestTimer = (usize, u32, u64);

/// Due times in push order, which is also time order.
pub(super) struct Queue<T>(VecDeque<(u64, T)>);

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue(VecDeque::new())
    }
}

impl<T> Queue<T> {
    pub fn push(&mut self, due_ns: u64, item: T) {
        self.0.push_back((due_ns, item));
    }

    /// The front entry if it is due by `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, T)> {
        if self.0.front()?.0 > now {
            return None;
        }
        self.0.pop_front()
    }

    pub fn next_due_ns(&self) -> Option<u64> {
        self.0.front().map(|t| t.0)
    }
}

#[derive(Default)]
pub(super) struct Timers {
    /// (slot, generation) of a connection still connecting.
    pub connect: Queue<(usize, u32)>,
    /// (slot, generation, sequence number of the request).
    pub request: Queue<RequestTimer>,
    /// Re-sent requests, whose deadlines (their first send's) come before the FIFO's order.
    pub resent: BinaryHeap<Reverse<(u64, RequestTimer)>>,
    /// (slot, generation) of a connection thinking before its next send.
    pub think: Queue<(usize, u32)>,
    /// Scripts to open a connection for (users back after think time).
    pub deferred_opens: Queue<Script>,
}

impl Timers {
    /// Set the timeout of a request sent now: `timeout_at` (the request timeout from now), or a
    /// re-send's own earlier `deadline` (its first send's), which is kept out of the FIFO's time
    /// order. Returns the one set.
    pub fn time_out(&mut self, timeout_at: u64, deadline: Option<u64>, timer: RequestTimer) -> u64 {
        match deadline {
            Some(d) if d < timeout_at => {
                self.resent.push(Reverse((d, timer)));
                d
            }
            _ => {
                self.request.push(timeout_at, timer);
                timeout_at
            }
        }
    }

    fn pop_early(&mut self, now: u64) -> Option<RequestTimer> {
        match self.resent.peek() {
            Some(Reverse((due, _))) if *due <= now => self.resent.pop().map(|Reverse((_, i))| i),
            _ => None,
        }
    }

    pub fn has_deferred_opens(&self) -> bool {
        !self.deferred_opens.0.is_empty()
    }

    /// Drop the deferred opens, returning their scripts.
    pub fn drain_deferred_opens(&mut self) -> impl Iterator<Item = Script> + '_ {
        self.deferred_opens.0.drain(..).map(|(_, s)| s)
    }
}

impl Reactor {
    /// Fire due timers: connect and request timeouts, think times, deferred opens.
    pub fn expire(&mut self, now: u64) {
        while let Some((_, (idx, gen))) = self.timers.connect.pop_due(now) {
            match self.slots.get_mut(idx, gen) {
                Some(c) if c.connecting => self.fail(idx, ErrorClass::ConnectTimeout, now),
                Some(c) if c.upgrading() => {
                    self.stats.ws.failed(crate::ws::HandshakeFailure::Timeout);
                    self.fail(idx, ErrorClass::HandshakeFailed, now);
                }
                Some(c) if c.tls_handshaking() => {
                    self.tls_failed(idx, crate::tls::TlsFailure::Timeout, now);
                }
                _ => {}
            }
        }
        while let Some((_, (idx, gen, seq))) = self.timers.request.pop_due(now) {
            if self.slots.get_mut(idx, gen).is_some_and(|c| c.awaits(seq)) {
                self.fail(idx, ErrorClass::Timeout, now);
            }
        }
        while let Some((idx, gen, seq)) = self.timers.pop_early(now) {
            if self.slots.get_mut(idx, gen).is_some_and(|c| c.awaits(seq)) {
                self.fail(idx, ErrorClass::Timeout, now);
            }
        }
        self.expire_queue(now, false);
        self.expire_schedule(now);
    }

    /// Fire only the scheduled sends: think timers and deferred opens.
    pub fn expire_schedule(&mut self, now: u64) {
        while let Some((due, (idx, gen))) = self.timers.think.pop_due(now) {
            if let Some(c) = self.slots.get_mut(idx, gen) {
                if c.thinking {
                    c.thinking = false;
                    record_us(&mut self.stats.lag_us, now.saturating_sub(due) / 1000);
                    self.fill(idx, now);
                }
            }
        }
        while let Some((due, script)) = self.timers.deferred_opens.pop_due(now) {
            if !self.open(script, Some(due), now) {
                self.ended.push(ConnEnd {
                    script,
                    reason: EndReason::Done,
                    resume_at_ns: now,
                });
            }
        }
    }

    /// Next time that needs sub-millisecond precision (sends on a schedule).
    pub fn next_precise_ns(&self) -> Option<u64> {
        let a = self.timers.think.next_due_ns();
        let b = self.timers.deferred_opens.next_due_ns();
        a.into_iter().chain(b).min()
    }

    /// Next timeout, where millisecond precision is enough.
    pub fn next_coarse_ns(&self) -> Option<u64> {
        let a = self.timers.connect.next_due_ns();
        let b = self.timers.request.next_due_ns();
        let c = self.queue_deadline_ns();
        let d = self.timers.resent.peek().map(|Reverse((due, _))| *due);
        a.into_iter().chain(b).chain(c).chain(d).min()
    }
}
