//! TLS connections in the reactor: the handshake once the TCP connect is done, every byte sent
//! sealed into records and every byte received opened before the HTTP/1, HTTP/2 or WebSocket
//! parse sees it, and a handshake that fails or is cut short accounted.

use std::io::{Read, Write};
use std::sync::Arc;

use rustls::{ClientConnection, HandshakeKind};

use super::conn::Conn;
use super::Reactor;
use crate::stats::ErrorClass;
use crate::tls::TlsFailure;

/// One connection's TLS state.
pub(super) struct TlsConn {
    conn: ClientConnection,
    /// The handshake is under way: nothing else may be sent.
    pub handshaking: bool,
    /// When the TCP connect completed (the handshake's start).
    started_ns: u64,
    /// The server's close_notify was seen.
    notified: bool,
}

impl Conn {
    /// The connection's TLS handshake is under way.
    pub fn tls_handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.handshaking)
    }

    fn tls_mut(&mut self) -> &mut TlsConn {
        self.tls.as_mut().expect("a TLS connection")
    }
}

impl TlsConn {
    /// Append the records rustls has ready to send to `out`.
    fn records_into(&mut self, out: &mut Vec<u8>) {
        while self.conn.wants_write() {
            self.conn.write_tls(out).expect("writing into a Vec");
        }
    }
}

impl Reactor {
    /// TCP is connected: a TLS load starts its handshake (its end due within the request
    /// timeout), any other speaks its protocol at once.
    pub(super) fn tls_or_start(&mut self, idx: usize, now: u64) {
        let Some(setup) = self.cfg.tls.as_ref() else {
            return self.start_protocol(idx, now);
        };
        let mut conn = match ClientConnection::new(Arc::clone(&setup.config), setup.name.clone()) {
            Ok(c) => c,
            Err(e) => return self.tls_failed(idx, TlsFailure::of(&e), now),
        };
        conn.set_buffer_limit(None);
        let gen = self.slots.gen(idx);
        self.slots.live_mut(idx).tls = Some(Box::new(TlsConn {
            conn,
            handshaking: true,
            started_ns: now,
            notified: false,
        }));
        self.timers
            .connect
            .push(now + self.cfg.timeout_ns, (idx, gen));
        self.send_records(idx, now);
    }

    /// The protocol's first bytes: the WebSocket upgrade, the HTTP/2 preface, or requests.
    fn start_protocol(&mut self, idx: usize, now: u64) {
        if self.cfg.ws.is_some() {
            return self.ws_upgrade(idx, now);
        }
        if self.cfg.h2.is_some() {
            return self.h2_open(idx, now);
        }
        self.fill(idx, now);
    }

    /// TLS: seal the plaintext in `self.out` into records, in place.
    pub(super) fn seal_out(&mut self, idx: usize) {
        let Some(t) = self.slots.live_mut(idx).tls.as_mut() else {
            return;
        };
        t.conn
            .writer()
            .write_all(&self.out)
            .expect("rustls takes any plaintext once its buffer limit is off");
        self.sealed.clear();
        t.records_into(&mut self.sealed);
        std::mem::swap(&mut self.out, &mut self.sealed);
    }

    /// Put on the wire what rustls has to send of its own (handshake messages); false when the
    /// connection ended.
    fn send_records(&mut self, idx: usize, now: u64) -> bool {
        let gen = self.slots.gen(idx);
        let t = self.slots.live_mut(idx).tls_mut();
        self.out.clear();
        t.records_into(&mut self.out);
        if !self.out.is_empty() {
            self.put_wire(idx, now);
        }
        self.slots.get_mut(idx, gen).is_some()
    }

    /// Take `data`, just received on connection `idx`: on TLS connections through rustls first.
    /// Adds the replies it completed to `completed`; false when that ended the connection.
    pub(super) fn take_bytes(
        &mut self,
        idx: usize,
        data: &[u8],
        now: u64,
        completed: &mut u32,
    ) -> bool {
        if self.slots.live_ref(idx).tls.is_none() {
            return self.take_plain(idx, data, now, completed);
        }
        let mut rest = data;
        let mut plain = std::mem::take(&mut self.plain);
        let mut live = true;
        while live && !rest.is_empty() {
            live = self.open_records(idx, &mut rest, &mut plain, now)
                && (plain.is_empty() || self.take_plain(idx, &plain, now, completed));
        }
        self.plain = plain;
        live
    }

    /// Feed rustls from `rest` (one read's worth), answer what it asks, finish the handshake,
    /// and leave the plaintext it opened in `plain`; false when the connection ended.
    fn open_records(
        &mut self,
        idx: usize,
        rest: &mut &[u8],
        plain: &mut Vec<u8>,
        now: u64,
    ) -> bool {
        plain.clear();
        let t = self.slots.live_mut(idx).tls_mut();
        if t.conn.read_tls(rest).is_err() {
            // rustls's buffers are drained after every read: only a record it cannot hold.
            self.tls_failed(idx, TlsFailure::Other, now);
            return false;
        }
        let state = match t.conn.process_new_packets() {
            Ok(s) => s,
            Err(e) => {
                self.tls_failed(idx, TlsFailure::of(&e), now);
                return false;
            }
        };
        plain.resize(state.plaintext_bytes_to_read(), 0);
        t.conn
            .reader()
            .read_exact(plain)
            .expect("rustls said this much plaintext was there");
        if state.peer_has_closed() && !t.notified {
            t.notified = true;
            self.stats.tls.close_notify += 1;
        }
        let established = t.handshaking && !t.conn.is_handshaking();
        if !self.send_records(idx, now) {
            return false;
        }
        !established || self.tls_established(idx, now)
    }

    /// The handshake is done: account it, check the protocol ALPN chose, and start speaking it;
    /// false when the connection ended.
    fn tls_established(&mut self, idx: usize, now: u64) -> bool {
        let gen = self.slots.gen(idx);
        let t = self.slots.live_mut(idx).tls_mut();
        let us = now.saturating_sub(t.started_ns) / 1000;
        let resumed = t.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        let alpn = t.conn.alpn_protocol();
        let suite = t.conn.negotiated_cipher_suite().map(|s| s.suite());
        let suite = suite.and_then(|s| s.as_str()).unwrap_or("unknown");
        self.stats.tls.handshake(us, resumed, alpn, suite);
        if self.cfg.h2.is_some() && alpn != Some(b"h2".as_slice()) {
            // Still handshaking for the accounting: the streams it was opened for never started.
            self.tls_failed(idx, TlsFailure::Alpn, now);
            return false;
        }
        self.slots.live_mut(idx).tls_mut().handshaking = false;
        self.start_protocol(idx, now);
        self.slots.get_mut(idx, gen).is_some()
    }

    /// The connection's TLS failed. During the handshake nothing was sent: the requests it
    /// was opened for are `tls_failed`; after it, a broken record breaks the replies in flight
    /// as any unreadable reply does (`protocol_error`).
    pub(super) fn tls_failed(&mut self, idx: usize, why: TlsFailure, now: u64) {
        self.stats.tls.failed(why);
        let class = if self.slots.live_ref(idx).tls_handshaking() {
            ErrorClass::TlsFailed
        } else {
            ErrorClass::ProtocolError
        };
        self.fail(idx, class, now);
    }

    /// The stream ended or broke during the TLS handshake: true when it did, and it is
    /// accounted.
    pub(super) fn tls_handshake_cut(&mut self, idx: usize, now: u64) -> bool {
        if !self.slots.live_ref(idx).tls_handshaking() {
            return false;
        }
        self.tls_failed(idx, TlsFailure::Closed, now);
        true
    }
}
