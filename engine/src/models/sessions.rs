//! Sessions (tsung): users arrive on a schedule, each on one keep-alive connection making M requests with think time.

use super::{Model, Schedule};
use crate::reactor::{ConnEnd, EndReason, Reactor, Script};

pub struct Sessions {
    schedule: Schedule,
    requests: u64,
    think_ns: u64,
}

impl Sessions {
    pub fn new(schedule: Schedule, requests: u64, think_ns: u64) -> Sessions {
        Sessions {
            schedule,
            requests,
            think_ns,
        }
    }
}

impl Model for Sessions {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        self.on_timer(now, rt);
    }

    fn on_timer(&mut self, now: u64, rt: &mut Reactor) {
        while let Some(t) = self.schedule.pop_due(now) {
            let script = Script {
                remaining: self.requests,
                depth: 1,
                think_ns: self.think_ns,
                stop_sending_ns: u64::MAX,
                tag: 0,
            };
            rt.open(script, Some(t), now);
        }
    }

    fn next_due_ns(&self) -> Option<u64> {
        self.schedule.peek()
    }

    /// A user whose connection the server closed comes back when their think time ends, on a
    /// new connection, the request intended at that time even when the close was noticed
    /// later (so its latency includes the reconnect); a user whose request failed leaves.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        if end.reason == EndReason::ServerClosed {
            if end.resume_at_ns <= now {
                rt.open(end.script, Some(end.resume_at_ns), now);
            } else {
                rt.open_at(end.resume_at_ns, end.script);
            }
        }
    }

    fn finished(&self, _now: u64, _rt: &Reactor) -> bool {
        self.schedule.done()
    }

    fn abandon(&mut self) -> u64 {
        self.schedule.drain().saturating_mul(self.requests)
    }
}
