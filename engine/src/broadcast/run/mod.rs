//! The event loop of one broadcast thread: connects and upgrades until publishing starts,
//! deliveries checked as they arrive, the wait for the last ones, and the final accounting.

use super::*;

impl Fanout<'_> {
    pub(in crate::broadcast) fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let t0 = now_ns();
        let mut cpu = CpuSampler::new(t0, self.timeline.second_of(t0));
        loop {
            let now = now_ns();
            self.expire(now);
            self.publish(now);
            self.see_start(now);
            let sec = self.timeline.second_of(now);
            cpu.sample(now, sec, &mut self.stats, false);
            let open = self.open_links();
            self.stats.peak_open = self.stats.peak_open.max(open);
            let s = self.stats.second(sec);
            s.open_connections = s.open_connections.max(open);
            if self.ended(now) {
                break;
            }
            self.stats.syscalls += 1;
            match self.poll.poll(&mut events, Some(self.wait_for(now))) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let now = now_ns();
            for ev in events.iter() {
                self.event(ev.token(), now);
            }
        }
        let now = now_ns();
        cpu.sample(now, self.timeline.second_of(now), &mut self.stats, true);
        Ok(())
    }

    fn open_links(&self) -> u64 {
        let subs = self.subs.iter().filter(|s| s.link.is_some()).count();
        (subs + usize::from(self.publisher.is_some())) as u64
    }

    /// How long the poll may wait: until the next message is due, or a short nap.
    fn wait_for(&self, now: u64) -> Duration {
        let due = self.publisher.as_ref().and_then(|p| p.next_due_ns());
        let until = [due, Some(self.hard_stop)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(u64::MAX);
        NAP.min(Duration::from_nanos(until.saturating_sub(now)))
    }

    fn event(&mut self, token: Token, now: u64) {
        if token == PUBLISHER {
            return self.publisher_event(now);
        }
        let i = token.0;
        let Some(link) = self.subs[i].link.as_mut() else {
            return;
        };
        if link.state == State::Connecting {
            match link.connected(self.cfg.ws.as_ref().expect("a websocket load"), now) {
                Ok(false) => return,
                Ok(true) => self.stats.connections_opened += 1,
                Err(e) => return self.sub_failed(i, connect_error_class(&e), now),
            }
        } else {
            let messages = link.read(&mut self.scratch, &mut self.stats, now);
            for m in messages {
                self.deliver(i, &m, now);
            }
        }
        self.after_io(i, now);
    }

    /// After a subscriber's I/O: its opening told, what it must send written, its end counted.
    fn after_io(&mut self, i: usize, now: u64) {
        let sub = &mut self.subs[i];
        let Some(link) = sub.link.as_mut() else {
            return;
        };
        if link.state == State::Open && !sub.opened {
            sub.opened = true;
            sub.settled = true;
            self.shared.settled.fetch_add(1, Ordering::AcqRel);
        }
        let broke = link.flush(&mut self.stats.syscalls).is_err();
        if link.state != State::Gone && !broke {
            return;
        }
        if sub.opened {
            self.bstats.subscribers_cut += u64::from(self.done_at.is_none());
            sub.link = None;
        } else {
            self.sub_failed(i, ErrorClass::HandshakeFailed, now);
        }
    }

    /// A subscriber that never opened: its error counted, its connection dropped.
    fn sub_failed(&mut self, i: usize, class: ErrorClass, now: u64) {
        let sub = &mut self.subs[i];
        sub.link = None;
        if !sub.settled {
            sub.settled = true;
            self.shared.settled.fetch_add(1, Ordering::AcqRel);
        }
        self.stats.link_error(0, class, self.timeline.stamp(now));
    }

    /// A whole message at subscriber `i`: the one due or a later one (those between are lost
    /// unless they come late: then they are duplicates), an earlier one (a duplicate), or none
    /// of the publisher's (altered: bad_body, in the place of the one due).
    fn deliver(&mut self, i: usize, payload: &[u8], now: u64) {
        let at = self.timeline.stamp(now);
        let period = self.period_ns();
        let sub = &mut self.subs[i];
        let (seq, due, outcome) = match ws::broadcast_of(payload, self.len) {
            Some((seq, _)) if seq < sub.next => {
                self.bstats.duplicates += 1;
                self.stats.ws.duplicates += 1;
                return;
            }
            Some((seq, due)) => (seq, due, Ok(())),
            None => {
                self.bstats.corrupt += 1;
                let due = self.started.map_or(now, |s| s + sub.next * period);
                (sub.next, due, Err(ErrorClass::BadBody))
            }
        };
        sub.next = seq + 1;
        sub.got += 1;
        let latency_us = now.saturating_sub(due) / 1000;
        self.stats.response(0, 101, outcome, latency_us, None, at);
    }

    fn period_ns(&self) -> u64 {
        let (_, rate, _) = params(self.plan);
        (1e9 / rate) as u64
    }
}

mod phases;
