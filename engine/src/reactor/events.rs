//! The reactor's event handling: a socket event moves its connection on (connected, writable,
//! readable, closed), sends what the script allows, and ends the connection for the model.

use std::io::{self, Read};

use super::conn::{is_reset, InFlight, Ticket};
use super::driver::Sock;
use super::pool::Pool;
use super::{h2_flow, slots, EndReason, Reactor};
use crate::clock::now_ns;
use crate::http::EofOutcome;
use crate::stats::{record_us, ErrorClass};
use crate::ws;

impl Reactor {
    pub fn handle_event(&mut self, ev: &mio::event::Event, now: u64) {
        let (idx, gen) = slots::split_token(ev.token());
        let Some(c) = self.slots.get_mut(idx, gen) else {
            return;
        };
        if c.connecting {
            match c.handshake_done(ev) {
                Ok(false) => {}
                Ok(true) => self.on_connected(idx, ev, now),
                Err(e) => {
                    let class = self.connect_error(&e);
                    self.fail(idx, class, now);
                }
            }
            return;
        }
        if ev.is_writable() && !c.wbuf.is_empty() && !self.flush(idx, now) {
            return;
        }
        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
            self.on_readable(idx, now, ev.is_read_closed() || ev.is_error());
        }
    }

    fn on_connected(&mut self, idx: usize, ev: &mio::event::Event, now: u64) {
        self.connected(idx, now);
        // The reply may already be waiting (events are edge-triggered).
        if ev.is_readable() && self.slots.get(idx).is_some_and(|c| !c.connecting) {
            self.on_readable(idx, now, ev.is_read_closed() || ev.is_error());
        }
    }

    /// The handshake is done: account it and send.
    pub(super) fn connected(&mut self, idx: usize, now: u64) {
        let c = self.slots.live_mut(idx);
        c.connecting = false;
        let us = now.saturating_sub(c.connect_start_ns) / 1000;
        let kind = c.ticket_kind as usize;
        record_us(&mut self.stats.kinds[kind].connect_us, us);
        self.stats.connections_opened += 1;
        self.tls_or_start(idx, now);
    }

    /// Write the pending bytes; false when the connection failed.
    fn flush(&mut self, idx: usize, now: u64) -> bool {
        match self.slots.live_mut(idx).flush() {
            Ok(()) => true,
            Err(e) => {
                self.write_failed(idx, &e, now);
                false
            }
        }
    }

    /// A write failed: the connection is broken (a reset, unless the server silently closed a
    /// reused connection, whose requests then go again on a new one).
    pub(super) fn write_failed(&mut self, idx: usize, e: &io::Error, now: u64) {
        if !(is_reset(e) && self.resend_after_unannounced_close(idx, ErrorClass::Reset, now)) {
            self.fail(idx, ErrorClass::Reset, now);
        }
    }

    /// Send as many requests as the script, budget and pipelining depth allow.
    pub(super) fn fill(&mut self, idx: usize, now: u64) {
        self.fill_from(idx, now, false);
    }

    /// As `fill`; `after_reply`: replies just completed on the connection (at `now`), so in the
    /// closed loops the time from then to the write is the engine's own turnaround.
    fn fill_from(&mut self, idx: usize, now: u64, after_reply: bool) {
        let c = self.slots.live_ref(idx);
        if c.thinking || c.closing || c.connecting || c.upgrading() || c.tls_handshaking() {
            return;
        }
        let n = self.batch_requests(idx, now);
        let c = self.slots.live_mut(idx);
        if self.out.is_empty() {
            if c.inflight.is_empty() && !self.park(idx, now) {
                self.end(idx, EndReason::Done, now);
            }
            return;
        }
        if after_reply && !self.cfg.open_model {
            // `now` is the loop's clock reading for this event; one more, just before the write.
            let gap = now_ns().saturating_sub(c.last_reply_ns.unwrap_or(now));
            self.stats.turnaround(gap, n);
        }
        self.put_out(idx, now);
    }

    /// Send `self.out` on connection `idx` (sealed first on TLS connections).
    pub(super) fn put_out(&mut self, idx: usize, now: u64) {
        self.seal_out(idx);
        self.put_wire(idx, now);
    }

    /// Send the bytes in `self.out` as they are.
    pub(super) fn put_wire(&mut self, idx: usize, now: u64) {
        let c = self.slots.live_mut(idx);
        if matches!(c.sock, Sock::Ring(_)) {
            return self.ring_send(idx);
        }
        self.stats.syscalls += 1;
        if let Err(e) = c.send(&self.out) {
            self.write_failed(idx, &e, now);
        }
    }

    /// Put the requests the connection may send now into `self.out`, each with its timeout;
    /// returns how many.
    fn batch_requests(&mut self, idx: usize, now: u64) -> u64 {
        let gen = self.slots.gen(idx);
        let c = self.slots.live_mut(idx);
        self.out.clear();
        let mut n = 0;
        let depth = match (&self.cfg.h2, c.h2.as_ref()) {
            (Some(hc), Some(h)) => hc.streams.min(h.peer_max_streams),
            _ => c.script.depth,
        };
        while c.inflight.len() < depth as usize {
            let t = match c.tickets.pop_front() {
                Some(t) => t,
                None if self.pool.is_some() => match self.pool.as_mut().and_then(Pool::next) {
                    Some(t) => t,
                    None => break,
                },
                None => match self.issuer.reserve(&mut c.script, now) {
                    Some(kind) => Ticket::fresh(kind),
                    None => break,
                },
            };
            let mut stream = 0;
            match (&self.cfg.ws, c.ws.as_mut(), &self.cfg.h2, c.h2.as_mut()) {
                (Some(w), Some(cw), _, _) => {
                    ws::put_message(&mut self.out, c.sent_seq, w.message_bytes, cw.mask())
                }
                (_, _, Some(hc), Some(h)) => {
                    stream = h2_flow::stream_id(c.sent_seq);
                    h.put_request(&mut self.out, stream, t.kind, hc, &mut self.stats);
                }
                _ => self
                    .out
                    .extend_from_slice(&self.cfg.kinds[t.kind as usize].bytes),
            }
            let timeout_at = now + self.cfg.timeout_ns;
            let deadline_ns =
                self.timers
                    .time_out(timeout_at, t.deadline_ns, (idx, gen, c.sent_seq));
            c.inflight.push_back(InFlight {
                kind: t.kind,
                intended_ns: t.intended_ns.or(c.intended_ns).unwrap_or(now),
                sent_ns: now,
                deadline_ns,
                resent: t.resent,
                stream,
            });
            c.sent_seq += 1;
            n += 1;
            if !t.resent {
                // A re-send is the same request again: counted once, when first sent.
                self.stats.kinds[t.kind as usize].requests_sent += 1;
            }
            if self.cfg.close_each || stream >= h2_flow::LAST_STREAM {
                // We asked the server to close after this one: nothing may follow it.
                c.closing = true;
                break;
            }
        }
        c.intended_ns = None;
        n
    }

    /// Read and parse what arrived. `hup`: the peer's FIN (or an error) is already known, so read
    /// until the end; otherwise a short read means the queue is empty and, the registration being
    /// edge-triggered, the next arrival will report again: one read syscall per reply, not two.
    fn on_readable(&mut self, idx: usize, now: u64, hup: bool) {
        let mut completed = 0;
        let mut scratch = std::mem::take(&mut self.scratch);
        loop {
            self.stats.syscalls += 1;
            let n = match self.slots.live_mut(idx).mio().read(&mut scratch) {
                Ok(0) => {
                    self.scratch = scratch;
                    return self.on_eof(idx, now);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.scratch = scratch;
                    return self.read_failed(idx, &e, now);
                }
            };
            if !self.take_bytes(idx, &scratch[..n], now, &mut completed) {
                self.scratch = scratch;
                return;
            }
            let c = self.slots.live_ref(idx);
            if (c.closing && c.inflight.is_empty()) || (n < scratch.len() && !hup) {
                break;
            }
        }
        self.scratch = scratch;
        if completed > 0 {
            self.after_replies(idx, now);
        }
    }

    /// Parse `data`, received on connection `idx` (opened, on TLS), adding the replies it
    /// completed to `completed`; false when that ended the connection.
    pub(super) fn take_plain(
        &mut self,
        idx: usize,
        data: &[u8],
        now: u64,
        completed: &mut u32,
    ) -> bool {
        self.stats.bytes_received += data.len() as u64;
        let at = self.timeline.stamp(now);
        let c = self.slots.live_mut(idx);
        match c.consume(data, &self.cfg, &mut self.stats, now, at) {
            Ok(done) => {
                *completed += done;
                if c.ws.is_some() {
                    self.ws_after_parse(idx, now)
                } else if c.h2.is_some() {
                    self.h2_after_parse(idx, now)
                } else {
                    true
                }
            }
            Err(None) => {
                // Bytes with no request outstanding: not attributable to any request.
                self.stats.unsolicited_bytes += 1;
                self.end(idx, EndReason::Error(ErrorClass::ProtocolError), now);
                false
            }
            Err(Some(class)) => {
                self.fail(idx, class, now);
                false
            }
        }
    }

    /// Decide what a connection does after one or more replies completed.
    pub(super) fn after_replies(&mut self, idx: usize, now: u64) {
        let gen = self.slots.gen(idx);
        let c = self.slots.live_mut(idx);
        if c.closing {
            if c.inflight.is_empty() {
                return self.server_closed_or_done(idx, now);
            }
            if c.h2.is_some() {
                // After GOAWAY: the streams it kept are still answered.
                return;
            }
            // Requests pipelined behind a closing reply will never be answered.
            return self.fail(idx, ErrorClass::ClosedBeforeResponse, now);
        }
        if c.inflight.is_empty() && c.script.think_ns > 0 && c.script.can_send(now) {
            let due = c.start_thinking(now);
            self.timers.think.push(due, (idx, gen));
            return;
        }
        self.fill_from(idx, now, true);
    }

    pub(super) fn on_eof(&mut self, idx: usize, now: u64) {
        if self.ws_handshake_cut(idx, now) || self.tls_handshake_cut(idx, now) {
            return;
        }
        let c = self.slots.live_mut(idx);
        if c.inflight.is_empty() {
            // Closed while idle: a keep-alive connection the server dropped.
            return self.server_closed(idx, now);
        }
        if self.resend_after_unannounced_close(idx, ErrorClass::ClosedBeforeResponse, now) {
            return;
        }
        let c = self.slots.live_mut(idx);
        match c.eof_outcome() {
            EofOutcome::Complete => {
                let at = self.timeline.stamp(now);
                c.finish_at_eof(&self.cfg, &mut self.stats, now, at);
                if c.inflight.is_empty() {
                    self.server_closed_or_done(idx, now)
                } else {
                    self.fail(idx, ErrorClass::ClosedBeforeResponse, now)
                }
            }
            EofOutcome::Idle => self.fail(idx, ErrorClass::ClosedBeforeResponse, now),
            EofOutcome::Truncated => self.fail(idx, ErrorClass::ProtocolError, now),
        }
    }

    /// The server closed with nothing outstanding.
    pub(super) fn server_closed(&mut self, idx: usize, now: u64) {
        if !self.slots.live_ref(idx).closing {
            self.stats.idle_close += 1;
        }
        self.server_closed_or_done(idx, now);
    }

    /// The connection closed with nothing outstanding: the model may reconnect if the script has
    /// more to send.
    pub(super) fn server_closed_or_done(&mut self, idx: usize, now: u64) {
        if !self.slots.live_ref(idx).tickets.is_empty() {
            // Requests a GOAWAY refused: they go on a new connection.
            return self.h2_move_on(idx, now);
        }
        let more = self.slots.live_ref(idx).script.can_send(now);
        let reason = if more {
            EndReason::ServerClosed
        } else {
            EndReason::Done
        };
        self.end(idx, reason, now);
    }
}
