//! Unannounced keep-alive closes (RFC 9110 §9.2.2, RFC 9112 §9.3.1): a server may close an idle
//! persistent connection at any time, and a request sent as the close crosses it gets a FIN or
//! a reset instead of a reply. On a connection that already carried a complete reply, with no
//! byte of the next reply seen and an idempotent request at the head, that is such a close, not
//! a failure: the outstanding idempotent requests go again, once each, on a new connection,
//! keeping their original intended send times (so their latency includes the detour).

use std::collections::VecDeque;

use super::conn::{Conn, Ticket};
use super::Reactor;
use crate::stats::ErrorClass;

impl Reactor {
    /// The connection `idx` broke with `class` (`closed_before_response` for a FIN, `reset`).
    /// When it was an unannounced close, count it, re-send what may be re-sent on a new
    /// connection, book the rest as errors and return true; otherwise change nothing.
    pub(super) fn resend_after_unannounced_close(
        &mut self,
        idx: usize,
        class: ErrorClass,
        now: u64,
    ) -> bool {
        if !self.unannounced_close(self.slots.live_ref(idx)) {
            return false;
        }
        let gen = self.slots.gen(idx);
        let c = self.slots.remove(idx);
        self.stats.unannounced_closes += 1;
        let at = self.timeline.stamp(now);
        let mut again = VecDeque::new();
        for f in &c.inflight {
            if !f.resent && self.cfg.kinds[f.kind as usize].idempotent {
                self.stats.resent(f.kind as usize, at);
                again.push_back(Ticket {
                    kind: f.kind,
                    intended_ns: Some(f.intended_ns),
                    resent: true,
                    // The re-send keeps the deadline of its first send: a detour is no reason
                    // to wait longer for the reply.
                    deadline_ns: Some(f.deadline_ns),
                });
            } else {
                // Not idempotent (or already sent twice) behind the head: broken as before.
                let cls = if class == ErrorClass::Reset {
                    class
                } else {
                    ErrorClass::ClosedBeforeResponse
                };
                let waited = now.saturating_sub(f.intended_ns) / 1000;
                self.stats.error(f.kind as usize, cls, at, waited);
            }
        }
        let script = c.script;
        self.release(c.sock, idx, gen, false);
        self.connect(script, again, None, now);
        true
    }

    /// Whether a close of `c` now is an unannounced keep-alive close: the connection carried a
    /// complete reply, no reply announced close, no byte of the next reply came, and the head
    /// request is idempotent and was not re-sent already.
    fn unannounced_close(&self, c: &Conn) -> bool {
        !c.connecting
            && c.h2.is_none()
            && !c.closing
            && c.done_seq > 0
            && c.between_replies()
            && c.inflight
                .front()
                .is_some_and(|f| !f.resent && self.cfg.kinds[f.kind as usize].idempotent)
    }
}
