//! Open loop on a fixed pool of keep-alive connections (wrk2 -c N -R rate): one request per schedule slot.

use super::{Model, Schedule};
use crate::reactor::{ConnEnd, Reactor};

pub struct Pool {
    schedule: Schedule,
    size: u64,
}

impl Pool {
    pub fn new(schedule: Schedule, size: u64) -> Pool {
        Pool { schedule, size }
    }
}

impl Model for Pool {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        rt.start_pool(self.size, now);
        self.on_timer(now, rt);
    }

    /// Offer every due arrival, however late: a request with no free connection waits in the
    /// client, its latency counted from when it was due.
    fn on_timer(&mut self, now: u64, rt: &mut Reactor) {
        while let Some(t) = self.schedule.pop_due(now) {
            rt.offer(t, now);
        }
        if self.schedule.done() {
            rt.drain_pool(now);
        }
    }

    fn next_due_ns(&self) -> Option<u64> {
        self.schedule.peek()
    }

    /// A connection the server closed or that failed is replaced, for the next arrival.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        rt.pool_lost(end.reason, now);
    }

    fn finished(&self, _now: u64, _rt: &Reactor) -> bool {
        self.schedule.done()
    }

    fn abandon(&mut self) -> u64 {
        self.schedule.drain()
    }
}
