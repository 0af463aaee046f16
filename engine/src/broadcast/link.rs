//! One WebSocket connection of a broadcast load, subscriber or publisher: the connect, the
//! upgrade, bytes in and out, and the frames received (pings answered, the server's close
//! honoured, data messages handed back whole).

use std::io::{self, Read, Write};

use mio::net::TcpStream;

use crate::rng::Rng;
use crate::stats::{record_us, ThreadStats};
use crate::ws;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    Upgrading,
    Open,
    /// Closed by the server, broken, or failed before it opened.
    Gone,
}

pub struct Link {
    pub sock: TcpStream,
    pub state: State,
    accept: String,
    started_ns: u64,
    rng: Rng,
    asm: ws::Assembler,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// Bytes of `out` already written, and all bytes written since the connect.
    out_done: usize,
    pub written: u64,
}

/// What reading a link gave: data messages received whole, in order.
pub type Messages = Vec<Vec<u8>>;

impl Link {
    pub fn new(sock: TcpStream, seed: u64, now: u64) -> Link {
        Link {
            sock,
            state: State::Connecting,
            accept: String::new(),
            started_ns: now,
            rng: Rng::new(seed),
            asm: ws::Assembler::default(),
            inbuf: Vec::new(),
            out: Vec::new(),
            out_done: 0,
            written: 0,
        }
    }

    fn mask(&mut self) -> [u8; 4] {
        (self.rng.next_u64() as u32).to_ne_bytes()
    }

    /// Writable while connecting: Ok(true) when connected (the upgrade is then queued with a
    /// fresh key), Ok(false) while still connecting, Err with why the connect failed.
    pub fn connected(&mut self, w: &crate::reactor::WsConfig, now: u64) -> io::Result<bool> {
        if let Some(e) = self.sock.take_error()? {
            return Err(e);
        }
        match self.sock.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
            Err(e) => return Err(e),
        }
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&self.rng.next_u64().to_ne_bytes());
        nonce[8..].copy_from_slice(&self.rng.next_u64().to_ne_bytes());
        let key = ws::key_for(nonce);
        self.accept = ws::accept_for(&key);
        self.out
            .extend(ws::upgrade_request(&w.path, &w.host, &w.headers, &key));
        self.state = State::Upgrading;
        self.started_ns = now;
        Ok(true)
    }

    /// Queue broadcast message `seq`, due at `due_ns`.
    pub fn queue_message(&mut self, seq: u64, due_ns: u64, len: usize) {
        let mask = self.mask();
        ws::put_broadcast(&mut self.out, seq, due_ns, len, mask);
    }

    /// Queue the close (1000) a client ends with.
    pub fn queue_close(&mut self) {
        let mask = self.mask();
        ws::put_frame(&mut self.out, ws::OP_CLOSE, &1000u16.to_be_bytes(), mask);
    }

    /// Bytes queued and not yet written.
    pub fn pending(&self) -> usize {
        self.out.len() - self.out_done
    }

    /// Write what is queued until the socket would block; Err: the connection broke.
    pub fn flush(&mut self, syscalls: &mut u64) -> io::Result<()> {
        while self.out_done < self.out.len() {
            *syscalls += 1;
            match self.sock.write(&self.out[self.out_done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out_done += n;
                    self.written += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.out_done == self.out.len() {
            self.out.clear();
            self.out_done = 0;
        }
        Ok(())
    }

    /// Read until the socket would block and parse: the upgrade's reply, then frames. Returns
    /// the data messages that came whole; the link is `Gone` when the server closed, reset, or
    /// broke the protocol (counted in `stats.ws`).
    pub fn read(&mut self, scratch: &mut [u8], stats: &mut ThreadStats, now: u64) -> Messages {
        let mut eof = false;
        loop {
            stats.syscalls += 1;
            match self.sock.read(scratch) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    stats.bytes_received += n as u64;
                    self.inbuf.extend_from_slice(&scratch[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    eof = true;
                    break;
                }
            }
        }
        let messages = self.parse(stats, now);
        if eof && self.state != State::Gone {
            if self.state == State::Upgrading {
                stats.ws.failed(ws::HandshakeFailure::Closed);
            }
            self.state = State::Gone;
        }
        messages
    }

    fn parse(&mut self, stats: &mut ThreadStats, now: u64) -> Messages {
        let mut off = 0;
        let mut messages = Vec::new();
        if self.state == State::Upgrading {
            match ws::check_reply(&self.inbuf, &self.accept) {
                Ok(None) => return messages,
                Ok(Some(n)) => {
                    off = n;
                    self.state = State::Open;
                    stats.ws.handshakes_ok += 1;
                    let us = now.saturating_sub(self.started_ns) / 1000;
                    record_us(&mut stats.ws.handshake_us, us);
                }
                Err(r) => {
                    stats.ws.refused(r);
                    self.state = State::Gone;
                    return messages;
                }
            }
        }
        let inbuf = std::mem::take(&mut self.inbuf);
        while self.state == State::Open {
            match ws::parse_frame(&inbuf[off..]) {
                Ok(None) => break,
                Ok(Some((frame, used))) => {
                    off += used;
                    if let Some(m) = self.frame(&frame, stats) {
                        messages.push(m);
                    }
                }
                Err(e) => self.broke(stats, e.name()),
            }
        }
        self.inbuf = inbuf;
        self.inbuf.drain(..off);
        messages
    }

    fn broke(&mut self, stats: &mut ThreadStats, what: &'static str) {
        *stats.ws.protocol_errors.entry(what).or_default() += 1;
        self.state = State::Gone;
    }

    /// One frame: control frames handled here, data frames assembled into messages.
    fn frame(&mut self, frame: &ws::Frame<'_>, stats: &mut ThreadStats) -> Option<Vec<u8>> {
        if frame.opcode & 0x8 != 0 {
            let mut out = std::mem::take(&mut self.out);
            if stats.ws.control(frame, &mut out, || self.mask()) {
                self.state = State::Gone;
            }
            self.out = out;
            return None;
        }
        match self.asm.add(frame) {
            Err(what) => {
                self.broke(stats, what);
                None
            }
            Ok(None) => None,
            Ok(Some((op, joined))) => {
                let payload = joined.unwrap_or_else(|| frame.payload.to_vec());
                if op == ws::OP_TEXT && std::str::from_utf8(&payload).is_err() {
                    self.broke(stats, "invalid_utf8");
                    return None;
                }
                stats.ws.messages_received += 1;
                if self.asm.frames > 1 {
                    stats.ws.fragmented += 1;
                }
                Some(payload)
            }
        }
    }
}
