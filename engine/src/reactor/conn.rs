//! One connection's state machine: the handshake, writing requests, parsing the replies in order
//! and accounting each one. It knows nothing of other connections, timers or the model.

use std::collections::VecDeque;
use std::io;

use mio::net::TcpStream;

use super::driver::Sock;

use super::quote::{self, Quote};
use super::{Config, KindConfig, Script};
use crate::clock::Stamp;
use crate::http::{Event, Head, ResponseParser};
use crate::stats::{ErrorClass, ThreadStats};
use crate::validate::ReplyCheck;

/// A request sent and not yet answered.
pub(super) struct InFlight {
    pub kind: u16,
    pub intended_ns: u64,
    pub sent_ns: u64,
    /// When it times out: its first send's timeout, kept by a re-send.
    pub deadline_ns: u64,
    /// Sent a second time, after an unannounced close: never re-sent again.
    pub resent: bool,
    /// HTTP/2: its stream id (0 on HTTP/1).
    pub stream: u32,
}

/// A request a connection must send before it reserves new ones: the one it was opened for,
/// or requests re-sent after an unannounced close.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ticket {
    pub kind: u16,
    /// Its own intended send time (re-sends keep the original one); None: the connection's.
    pub intended_ns: Option<u64>,
    pub resent: bool,
    /// A re-send's deadline (its first send's); None: the request timeout from when it is sent.
    pub deadline_ns: Option<u64>,
}

impl Ticket {
    /// A request of `kind` sent for the first time, at the connection's intended time.
    pub fn fresh(kind: u16) -> Ticket {
        Ticket {
            kind,
            intended_ns: None,
            resent: false,
            deadline_ns: None,
        }
    }
}

pub(super) struct Conn {
    pub sock: Sock,
    pub connecting: bool,
    pub script: Script,
    /// Requests the connection was opened for (reserved before connecting), sent first.
    pub tickets: VecDeque<Ticket>,
    /// Kind of the first of them (for the connect time).
    pub ticket_kind: u16,
    pub connect_start_ns: u64,
    /// Intended send time of the next send batch (open models); None means "now".
    pub intended_ns: Option<u64>,
    pub inflight: VecDeque<InFlight>,
    pub sent_seq: u64,
    pub done_seq: u64,
    /// When the last reply completed: the next request was intended then (think time aside).
    pub last_reply_ns: Option<u64>,
    parser: ResponseParser,
    check: Option<ReplyCheck>,
    status: u16,
    /// The reply in progress's bytes, in case it is wrong.
    quote: Quote,
    /// No further request may go on this connection (a reply or our request said close).
    pub closing: bool,
    pub thinking: bool,
    pub think_due_ns: u64,
    /// A pooled connection waiting for an arrival.
    pub parked: bool,
    /// Unparsed bytes (a partial head or chunk line).
    stash: Vec<u8>,
    /// Request bytes the socket did not take yet.
    pub wbuf: Vec<u8>,
    /// WebSocket loads: the upgrade and the frames (requests are then messages).
    pub ws: Option<Box<super::ws_conn::WsConn>>,
    /// HTTP/2 loads: streams, windows and the server's settings (requests are then streams).
    pub h2: Option<Box<super::h2_conn::H2Conn>>,
    /// TLS loads: rustls's state (every byte both ways goes through it).
    pub tls: Option<Box<super::tls_flow::TlsConn>>,
}

/// A read or write error that means the peer reset the connection.
pub(super) fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED)
    )
}

impl Conn {
    /// A connection being opened for `script`, its first requests (`tickets`, not empty)
    /// already reserved.
    pub fn new(
        sock: Sock,
        script: Script,
        tickets: VecDeque<Ticket>,
        intended_ns: Option<u64>,
        now: u64,
    ) -> Conn {
        Conn {
            sock,
            connecting: true,
            script,
            ticket_kind: tickets.front().map_or(0, |t| t.kind),
            tickets,
            connect_start_ns: now,
            intended_ns,
            inflight: VecDeque::new(),
            sent_seq: 0,
            done_seq: 0,
            last_reply_ns: None,
            parser: ResponseParser::default(),
            check: None,
            status: 0,
            quote: Quote::default(),
            closing: false,
            thinking: false,
            think_due_ns: 0,
            parked: false,
            stash: Vec::new(),
            wbuf: Vec::new(),
            ws: None,
            h2: None,
            tls: None,
        }
    }

    /// The socket of a connection on the epoll backend.
    pub fn mio(&mut self) -> &mut TcpStream {
        match &mut self.sock {
            Sock::Mio(s) => s,
            Sock::Ring(_) => unreachable!("an epoll operation on a ring socket"),
        }
    }

    /// Whether the non-blocking connect is done: Ok(false) while it is still under way.
    pub fn handshake_done(&mut self, ev: &mio::event::Event) -> io::Result<bool> {
        // Writable without EPOLLERR: the handshake is done (saves getsockopt and getpeername).
        if ev.is_writable() && !ev.is_error() {
            return Ok(true);
        }
        let sock = self.mio();
        match sock.take_error() {
            Ok(None) => match sock.peer_addr() {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
                Err(e) => Err(e),
            },
            Ok(Some(e)) | Err(e) => Err(e),
        }
    }

    /// Whether request number `seq` of this connection is still unanswered.
    pub fn awaits(&self, seq: u64) -> bool {
        if self.h2.is_some() {
            let id = super::h2_flow::stream_id(seq);
            return self.inflight.iter().any(|f| f.stream == id);
        }
        self.done_seq <= seq && seq < self.sent_seq
    }

    /// Bytes kept for the next read (an incomplete reply head, chunk line or frame).
    pub fn pending_bytes(&self) -> usize {
        self.stash.len()
    }

    /// No byte of a reply is pending: the last reply is complete and none has begun since.
    pub fn between_replies(&self) -> bool {
        self.stash.is_empty() && self.parser.is_idle()
    }

    /// Wait `think_ns` after the last reply before sending again; returns the due time.
    pub fn start_thinking(&mut self, now: u64) -> u64 {
        let due = now + self.script.think_ns;
        self.thinking = true;
        self.think_due_ns = due;
        self.intended_ns = Some(due);
        due
    }

    /// Parse `fresh` bytes (after any stashed ones); returns how many replies completed.
    /// Err(None): unsolicited bytes; Err(Some(_)): not HTTP.
    pub fn consume(
        &mut self,
        fresh: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Result<u32, Option<ErrorClass>> {
        let mut stash = std::mem::take(&mut self.stash);
        let data: &[u8] = if stash.is_empty() {
            fresh
        } else {
            stash.extend_from_slice(fresh);
            &stash
        };
        let (off, completed) = if self.ws.is_some() {
            self.ws_parse(data, cfg, stats, now, at)?
        } else if self.h2.is_some() {
            self.h2_parse(data, cfg, stats, now, at)?
        } else {
            self.parse(data, cfg, stats, now, at)?
        };
        if off < data.len() && !(self.closing && self.inflight.is_empty()) {
            if stash.is_empty() {
                self.stash.extend_from_slice(&data[off..]);
            } else {
                stash.drain(..off);
                self.stash = stash;
            }
        }
        Ok(completed)
    }

    /// Feed `data` to the parser reply by reply; returns bytes used and replies completed.
    fn parse(
        &mut self,
        data: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Result<(usize, u32), Option<ErrorClass>> {
        let mut off = 0;
        let mut completed = 0;
        loop {
            let Some(front) = self.inflight.front() else {
                if off < data.len() && !self.closing {
                    return Err(None);
                }
                break;
            };
            let kind = front.kind as usize;
            let kc = &cfg.kinds[kind];
            let (used, ev) = match self.parser.advance(&data[off..], kc.head_request) {
                Ok(step) => step,
                Err(e) => {
                    if stats.kinds[kind].wrong.wants(ErrorClass::ProtocolError) {
                        stats.kinds[kind]
                            .wrong
                            .keep(quote::not_http(e.0, &data[off..], now));
                    }
                    return Err(Some(ErrorClass::ProtocolError));
                }
            };
            off += used;
            match ev {
                Event::NeedMore => break,
                Event::Head(h) => {
                    self.quote.begin(off - used..off);
                    self.on_head(h, kc, stats);
                }
                Event::Body(b) => {
                    if let Some(ch) = self.check.as_mut() {
                        ch.update(&kc.expect, b);
                    }
                }
                Event::Complete => {
                    self.finish_reply(cfg, stats, (now, at), (data, off));
                    completed += 1;
                    if self.closing {
                        // Nothing after a closing reply belongs to us.
                        break;
                    }
                }
            }
        }
        if let (Some(_), Some(front)) = (&self.check, self.inflight.front()) {
            // A reply in progress: its bytes so far, copied if it may be quoted.
            let wanted = stats.kinds[front.kind as usize].wrong.wants_any();
            self.quote.carry(data, off, wanted);
        }
        Ok((off, completed))
    }

    fn on_head(&mut self, h: Head, kc: &KindConfig, stats: &mut ThreadStats) {
        self.status = h.status;
        if !h.keep_alive {
            self.closing = true;
            stats.connection_close_replies += 1;
        }
        self.check = Some(ReplyCheck::new(&kc.expect, &h.media_type));
    }

    /// The stream ended and that completed a read-until-close reply: account it.
    pub fn finish_at_eof(&mut self, cfg: &Config, stats: &mut ThreadStats, now: u64, at: Stamp) {
        // The advance that reports completion consumes nothing.
        let _ = self.parser.advance(&[], false);
        self.finish_reply(cfg, stats, (now, at), (&[], 0));
    }

    /// The stream ended: what that means for the reply in progress.
    pub fn eof_outcome(&mut self) -> crate::http::EofOutcome {
        self.parser.on_eof()
    }

    /// Account one complete reply (the front request), which ended at `end` of `data`; a wrong
    /// one is quoted when its kind has none of its class yet.
    fn finish_reply(
        &mut self,
        cfg: &Config,
        stats: &mut ThreadStats,
        (now, at): (u64, Stamp),
        (data, end): (&[u8], usize),
    ) {
        let kind = self
            .inflight
            .front()
            .expect("a request is outstanding")
            .kind as usize;
        let kc = &cfg.kinds[kind];
        let checked = self.check.take().map(|ch| ch.finish(&kc.expect));
        let outcome = if self.status != kc.expect_status {
            Err(ErrorClass::BadStatus)
        } else if !matches!(checked, Some(Ok(()))) {
            Err(ErrorClass::BadBody)
        } else {
            Ok(())
        };
        if let Err(class) = outcome {
            if stats.kinds[kind].wrong.wants(class) {
                let status = (self.status, kc.expect_status);
                let w = self
                    .quote
                    .wrong(class, status, checked, &kc.expect, data, end, now);
                stats.kinds[kind].wrong.keep(w);
            }
        }
        self.complete_front(self.status, outcome, cfg, stats, now, at);
    }

    /// The front request was answered at `now` (HTTP `status`, or 101 for a WebSocket echo)
    /// with `outcome`: account its latency and service time.
    pub(super) fn complete_front(
        &mut self,
        status: u16,
        outcome: Result<(), ErrorClass>,
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) {
        self.complete_at(0, status, outcome, cfg, stats, now, at);
    }

    /// As `complete_front`, for the request at `pos` in flight (HTTP/2 streams end in any order).
    #[allow(clippy::too_many_arguments)] // complete_front's, and where
    pub(super) fn complete_at(
        &mut self,
        pos: usize,
        status: u16,
        outcome: Result<(), ErrorClass>,
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) {
        let f = self.inflight.remove(pos).expect("a request is outstanding");
        self.done_seq += 1;
        self.last_reply_ns = Some(now);
        let latency_us = now.saturating_sub(f.intended_ns) / 1000;
        let service_us = cfg.open_model.then(|| now.saturating_sub(f.sent_ns) / 1000);
        stats.response(f.kind as usize, status, outcome, latency_us, service_us, at);
    }
}
