//! A fixed pool of keep-alive connections fed by a schedule (wrk2's model): each arrival is one
//! request, sent on an idle connection of the pool, or queued in the client until one is free;
//! its latency counts from when it was due, so the time it waited in the queue is in it.

use std::collections::VecDeque;

use super::conn::Ticket;
use super::{EndReason, Reactor, Script};
use crate::stats::{record_us, ErrorClass};

/// A pooled connection's script: it sends only what the queue gives it, one request at a time.
const POOLED: Script = Script {
    remaining: u64::MAX,
    depth: 1,
    think_ns: 0,
    stop_sending_ns: u64::MAX,
    tag: 0,
};

pub(super) struct Pool {
    /// Connections the pool lacks (lost ones are opened again for the next arrival).
    missing: u64,
    /// Arrivals due and not yet sent: their intended time and request kind.
    queue: VecDeque<(u64, u16)>,
    /// Connections with nothing in flight, waiting for an arrival (checked by generation): the
    /// one idle longest goes first, so that arrivals spread over the whole pool (and over the
    /// server's workers the connections were accepted by), as wrk2's do.
    parked: VecDeque<(usize, u32)>,
    /// The schedule is over: a connection with nothing left to send closes.
    draining: bool,
}

impl Pool {
    /// The next queued arrival, as the ticket of a pooled connection's next request.
    pub(super) fn next(&mut self) -> Option<Ticket> {
        let (due, kind) = self.queue.pop_front()?;
        Some(Ticket {
            kind,
            intended_ns: Some(due),
            resent: false,
            deadline_ns: None,
        })
    }
}

impl Reactor {
    /// Open the pool's `size` connections; from now on every connection sends what the queue
    /// gives it.
    pub fn start_pool(&mut self, size: u64, now: u64) {
        self.pool = Some(Pool {
            missing: 0,
            queue: VecDeque::new(),
            parked: VecDeque::new(),
            draining: false,
        });
        for _ in 0..size {
            self.connect(POOLED, VecDeque::new(), None, now);
        }
    }

    /// An arrival due at `due_ns`: send it on an idle connection, on a connection opened again
    /// for it where the pool lost one, or queue it until a connection is free.
    pub fn offer(&mut self, due_ns: u64, now: u64) {
        record_us(&mut self.stats.lag_us, now.saturating_sub(due_ns) / 1000);
        let mut script = POOLED;
        let Some(kind) = self.issuer.reserve(&mut script, now) else {
            return;
        };
        let pool = self.pool.as_mut().expect("offer on a pool");
        pool.queue.push_back((due_ns, kind));
        while let Some((idx, gen)) = pool.parked.pop_front() {
            if self.slots.get_mut(idx, gen).is_some_and(|c| c.parked) {
                self.slots.live_mut(idx).parked = false;
                return self.fill(idx, now);
            }
        }
        if pool.missing > 0 {
            pool.missing -= 1;
            self.reopen(now);
        }
    }

    /// Open a pooled connection for the queue's next arrival (intended when it was due, so the
    /// connect is in its latency).
    fn reopen(&mut self, now: u64) {
        if let Some(ticket) = self.pool.as_mut().and_then(Pool::next) {
            self.connect(POOLED, VecDeque::from([ticket]), ticket.intended_ns, now);
        }
    }

    /// A pooled connection has nothing in flight and nothing queued: it waits for the next
    /// arrival, or closes once the schedule is over. False when this is not a pool.
    pub(super) fn park(&mut self, idx: usize, now: u64) -> bool {
        let Some(pool) = self.pool.as_mut() else {
            return false;
        };
        if pool.draining {
            self.end(idx, EndReason::Done, now);
        } else {
            let gen = self.slots.gen(idx);
            self.slots.live_mut(idx).parked = true;
            pool.parked.push_back((idx, gen));
        }
        true
    }

    /// A pooled connection ended (the server closed it, or it failed): open another at once for
    /// the queue's next arrival, or for the next one to come.
    pub fn pool_lost(&mut self, reason: EndReason, now: u64) {
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        if reason == EndReason::Done {
            return;
        }
        if !pool.queue.is_empty() {
            self.reopen(now);
        } else if !pool.draining {
            pool.missing += 1;
        }
    }

    /// The schedule is over: idle connections close, busy ones once the queue is empty.
    pub fn drain_pool(&mut self, now: u64) {
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        if pool.draining {
            return;
        }
        pool.draining = true;
        let parked = std::mem::take(&mut pool.parked);
        for (idx, gen) in parked {
            if self.slots.get_mut(idx, gen).is_some_and(|c| c.parked) {
                self.end(idx, EndReason::Done, now);
            }
        }
    }

    /// Arrivals due and still waiting for a connection.
    pub(super) fn queued(&self) -> usize {
        self.pool.as_ref().map_or(0, |p| p.queue.len())
    }

    /// When the queue's oldest arrival times out (its request timeout counts from when it was
    /// due: a client gives up on a request it could not send, as on one not answered).
    pub(super) fn queue_deadline_ns(&self) -> Option<u64> {
        let (due, _) = self.pool.as_ref()?.queue.front()?;
        Some(due + self.cfg.timeout_ns)
    }

    /// Arrivals that waited in the queue past the request timeout (all of them at the hard
    /// stop, `all`) count as timed out, never sent.
    pub(super) fn expire_queue(&mut self, now: u64, all: bool) {
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        let at = self.timeline.stamp(now);
        while let Some(&(due, kind)) = pool.queue.front() {
            if !all && due + self.cfg.timeout_ns > now {
                break;
            }
            pool.queue.pop_front();
            let waited = now.saturating_sub(due) / 1000;
            self.stats
                .error(kind as usize, ErrorClass::Timeout, at, waited);
            self.stats.queue_timeouts += 1;
        }
    }
}
