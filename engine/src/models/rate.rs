//! Open loop on connections (httperf --rate --num-calls): a new connection per schedule slot, `calls` requests on it.

use super::{Model, Schedule};
use crate::reactor::{ConnEnd, EndReason, Reactor, Script};

pub struct Rate {
    schedule: Schedule,
    calls: u64,
    pipeline: bool,
}

impl Rate {
    pub fn new(schedule: Schedule, calls: u64, pipeline: bool) -> Rate {
        Rate {
            schedule,
            calls,
            pipeline,
        }
    }
}

impl Model for Rate {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        self.on_timer(now, rt);
    }

    /// Launch every due arrival, however late: an open loop never waits for the server.
    fn on_timer(&mut self, now: u64, rt: &mut Reactor) {
        while let Some(t) = self.schedule.pop_due(now) {
            let depth = if self.pipeline {
                self.calls.min(1024) as u32
            } else {
                1
            };
            let script = Script {
                remaining: self.calls,
                depth,
                think_ns: 0,
                stop_sending_ns: u64::MAX,
                tag: 0,
            };
            rt.open(script, Some(t), now);
        }
    }

    fn next_due_ns(&self) -> Option<u64> {
        self.schedule.peek()
    }

    /// Calls left after the server closed (HTTP/1.0, Connection: close) go on a new connection,
    /// the next one intended when it would have gone on the old one (at the last reply), so its
    /// latency includes the reconnect; after an error the rest of that connection's calls are
    /// dropped, as httperf does.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        if end.reason == EndReason::ServerClosed {
            rt.reconnect(end.script, Some(end.resume_at_ns), now);
        }
    }

    fn finished(&self, _now: u64, _rt: &Reactor) -> bool {
        self.schedule.done()
    }

    fn abandon(&mut self) -> u64 {
        self.schedule.drain().saturating_mul(self.calls)
    }
}
