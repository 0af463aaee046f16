//! WebSocket connections in the reactor: the upgrade once connected, then each request a masked
//! message whose echo is matched by its number; pings answered, the server's close honoured.

use super::conn::Conn;
use super::Config;
use crate::clock::Stamp;
use crate::rng::Rng;
use crate::stats::{record_us, ErrorClass, ThreadStats};
use crate::ws;

/// Settings of a WebSocket load, shared by its connections.
pub struct WsConfig {
    pub message_bytes: usize,
    pub path: String,
    pub host: String,
    pub headers: Vec<(String, String)>,
}

/// The WebSocket side of one connection.
pub(super) struct WsConn {
    /// The upgrade is sent and its reply is not complete.
    pub upgrading: bool,
    /// The `Sec-WebSocket-Accept` the server must give.
    accept: String,
    started_ns: u64,
    /// Mask keys for this connection's frames.
    rng: Rng,
    /// A data message being put together from its frames.
    pub(super) assembler: ws::Assembler,
    /// Control frames to send once the bytes at hand are parsed (pongs, the close reply).
    pub ctrl: Vec<u8>,
    /// The handshake completed in the bytes just parsed: the connection may start sending.
    pub opened: bool,
    /// The server's close frame came.
    pub closed: bool,
}

type Parsed = Result<(usize, u32), Option<ErrorClass>>;

impl WsConn {
    /// A connection about to upgrade with `key`; the other half of `seed` draws its masks.
    pub fn new(key: &str, seed: u64, now: u64) -> WsConn {
        WsConn {
            upgrading: true,
            accept: ws::accept_for(key),
            started_ns: now,
            rng: Rng::new(seed),
            assembler: ws::Assembler::default(),
            ctrl: Vec::new(),
            opened: false,
            closed: false,
        }
    }

    pub fn mask(&mut self) -> [u8; 4] {
        (self.rng.next_u64() as u32).to_ne_bytes()
    }
}

impl WsConn {
    /// The upgrade's reply: Ok(None) while incomplete, else the bytes it took (the WebSocket is
    /// open); Err when it failed.
    fn open(
        &mut self,
        data: &[u8],
        stats: &mut ThreadStats,
        now: u64,
    ) -> Result<Option<usize>, Option<ErrorClass>> {
        let used = match ws::check_reply(data, &self.accept) {
            Ok(None) => return Ok(None),
            Ok(Some(n)) => n,
            Err(r) => {
                stats.ws.refused(r);
                return Err(Some(ErrorClass::HandshakeFailed));
            }
        };
        self.upgrading = false;
        self.opened = true;
        stats.ws.handshakes_ok += 1;
        let us = now.saturating_sub(self.started_ns) / 1000;
        record_us(&mut stats.ws.handshake_us, us);
        Ok(Some(used))
    }
}

fn protocol_error(stats: &mut ThreadStats, what: &'static str) -> Option<ErrorClass> {
    *stats.ws.protocol_errors.entry(what).or_default() += 1;
    Some(ErrorClass::ProtocolError)
}

impl Conn {
    /// The connection is upgrading to a WebSocket.
    pub fn upgrading(&self) -> bool {
        self.ws.as_ref().is_some_and(|w| w.upgrading)
    }

    /// Parse `data` on a WebSocket connection: the upgrade's reply, then frames. Returns bytes
    /// used and echoes completed, as `parse` does for HTTP.
    pub(super) fn ws_parse(
        &mut self,
        data: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Parsed {
        let mut w = self.ws.take().expect("a WebSocket connection");
        let r = self.ws_parse_with(&mut w, data, cfg, stats, now, at);
        self.ws = Some(w);
        r
    }

    fn ws_parse_with(
        &mut self,
        w: &mut WsConn,
        data: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Parsed {
        let mut off = 0;
        if w.upgrading {
            match w.open(data, stats, now)? {
                None => return Ok((0, 0)),
                Some(n) => off = n,
            }
        }
        let mut completed = 0;
        while !w.closed {
            let (frame, used) = match ws::parse_frame(&data[off..]) {
                Ok(None) => break,
                Ok(Some(f)) => f,
                Err(e) => return Err(protocol_error(stats, e.name())),
            };
            off += used;
            if frame.opcode & 0x8 != 0 {
                self.control(w, &frame, stats);
                continue;
            }
            let whole = w.assembler.add(&frame);
            let Some((op, joined)) = whole.map_err(|what| protocol_error(stats, what))? else {
                continue;
            };
            let payload = joined.as_deref().unwrap_or(frame.payload);
            if op == ws::OP_TEXT && std::str::from_utf8(payload).is_err() {
                return Err(protocol_error(stats, "invalid_utf8"));
            }
            stats.ws.messages_received += 1;
            if w.assembler.frames > 1 {
                stats.ws.fragmented += 1;
            }
            completed += self.echo(payload, cfg, stats, now, at)?;
        }
        Ok((off, completed))
    }

    /// A control frame: a ping is answered, a pong counted, a close answered with its code and
    /// the connection marked closing.
    fn control(&mut self, w: &mut WsConn, frame: &ws::Frame<'_>, stats: &mut ThreadStats) {
        let mut ctrl = std::mem::take(&mut w.ctrl);
        if stats.ws.control(frame, &mut ctrl, || w.mask()) {
            w.closed = true;
            self.closing = true;
        }
        w.ctrl = ctrl;
    }

    /// A whole data message: the echo of the message due, of one already answered (a duplicate),
    /// of a later one (those before it are lost), or of none. Returns echoes completed.
    fn echo(
        &mut self,
        payload: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Result<u32, Option<ErrorClass>> {
        let len = cfg.ws.as_ref().expect("a WebSocket load").message_bytes;
        let front = self.sent_seq - self.inflight.len() as u64;
        if !self.inflight.is_empty() && ws::is_message(payload, front, len) {
            self.complete_front(101, Ok(()), cfg, stats, now, at);
            return Ok(1);
        }
        match ws::message_seq(payload, len) {
            Some(s) if s < front => {
                stats.ws.duplicates += 1;
                Ok(0)
            }
            Some(s) if s < self.sent_seq => {
                for _ in front..s {
                    let f = self.inflight.pop_front().expect("a message is outstanding");
                    self.done_seq += 1;
                    let waited = now.saturating_sub(f.intended_ns) / 1000;
                    stats.error(f.kind as usize, ErrorClass::MessageLost, at, waited);
                }
                self.complete_front(101, Ok(()), cfg, stats, now, at);
                Ok(1)
            }
            _ if self.inflight.is_empty() => Err(None),
            _ => {
                self.complete_front(101, Err(ErrorClass::BadBody), cfg, stats, now, at);
                Ok(1)
            }
        }
    }
}
