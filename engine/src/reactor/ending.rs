//! How a connection ends: broken (its requests failed, each timed at its failure), closed and
//! handed back to the model, or cut at the hard stop.

use super::{ConnEnd, EndReason, Reactor};
use crate::stats::ErrorClass;

impl Reactor {
    /// The connection broke: the first outstanding request gets `class`, requests pipelined
    /// behind it `closed_before_response` (all of them `reset` on a reset).
    pub(super) fn fail(&mut self, idx: usize, class: ErrorClass, now: u64) {
        let at = self.timeline.stamp(now);
        let c = self.slots.live_mut(idx);
        // Requests reserved for the connection and not sent on it (all of them while connecting),
        // due when the connection was (or began to be) opened for them.
        let opened_for = c.intended_ns.unwrap_or(c.connect_start_ns);
        for t in c.tickets.drain(..) {
            let waited = now.saturating_sub(t.intended_ns.unwrap_or(opened_for)) / 1000;
            self.stats.error(t.kind as usize, class, at, waited);
        }
        for (i, f) in c.inflight.drain(..).enumerate() {
            let cls = if i == 0 || class == ErrorClass::Reset {
                class
            } else {
                ErrorClass::ClosedBeforeResponse
            };
            let waited = now.saturating_sub(f.intended_ns) / 1000;
            self.stats.error(f.kind as usize, cls, at, waited);
        }
        self.end(idx, EndReason::Error(class), now);
    }

    /// Close the connection and hand it back to the model.
    pub(super) fn end(&mut self, idx: usize, reason: EndReason, now: u64) {
        if reason == EndReason::Done {
            self.ws_goodbye(idx);
        }
        let gen = self.slots.gen(idx);
        let c = self.slots.remove(idx);
        // When the next request was due: after think time, else as soon as the last reply came.
        let resume_at_ns = if c.thinking {
            c.think_due_ns
        } else {
            c.last_reply_ns.unwrap_or(now) + c.script.think_ns
        };
        self.ended.push(ConnEnd {
            script: c.script,
            reason,
            resume_at_ns,
        });
        self.release(c.sock, idx, gen, !matches!(reason, EndReason::Error(_)));
    }

    /// Hard stop: whatever is still outstanding counts as timed out.
    pub fn abort_all(&mut self, now: u64) {
        for idx in 0..self.slots.len() {
            let Some(c) = self.slots.get(idx) else {
                continue;
            };
            if c.connecting {
                self.fail(idx, ErrorClass::ConnectTimeout, now);
            } else if !c.inflight.is_empty() || c.upgrading() || c.tls_handshaking() {
                self.fail(idx, ErrorClass::Timeout, now);
            } else {
                self.end(idx, EndReason::Done, now);
            }
        }
        self.expire_queue(now, true);
        for s in self.timers.drain_deferred_opens() {
            self.stats.abandoned += s.remaining.min(1 << 40);
        }
        self.ended.clear();
    }
}
