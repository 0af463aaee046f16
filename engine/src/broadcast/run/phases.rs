//! The phases of a broadcast thread: settling (connects and upgrades, bounded), publishing
//! (thread 0), the wait for the last deliveries, and what is counted at the end.

use super::super::*;

impl Fanout<'_> {
    /// Past the settle time, or once publishing started, a subscriber not yet open failed:
    /// its connect or its upgrade timed out. The publisher, too. Once: no subscriber connects
    /// later.
    pub(in crate::broadcast) fn expire(&mut self, now: u64) {
        let late = self.started.is_some() || now >= self.settle_by;
        if !late || self.expired {
            return;
        }
        self.expired = true;
        for i in 0..self.subs.len() {
            let Some(link) = self.subs[i].link.as_ref() else {
                continue;
            };
            if self.subs[i].opened {
                continue;
            }
            let class = if link.state == State::Connecting {
                ErrorClass::ConnectTimeout
            } else {
                self.stats.ws.failed(ws::HandshakeFailure::Timeout);
                ErrorClass::HandshakeFailed
            };
            self.sub_failed(i, class, now);
        }
        if now >= self.settle_by {
            let stuck = self
                .publisher
                .as_ref()
                .is_some_and(|p| p.start_ns.is_none() && p.link.state != State::Open);
            if stuck {
                self.publisher_lost(now);
            }
        }
    }

    /// The publisher's connection ended before it published anything: nothing is due.
    fn publisher_lost(&mut self, now: u64) {
        let Some(p) = self.publisher.take() else {
            return;
        };
        let class = match p.link.state {
            State::Connecting => ErrorClass::ConnectTimeout,
            State::Upgrading => {
                self.stats.ws.failed(ws::HandshakeFailure::Timeout);
                ErrorClass::HandshakeFailed
            }
            // A refused upgrade was counted by reason when it was read.
            _ => ErrorClass::HandshakeFailed,
        };
        self.stats.link_error(0, class, self.timeline.stamp(now));
        self.shared.done.store(true, Ordering::Release);
    }

    /// Thread 0: start publishing once the publisher is open and every subscriber settled (or
    /// the settle time passed), then send what is due.
    pub(in crate::broadcast) fn publish(&mut self, now: u64) {
        let (subscribers, _, _) = params(self.plan);
        let Some(p) = self.publisher.as_mut() else {
            return;
        };
        if p.start_ns.is_none() {
            let settled = self.shared.settled.load(Ordering::Acquire) >= subscribers;
            if p.link.state != State::Open || !(settled || now >= self.settle_by) {
                return;
            }
            p.start_ns = Some(now);
            self.bstats.publisher_open = true;
            self.shared.start_ns.store(now, Ordering::Release);
        }
        if p.publish(self.len, &mut self.stats, now).is_err() {
            p.link.state = State::Gone;
        }
        self.shared.published.store(p.published, Ordering::Release);
        self.bstats.published = p.published;
        if p.done() {
            self.shared.done.store(true, Ordering::Release);
        }
    }

    /// The publisher's socket is ready: connected (send the upgrade), or bytes to read (its
    /// upgrade's reply; the hub sends it nothing else), or room to write.
    pub(in crate::broadcast) fn publisher_event(&mut self, now: u64) {
        let Some(p) = self.publisher.as_mut() else {
            return;
        };
        let link = &mut p.link;
        if link.state == State::Connecting {
            match link.connected(self.cfg.ws.as_ref().expect("a websocket load"), now) {
                Ok(false) => return,
                Ok(true) => self.stats.connections_opened += 1,
                Err(e) => {
                    let class = connect_error_class(&e);
                    self.stats.link_error(0, class, self.timeline.stamp(now));
                    self.publisher = None;
                    self.shared.done.store(true, Ordering::Release);
                    return;
                }
            }
        } else {
            link.read(&mut self.scratch, &mut self.stats, now);
        }
        let broke = link.flush(&mut self.stats.syscalls).is_err();
        if broke {
            link.state = State::Gone;
        }
        if link.state == State::Gone && p.start_ns.is_none() {
            self.publisher_lost(now);
        }
    }

    /// This thread sees publishing start: its timeline begins there, and the subscribers open
    /// now are those every message is due at.
    pub(in crate::broadcast) fn see_start(&mut self, now: u64) {
        if self.started.is_some() {
            return;
        }
        let start = self.shared.start_ns.load(Ordering::Acquire);
        if start == 0 {
            return;
        }
        self.started = Some(start);
        self.timeline = Timeline::new(start, start + self.duration_ns);
        self.expire(now);
        for s in &mut self.subs {
            s.counted = s.opened;
        }
        self.bstats.subscribers_open = self.subs.iter().filter(|s| s.counted).count() as u64;
    }

    /// The run is over for this thread: publishing ended and every open subscriber has every
    /// message, or `timeout_s` passed since; or the hard stop.
    pub(in crate::broadcast) fn ended(&mut self, now: u64) -> bool {
        if now >= self.hard_stop {
            return true;
        }
        if !self.shared.done.load(Ordering::Acquire) {
            return false;
        }
        let done_at = *self.done_at.get_or_insert(now);
        let last = self.shared.published.load(Ordering::Acquire);
        let waiting = self
            .subs
            .iter()
            .any(|s| s.counted && s.link.is_some() && s.next < last);
        !waiting || now >= done_at + secs_to_ns(self.plan.timeout_s)
    }

    /// Count what was due and never came, and say goodbye (close 1000) on what is still open.
    pub(in crate::broadcast) fn finish(&mut self) {
        let now = now_ns();
        let at = self.timeline.stamp(now);
        let last = self.shared.published.load(Ordering::Acquire);
        for s in &mut self.subs {
            if s.counted {
                let lost = last.saturating_sub(s.got);
                self.stats.kinds[0].requests_sent += last;
                // Each lost message waited at least the timeout after the last was published.
                let waited = secs_to_ns(self.plan.timeout_s) / 1000;
                self.stats
                    .errors_n(0, ErrorClass::MessageLost, lost, at, waited);
                self.bstats.due += last;
                self.bstats.lost += lost;
            }
            if let Some(link) = s.link.as_mut().filter(|l| l.state == State::Open) {
                link.queue_close();
                let _ = link.flush(&mut self.stats.syscalls);
            }
        }
        if let Some(p) = self
            .publisher
            .as_mut()
            .filter(|p| p.link.state == State::Open)
        {
            p.link.queue_close();
            let _ = p.link.flush(&mut self.stats.syscalls);
        }
        self.bstats.delivered = self.stats.kinds[0].ok;
    }
}
