//! The per-thread event loop core: connections, request/response flow, timeouts and outcome accounting.
//!
//! Models (closed, rate, sessions, count) only decide when connections open and what each may
//! send (a [`Script`]); everything on the wire happens here.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;

use mio::net::TcpStream;
use mio::{Interest, Poll, Token};

use crate::clock::NS_PER_S;
use crate::http::{EofOutcome, Event, ResponseParser};
use crate::net::{connect_error_class, start_connect, ConnectStart, SourceSpread};
use crate::rng::{KindPicker, Rng};
use crate::stats::{record_us, ErrorClass, ThreadStats};
use crate::validate::{BodyCheck, Expect};

/// Read buffer shared by all connections of a thread; only partial heads are kept per connection.
const SCRATCH_BYTES: usize = 64 * 1024;

/// One request kind, ready to put on the wire.
pub struct KindConfig {
    pub bytes: Vec<u8>,
    pub head_request: bool,
    pub expect_status: u16,
    pub expect: Expect,
}

/// Settings shared by every connection of a run.
pub struct Config {
    pub addr: SocketAddr,
    pub kinds: Vec<KindConfig>,
    pub weights: Vec<f64>,
    pub timeout_ns: u64,
    pub connect_timeout_ns: u64,
    /// Requests ask the server to close after replying (keep_alive false).
    pub close_each: bool,
    /// Open model: record service time beside corrected latency.
    pub open_model: bool,
    pub spread_source: bool,
    pub linger_zero: bool,
}

/// What one connection may do; carried over when a model reconnects for the same user/slot.
#[derive(Debug, Clone, Copy)]
pub struct Script {
    /// Requests still to send (u64::MAX: unlimited).
    pub remaining: u64,
    /// Most requests in flight at once (pipelining depth).
    pub depth: u32,
    /// Pause between a reply and the next send (sessions).
    pub think_ns: u64,
    /// No new request is sent at or after this time.
    pub stop_sending_ns: u64,
    /// The model's own id (slot, user).
    pub tag: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EndReason {
    /// The script ran out or the model's stop time passed.
    Done,
    /// The server closed (idle close, or a reply announced close) with requests left to send.
    ServerClosed,
    Error(ErrorClass),
}

/// A connection that is gone, handed back to the model.
#[derive(Debug, Clone, Copy)]
pub struct ConnEnd {
    pub script: Script,
    pub reason: EndReason,
    /// When the user would have sent next (think timer), for reconnecting at that time.
    pub resume_at_ns: u64,
}

struct InFlight {
    kind: u16,
    intended_ns: u64,
    sent_ns: u64,
}

struct Conn {
    sock: TcpStream,
    connecting: bool,
    script: Script,
    /// Kind of the request the connection was opened for (reserved before connecting).
    ticket: Option<u16>,
    ticket_kind: u16,
    connect_start_ns: u64,
    /// Intended send time of the next send batch (open models); None means "now".
    intended_ns: Option<u64>,
    inflight: VecDeque<InFlight>,
    sent_seq: u64,
    done_seq: u64,
    parser: ResponseParser,
    check: Option<BodyCheck>,
    status: u16,
    /// No further request may go on this connection (a reply or our request said close).
    closing: bool,
    thinking: bool,
    think_due_ns: u64,
    /// Unparsed bytes (a partial head or chunk line).
    stash: Vec<u8>,
    /// Request bytes the socket did not take yet.
    wbuf: Vec<u8>,
}

pub struct Reactor {
    pub poll: Poll,
    cfg: std::sync::Arc<Config>,
    picker: KindPicker,
    conns: Vec<Option<Conn>>,
    gens: Vec<u32>,
    free: Vec<usize>,
    pub stats: ThreadStats,
    pub rng: Rng,
    /// Requests left in a global budget (count model).
    pub budget: Option<u64>,
    spread: SourceSpread,
    // Timer queues: each has a constant delay, so pushing in time order keeps them sorted.
    connect_timeouts: VecDeque<(u64, usize, u32)>,
    request_timeouts: VecDeque<(u64, usize, u32, u64)>,
    think_timers: VecDeque<(u64, usize, u32)>,
    deferred_opens: VecDeque<(u64, Script)>,
    pub ended: Vec<ConnEnd>,
    pub open_conns: u64,
    start_ns: u64,
    scratch: Vec<u8>,
    out: Vec<u8>,
}

pub const TIMER_TOKEN: Token = Token(usize::MAX);

fn token(idx: usize, gen: u32) -> Token {
    Token(idx | (gen as usize) << 32)
}

fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED)
    )
}

impl Reactor {
    pub fn new(
        cfg: std::sync::Arc<Config>,
        seed: u64,
        start_ns: u64,
        spread_offset: u32,
    ) -> io::Result<Reactor> {
        let picker = KindPicker::new(&cfg.weights);
        let spread = SourceSpread::new(cfg.addr, cfg.spread_source, spread_offset);
        let kinds = cfg.kinds.len();
        Ok(Reactor {
            poll: Poll::new()?,
            cfg,
            picker,
            conns: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            stats: ThreadStats::new(kinds),
            rng: Rng::new(seed),
            budget: None,
            spread,
            connect_timeouts: VecDeque::new(),
            request_timeouts: VecDeque::new(),
            think_timers: VecDeque::new(),
            deferred_opens: VecDeque::new(),
            ended: Vec::new(),
            open_conns: 0,
            start_ns,
            scratch: vec![0; SCRATCH_BYTES],
            out: Vec::with_capacity(4096),
        })
    }

    pub fn second_of(&self, now: u64) -> usize {
        (now.saturating_sub(self.start_ns) / NS_PER_S) as usize
    }

    /// Nothing is open or pending: the thread may finish once its model is done.
    pub fn idle(&self) -> bool {
        self.open_conns == 0 && self.deferred_opens.is_empty() && self.ended.is_empty()
    }

    /// Open a connection for `script`, reserving its first request now. `intended_ns` is when the
    /// model wanted it (open models), for schedule lag and corrected latency. False when the
    /// script or the budget has nothing left.
    pub fn open(&mut self, mut script: Script, intended_ns: Option<u64>, now: u64) -> bool {
        if script.remaining == 0 || now >= script.stop_sending_ns {
            return false;
        }
        if let Some(b) = &mut self.budget {
            if *b == 0 {
                return false;
            }
            *b -= 1;
        }
        if script.remaining != u64::MAX {
            script.remaining -= 1;
        }
        let kind = self.picker.pick(&mut self.rng);
        if let Some(t) = intended_ns {
            record_us(&mut self.stats.lag_us, now.saturating_sub(t) / 1000);
        }
        let sock = match start_connect(self.cfg.addr, &mut self.spread, self.cfg.linger_zero) {
            ConnectStart::Pending(s) => s,
            ConnectStart::Failed(e) => {
                self.connect_failed(kind, script, &e, now);
                return true;
            }
        };
        let idx = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.gens.push(0);
            self.conns.len() - 1
        });
        let gen = self.gens[idx];
        let mut sock = sock;
        if let Err(e) = self.poll.registry().register(
            &mut sock,
            token(idx, gen),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.free.push(idx);
            self.connect_failed(kind, script, &e, now);
            return true;
        }
        self.conns[idx] = Some(Conn {
            sock,
            connecting: true,
            script,
            ticket: Some(kind),
            ticket_kind: kind,
            connect_start_ns: now,
            intended_ns,
            inflight: VecDeque::new(),
            sent_seq: 0,
            done_seq: 0,
            parser: ResponseParser::default(),
            check: None,
            status: 0,
            closing: false,
            thinking: false,
            think_due_ns: 0,
            stash: Vec::new(),
            wbuf: Vec::new(),
        });
        self.connect_timeouts
            .push_back((now + self.cfg.connect_timeout_ns, idx, gen));
        self.open_conns += 1;
        self.stats.peak_open = self.stats.peak_open.max(self.open_conns);
        true
    }

    /// Open `script` at `due_ns` (a user coming back after think time on a closed connection).
    pub fn open_at(&mut self, due_ns: u64, script: Script) {
        self.deferred_opens.push_back((due_ns, script));
    }

    fn connect_failed(&mut self, kind: u16, script: Script, e: &io::Error, now: u64) {
        match e.raw_os_error() {
            Some(libc::EMFILE) | Some(libc::ENFILE) => self.stats.exhaustion.fd_limit += 1,
            Some(libc::EADDRNOTAVAIL) => self.stats.exhaustion.ephemeral_ports += 1,
            _ => {}
        }
        let class = connect_error_class(e);
        let sec = self.second_of(now);
        self.stats.error(kind as usize, class, sec);
        self.ended.push(ConnEnd {
            script,
            reason: EndReason::Error(class),
            resume_at_ns: now,
        });
    }

    fn conn_mut(&mut self, idx: usize, gen: u32) -> Option<&mut Conn> {
        if self.gens.get(idx) != Some(&gen) {
            return None;
        }
        self.conns[idx].as_mut()
    }

    pub fn handle_event(&mut self, ev: &mio::event::Event, now: u64) {
        let t = ev.token().0;
        let (idx, gen) = (t & 0xffff_ffff, (t >> 32) as u32);
        let Some(c) = self.conn_mut(idx, gen) else {
            return;
        };
        if c.connecting {
            // Writable without EPOLLERR: the handshake is done (saves getsockopt and getpeername).
            let res = if ev.is_writable() && !ev.is_error() {
                Ok(true)
            } else {
                match c.sock.take_error() {
                    Ok(None) => match c.sock.peer_addr() {
                        Ok(_) => Ok(true),
                        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
                        Err(e) => Err(e),
                    },
                    Ok(Some(e)) | Err(e) => Err(e),
                }
            };
            match res {
                Ok(false) => {}
                Ok(true) => {
                    c.connecting = false;
                    let us = now.saturating_sub(c.connect_start_ns) / 1000;
                    let kind = c.ticket_kind as usize;
                    record_us(&mut self.stats.kinds[kind].connect_us, us);
                    self.stats.connections_opened += 1;
                    self.fill(idx, now);
                    // The reply may already be waiting (events are edge-triggered).
                    if ev.is_readable() {
                        self.on_readable(idx, now, ev.is_read_closed() || ev.is_error());
                    }
                }
                Err(e) => self.fail(idx, connect_error_class(&e), now),
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

    /// Write the pending bytes; false when the connection failed.
    fn flush(&mut self, idx: usize, now: u64) -> bool {
        let c = self.conns[idx].as_mut().expect("live");
        while !c.wbuf.is_empty() {
            match c.sock.write(&c.wbuf) {
                Ok(n) => {
                    c.wbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(idx, ErrorClass::Reset, now);
                    return false;
                }
            }
        }
        c.wbuf = Vec::new();
        true
    }

    /// Send as many requests as the script, budget and pipelining depth allow.
    fn fill(&mut self, idx: usize, now: u64) {
        let gen = self.gens[idx];
        let c = self.conns[idx].as_mut().expect("live");
        if c.thinking || c.closing || c.connecting {
            return;
        }
        self.out.clear();
        while c.inflight.len() < c.script.depth as usize {
            let kind = match c.ticket.take() {
                Some(k) => k,
                None => {
                    if c.script.remaining == 0 || now >= c.script.stop_sending_ns {
                        break;
                    }
                    if let Some(b) = &mut self.budget {
                        if *b == 0 {
                            break;
                        }
                        *b -= 1;
                    }
                    if c.script.remaining != u64::MAX {
                        c.script.remaining -= 1;
                    }
                    self.picker.pick(&mut self.rng)
                }
            };
            self.out
                .extend_from_slice(&self.cfg.kinds[kind as usize].bytes);
            c.inflight.push_back(InFlight {
                kind,
                intended_ns: c.intended_ns.unwrap_or(now),
                sent_ns: now,
            });
            self.request_timeouts
                .push_back((now + self.cfg.timeout_ns, idx, gen, c.sent_seq));
            c.sent_seq += 1;
            self.stats.kinds[kind as usize].requests_sent += 1;
            if self.cfg.close_each {
                // We asked the server to close after this one: nothing may follow it.
                c.closing = true;
                break;
            }
        }
        c.intended_ns = None;
        if self.out.is_empty() {
            if c.inflight.is_empty() {
                self.end(idx, EndReason::Done, now);
            }
            return;
        }
        if !c.wbuf.is_empty() {
            c.wbuf.extend_from_slice(&self.out);
            return;
        }
        let mut written = 0;
        let failed = loop {
            match c.sock.write(&self.out[written..]) {
                Ok(n) => {
                    written += n;
                    if written == self.out.len() {
                        break false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
        };
        if failed {
            self.fail(idx, ErrorClass::Reset, now);
        } else if written < self.out.len() {
            c.wbuf.extend_from_slice(&self.out[written..]);
        }
    }

    /// Read and parse what arrived. `hup`: the peer's FIN (or an error) is already known, so read
    /// until the end; otherwise a short read means the queue is empty and, the registration being
    /// edge-triggered, the next arrival will report again: one read syscall per reply, not two.
    fn on_readable(&mut self, idx: usize, now: u64, hup: bool) {
        let mut completed = 0;
        loop {
            let c = self.conns[idx].as_mut().expect("live");
            let n = match c.sock.read(&mut self.scratch) {
                Ok(0) => return self.on_eof(idx, now),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // A reset with nothing outstanding is the server dropping an idle connection.
                    if c.inflight.is_empty() && is_reset(&e) {
                        return self.server_closed(idx, now);
                    }
                    return self.fail(idx, ErrorClass::Reset, now);
                }
            };
            self.stats.bytes_received += n as u64;
            match self.consume(idx, n, now) {
                Ok(done) => completed += done,
                Err(class) => {
                    if class.is_none() {
                        // Bytes with no request outstanding: not attributable to any request.
                        self.stats.unsolicited_bytes += 1;
                        return self.end(idx, EndReason::Error(ErrorClass::ProtocolError), now);
                    }
                    return self.fail(idx, ErrorClass::ProtocolError, now);
                }
            }
            let c = self.conns[idx].as_mut().expect("live");
            if (c.closing && c.inflight.is_empty()) || (n < self.scratch.len() && !hup) {
                break;
            }
        }
        if completed > 0 {
            self.after_replies(idx, now);
        }
    }

    /// Parse `n` fresh bytes from the scratch buffer. Err(None): unsolicited bytes;
    /// Err(Some(_)): not HTTP.
    fn consume(&mut self, idx: usize, n: usize, now: u64) -> Result<u32, Option<ErrorClass>> {
        let c = self.conns[idx].as_mut().expect("live");
        let mut stash = std::mem::take(&mut c.stash);
        let data: &[u8] = if stash.is_empty() {
            &self.scratch[..n]
        } else {
            stash.extend_from_slice(&self.scratch[..n]);
            &stash
        };
        let sec = (now.saturating_sub(self.start_ns) / NS_PER_S) as usize;
        let mut off = 0;
        let mut completed = 0;
        loop {
            let Some(front) = c.inflight.front() else {
                if off < data.len() && !c.closing {
                    return Err(None);
                }
                break;
            };
            let kc = &self.cfg.kinds[front.kind as usize];
            let (used, ev) = c
                .parser
                .advance(&data[off..], kc.head_request)
                .map_err(|_| Some(ErrorClass::ProtocolError))?;
            off += used;
            match ev {
                Event::NeedMore => break,
                Event::Head(h) => {
                    c.status = h.status;
                    if !h.keep_alive {
                        c.closing = true;
                        self.stats.connection_close_replies += 1;
                    }
                    c.check = Some(BodyCheck::new(&kc.expect));
                }
                Event::Body(b) => {
                    if let Some(ch) = c.check.as_mut() {
                        ch.update(&kc.expect, b);
                    }
                }
                Event::Complete => {
                    finish_reply(c, &self.cfg, &mut self.stats, now, sec);
                    completed += 1;
                    if c.closing {
                        // Nothing after a closing reply belongs to us.
                        break;
                    }
                }
            }
        }
        if off < data.len() && !(c.closing && c.inflight.is_empty()) {
            if stash.is_empty() {
                c.stash.extend_from_slice(&data[off..]);
            } else {
                stash.drain(..off);
                c.stash = stash;
            }
        }
        Ok(completed)
    }

    /// Decide what a connection does after one or more replies completed.
    fn after_replies(&mut self, idx: usize, now: u64) {
        let gen = self.gens[idx];
        let c = self.conns[idx].as_mut().expect("live");
        if c.closing {
            if c.inflight.is_empty() {
                return self.server_closed_or_done(idx, now, false);
            }
            // Requests pipelined behind a closing reply will never be answered.
            return self.fail(idx, ErrorClass::ClosedBeforeResponse, now);
        }
        let can_send = c.script.remaining > 0 && now < c.script.stop_sending_ns;
        if c.inflight.is_empty() && c.script.think_ns > 0 && can_send {
            let due = now + c.script.think_ns;
            c.thinking = true;
            c.think_due_ns = due;
            c.intended_ns = Some(due);
            self.think_timers.push_back((due, idx, gen));
            return;
        }
        self.fill(idx, now);
    }

    fn on_eof(&mut self, idx: usize, now: u64) {
        let c = self.conns[idx].as_mut().expect("live");
        if c.inflight.is_empty() {
            // Closed while idle: a keep-alive connection the server dropped.
            return self.server_closed(idx, now);
        }
        match c.parser.on_eof() {
            EofOutcome::Complete => {
                let sec = self.second_of(now);
                let c = self.conns[idx].as_mut().expect("live");
                // The advance that reports completion consumes nothing.
                let _ = c.parser.advance(&[], false);
                finish_reply(c, &self.cfg, &mut self.stats, now, sec);
                if c.inflight.is_empty() {
                    self.server_closed_or_done(idx, now, false)
                } else {
                    self.fail(idx, ErrorClass::ClosedBeforeResponse, now)
                }
            }
            EofOutcome::Idle => self.fail(idx, ErrorClass::ClosedBeforeResponse, now),
            EofOutcome::Truncated => self.fail(idx, ErrorClass::ProtocolError, now),
        }
    }

    /// The server closed with nothing outstanding.
    fn server_closed(&mut self, idx: usize, now: u64) {
        let c = self.conns[idx].as_ref().expect("live");
        let expected = c.closing;
        if !expected {
            self.stats.idle_close += 1;
        }
        self.server_closed_or_done(idx, now, true);
    }

    fn server_closed_or_done(&mut self, idx: usize, now: u64, _by_server: bool) {
        let c = self.conns[idx].as_ref().expect("live");
        let more = c.script.remaining > 0 && now < c.script.stop_sending_ns;
        self.end(
            idx,
            if more {
                EndReason::ServerClosed
            } else {
                EndReason::Done
            },
            now,
        );
    }

    /// The connection broke: the first outstanding request gets `class`, requests pipelined
    /// behind it `closed_before_response` (all of them `reset` on a reset).
    fn fail(&mut self, idx: usize, class: ErrorClass, now: u64) {
        let sec = self.second_of(now);
        let c = self.conns[idx].as_mut().expect("live");
        if c.connecting {
            let kind = c.ticket_kind as usize;
            self.stats.error(kind, class, sec);
        } else {
            for (i, f) in c.inflight.drain(..).enumerate() {
                let cls = if i == 0 || class == ErrorClass::Reset {
                    class
                } else {
                    ErrorClass::ClosedBeforeResponse
                };
                self.stats.error(f.kind as usize, cls, sec);
            }
        }
        self.end(idx, EndReason::Error(class), now);
    }

    fn end(&mut self, idx: usize, reason: EndReason, now: u64) {
        let c = self.conns[idx].take().expect("live");
        self.gens[idx] = self.gens[idx].wrapping_add(1);
        self.free.push(idx);
        self.open_conns -= 1;
        let resume_at_ns = if c.thinking {
            c.think_due_ns
        } else {
            now + c.script.think_ns
        };
        self.ended.push(ConnEnd {
            script: c.script,
            reason,
            resume_at_ns,
        });
        // Dropping the socket closes it, which also removes it from epoll.
        drop(c);
    }

    /// Fire due timers: connect and request timeouts, think times, deferred opens.
    pub fn expire(&mut self, now: u64) {
        while let Some(&(due, idx, gen)) = self.connect_timeouts.front() {
            if due > now {
                break;
            }
            self.connect_timeouts.pop_front();
            if self.conn_mut(idx, gen).is_some_and(|c| c.connecting) {
                self.fail(idx, ErrorClass::ConnectTimeout, now);
            }
        }
        while let Some(&(due, idx, gen, seq)) = self.request_timeouts.front() {
            if due > now {
                break;
            }
            self.request_timeouts.pop_front();
            if self
                .conn_mut(idx, gen)
                .is_some_and(|c| c.done_seq <= seq && seq < c.sent_seq)
            {
                self.fail(idx, ErrorClass::Timeout, now);
            }
        }
        self.expire_schedule(now);
    }

    /// Fire only the scheduled sends: think timers and deferred opens.
    pub fn expire_schedule(&mut self, now: u64) {
        while let Some(&(due, idx, gen)) = self.think_timers.front() {
            if due > now {
                break;
            }
            self.think_timers.pop_front();
            if let Some(c) = self.conn_mut(idx, gen) {
                if c.thinking {
                    c.thinking = false;
                    record_us(&mut self.stats.lag_us, now.saturating_sub(due) / 1000);
                    self.fill(idx, now);
                }
            }
        }
        while let Some(&(due, _)) = self.deferred_opens.front() {
            if due > now {
                break;
            }
            let (due, script) = self.deferred_opens.pop_front().expect("front");
            if !self.open(script, Some(due), now) {
                self.ended.push(ConnEnd {
                    script,
                    reason: EndReason::Done,
                    resume_at_ns: now,
                });
            }
        }
    }

    /// Next time that needs sub-millisecond precision (sends on a schedule).
    pub fn next_precise_ns(&self) -> Option<u64> {
        let a = self.think_timers.front().map(|t| t.0);
        let b = self.deferred_opens.front().map(|t| t.0);
        a.into_iter().chain(b).min()
    }

    /// Next timeout, where millisecond precision is enough.
    pub fn next_coarse_ns(&self) -> Option<u64> {
        let a = self.connect_timeouts.front().map(|t| t.0);
        let b = self.request_timeouts.front().map(|t| t.0);
        a.into_iter().chain(b).min()
    }

    /// Hard stop: whatever is still outstanding counts as timed out.
    pub fn abort_all(&mut self, now: u64) {
        for idx in 0..self.conns.len() {
            let Some(c) = self.conns[idx].as_ref() else {
                continue;
            };
            if c.connecting {
                self.fail(idx, ErrorClass::ConnectTimeout, now);
            } else if !c.inflight.is_empty() {
                self.fail(idx, ErrorClass::Timeout, now);
            } else {
                self.end(idx, EndReason::Done, now);
            }
        }
        for (_, s) in self.deferred_opens.drain(..) {
            self.stats.abandoned += s.remaining.min(1 << 40);
        }
        self.ended.clear();
    }
}

/// Account one complete reply (the front request).
fn finish_reply(c: &mut Conn, cfg: &Config, stats: &mut ThreadStats, now: u64, sec: usize) {
    let f = c.inflight.pop_front().expect("a request is outstanding");
    c.done_seq += 1;
    let kc = &cfg.kinds[f.kind as usize];
    let body_ok = c.check.take().is_some_and(|ch| ch.finish(&kc.expect));
    let outcome = if c.status != kc.expect_status {
        Err(ErrorClass::BadStatus)
    } else if !body_ok {
        Err(ErrorClass::BadBody)
    } else {
        Ok(())
    };
    let latency_us = now.saturating_sub(f.intended_ns) / 1000;
    let service_us = cfg.open_model.then(|| now.saturating_sub(f.sent_ns) / 1000);
    stats.response(
        f.kind as usize,
        c.status,
        outcome,
        latency_us,
        service_us,
        sec,
    );
}
