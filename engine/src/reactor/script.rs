//! What a connection may send (its [`Script`]), how it ended, and the one place where the next
//! request of a script is reserved (script count, stop time, global budget, kind pick or the
//! kind the model gives).

use crate::rng::{KindPicker, Rng};
use crate::stats::ErrorClass;

/// What one connection may do; carried over when a model reconnects for the same user/slot.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    /// Requests still to send (u64::MAX: unlimited).
    pub remaining: u64,
    /// Most requests in flight at once (pipelining depth).
    pub depth: u32,
    /// Pause between a reply and the next send (sessions).
    pub think_ns: u64,
    /// No new request is sent at or after this time.
    pub stop_sending_ns: u64,
    /// The model's own id (slot, user).
    pub tag: u64,
}

impl Script {
    /// The script has requests left and its stop time has not come (the budget aside).
    pub fn can_send(&self, now: u64) -> bool {
        self.remaining > 0 && now < self.stop_sending_ns
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EndReason {
    /// The script ran out or the model's stop time passed.
    Done,
    /// The server closed (idle close, or a reply announced close) with requests left to send.
    ServerClosed,
    Error(ErrorClass),
}

/// A connection that is gone, handed back to the model.
#[derive(Debug, Clone, Copy)]
pub struct ConnEnd {
    pub script: Script,
    pub reason: EndReason,
    /// When the next request was due on the connection (the last reply, plus think time), for
    /// reconnecting at that time and measuring latency from it.
    pub resume_at_ns: u64,
}

/// Hands out requests: the thread's optional global budget and the weighted kind pick.
pub(super) struct Issuer {
    picker: KindPicker,
    /// Also draws WebSocket keys.
    pub rng: Rng,
    /// Requests left in a global budget (count model).
    pub budget: Option<u64>,
    /// The kind of the next request reserved, when the model gives it (trace), not the pick.
    pub given: Option<u16>,
}

impl Issuer {
    pub fn new(picker: KindPicker, rng: Rng) -> Issuer {
        Issuer {
            picker,
            rng,
            budget: None,
            given: None,
        }
    }

    /// Reserve the next request of `script`: take it from the script and the budget and pick its
    /// kind. None when the script is spent, its stop time passed, or the budget is used up.
    pub fn reserve(&mut self, script: &mut Script, now: u64) -> Option<u16> {
        if !script.can_send(now) {
            return None;
        }
        if let Some(b) = &mut self.budget {
            if *b == 0 {
                return None;
            }
            *b -= 1;
        }
        if script.remaining != u64::MAX {
            script.remaining -= 1;
        }
        Some(
            self.given
                .take()
                .unwrap_or_else(|| self.picker.pick(&mut self.rng)),
        )
    }
}
