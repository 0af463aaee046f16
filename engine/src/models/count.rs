//! Fixed count (ab -n -c): exactly N requests over C closed-loop workers.

use super::{share, Model};
use crate::reactor::{ConnEnd, Reactor, Script};

pub struct Count {
    requests: u64,
    concurrency: u64,
}

impl Count {
    /// Thread `thread`'s part of `requests` over `concurrency` workers. Only threads that get a
    /// worker get requests, or a worker-less thread would wait forever.
    pub fn for_thread(requests: u64, concurrency: u64, thread: usize, threads: usize) -> Count {
        let busy = threads.min(concurrency as usize);
        let (requests, concurrency) = if thread < busy {
            (
                share(requests, thread, busy),
                share(concurrency, thread, busy),
            )
        } else {
            (0, 0)
        };
        Count {
            requests,
            concurrency,
        }
    }

    fn script(tag: u64) -> Script {
        Script {
            remaining: u64::MAX,
            depth: 1,
            think_ns: 0,
            stop_sending_ns: u64::MAX,
            tag,
        }
    }
}

impl Model for Count {
    fn start(&mut self, now: u64, rt: &mut Reactor) {
        // The reactor's budget makes "exactly N" hold across reconnects and failures.
        rt.set_budget(self.requests);
        for w in 0..self.concurrency.min(self.requests) {
            rt.open(Self::script(w), None, now);
        }
    }

    fn on_timer(&mut self, _now: u64, _rt: &mut Reactor) {}

    fn next_due_ns(&self) -> Option<u64> {
        None
    }

    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor) {
        if rt.budget_left() > 0 {
            rt.open(Self::script(end.script.tag), None, now);
        }
    }

    fn finished(&self, _now: u64, rt: &Reactor) -> bool {
        rt.budget_left() == 0
    }
}
