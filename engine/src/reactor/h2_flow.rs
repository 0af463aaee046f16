//! The reactor's side of HTTP/2 connections: the preface and settings once connected, the
//! frames a parse leaves to send, a GOAWAY's refused streams sent again on a new connection.

use std::collections::VecDeque;

use super::conn::Ticket;
use super::h2_conn::H2Conn;
use super::Reactor;
use crate::h2;
use crate::stats::ErrorClass;

/// The stream id of a connection's request number `seq` (client streams are odd, in order).
pub fn stream_id(seq: u64) -> u32 {
    (seq * 2 + 1).min(u64::from(LAST_STREAM)) as u32
}

/// The last stream id a client may open; the connection carries no request after it.
pub const LAST_STREAM: u32 = (1 << 31) - 1;

impl Reactor {
    /// Connected: the preface and settings, then the first streams at once (prior knowledge).
    pub(super) fn h2_open(&mut self, idx: usize, now: u64) {
        let hc = self.cfg.h2.as_ref().expect("an HTTP/2 load");
        let (window, fields) = (hc.window, hc.table.len());
        let gen = self.slots.gen(idx);
        self.slots.live_mut(idx).h2 = Some(Box::new(H2Conn::new(window, fields)));
        self.stats.h2.connections += 1;
        self.out.clear();
        self.out.extend_from_slice(&h2::opening(window));
        self.put_out(idx, now);
        if self.slots.get_mut(idx, gen).is_some() {
            self.fill(idx, now);
        }
    }

    /// After bytes were parsed on an HTTP/2 connection: send the frames they asked for (acks,
    /// window updates, body data), act on a GOAWAY. False when the connection ended.
    pub(super) fn h2_after_parse(&mut self, idx: usize, now: u64) -> bool {
        let gen = self.slots.gen(idx);
        let h = self
            .slots
            .live_mut(idx)
            .h2
            .as_mut()
            .expect("an HTTP/2 connection");
        let (ctrl, goaway) = (std::mem::take(&mut h.ctrl), h.goaway.take());
        if !self.send_ctrl(idx, &ctrl, now) {
            return false;
        }
        if let Some(last) = goaway {
            self.h2_refused(idx, last, now);
        }
        self.slots.get_mut(idx, gen).is_some()
    }

    /// A GOAWAY said the server processed no stream above `last` (RFC 9113 §6.8): those
    /// requests go again, once, on a new connection, keeping their intended send times; the
    /// streams at or below it are still answered here.
    fn h2_refused(&mut self, idx: usize, last: u32, now: u64) {
        let at = self.timeline.stamp(now);
        let c = self.slots.live_mut(idx);
        let mut kept = VecDeque::with_capacity(c.inflight.len());
        for f in c.inflight.drain(..) {
            if f.stream <= last {
                kept.push_back(f);
                continue;
            }
            c.done_seq += 1;
            if f.resent {
                // Refused a second time: not sent a third.
                let waited = now.saturating_sub(f.intended_ns) / 1000;
                self.stats.error(
                    f.kind as usize,
                    ErrorClass::ClosedBeforeResponse,
                    at,
                    waited,
                );
                continue;
            }
            self.stats.h2.refused_by_goaway += 1;
            self.stats.resent(f.kind as usize, at);
            c.tickets.push_back(Ticket {
                kind: f.kind,
                intended_ns: Some(f.intended_ns),
                resent: true,
                deadline_ns: Some(f.deadline_ns),
            });
        }
        c.inflight = kept;
        if c.inflight.is_empty() {
            self.server_closed_or_done(idx, now);
        }
    }

    /// The connection is done with requests a GOAWAY refused still to send: close it and send
    /// them on a new one, with the same script.
    pub(super) fn h2_move_on(&mut self, idx: usize, now: u64) {
        let gen = self.slots.gen(idx);
        let mut c = self.slots.remove(idx);
        let again = std::mem::take(&mut c.tickets);
        self.release(c.sock, idx, gen, true);
        self.connect(c.script, again, None, now);
    }
}
