//! The publisher of a broadcast load: one WebSocket connection that sends message k at
//! start + k / rate (uniform), each carrying its number and that due time; a message counts as
//! published once its last byte was written.

use std::collections::VecDeque;

use super::link::{Link, State};
use crate::clock::NS_PER_S;
use crate::stats::{record_us, ThreadStats};

pub struct Publisher {
    pub link: Link,
    /// Messages to publish, and the time between two.
    total: u64,
    period_ns: f64,
    /// When publishing started (None: not yet), and messages queued so far.
    pub start_ns: Option<u64>,
    queued: u64,
    /// Where each queued message ends in the connection's written bytes.
    ends: VecDeque<u64>,
    pub published: u64,
}

impl Publisher {
    pub fn new(link: Link, rate: f64, duration_s: f64) -> Publisher {
        Publisher {
            link,
            total: ((rate * duration_s).round() as u64).max(1),
            period_ns: NS_PER_S as f64 / rate,
            start_ns: None,
            queued: 0,
            ends: VecDeque::new(),
            published: 0,
        }
    }

    fn due_ns(&self, start: u64, k: u64) -> u64 {
        start + (k as f64 * self.period_ns) as u64
    }

    /// When the next message is due, if one is left.
    pub fn next_due_ns(&self) -> Option<u64> {
        let start = self.start_ns?;
        (self.queued < self.total).then(|| self.due_ns(start, self.queued))
    }

    /// Queue every message due by `now` (the lag behind each one's due time recorded), write,
    /// and count what was written whole. Err: the connection broke.
    pub fn publish(
        &mut self,
        len: usize,
        stats: &mut ThreadStats,
        now: u64,
    ) -> std::io::Result<()> {
        let Some(start) = self.start_ns else {
            return Ok(());
        };
        while self.queued < self.total && self.due_ns(start, self.queued) <= now {
            let due = self.due_ns(start, self.queued);
            self.link.queue_message(self.queued, due, len);
            self.ends
                .push_back(self.link.written + self.link.pending() as u64);
            record_us(&mut stats.lag_us, now.saturating_sub(due) / 1000);
            self.queued += 1;
        }
        let r = self.link.flush(&mut stats.syscalls);
        while self.ends.front().is_some_and(|e| *e <= self.link.written) {
            self.ends.pop_front();
            self.published += 1;
        }
        r
    }

    /// Every message is published, or the connection is gone: nothing more will be.
    pub fn done(&self) -> bool {
        self.link.state == State::Gone || self.published == self.total
    }
}
