//! The reactor's side of WebSocket connections: sending the upgrade, what a parse leaves to do
//! (control frames to send, the first messages once open, the server's close), a handshake cut
//! short, and the close frame at the end of a connection's script.

use super::driver::Sock;
use super::ws_conn::WsConn;
use super::Reactor;
use crate::stats::ErrorClass;
use crate::ws::{self, HandshakeFailure};

impl Reactor {
    /// Connected: send the upgrade, its reply due within the request timeout.
    pub(super) fn ws_upgrade(&mut self, idx: usize, now: u64) {
        let w = self.cfg.ws.as_ref().expect("a WebSocket load");
        let (a, b) = (self.issuer.rng.next_u64(), self.issuer.rng.next_u64());
        let mut nonce = [0u8; 16];
        nonce[..8].copy_from_slice(&a.to_ne_bytes());
        nonce[8..].copy_from_slice(&b.to_ne_bytes());
        let key = ws::key_for(nonce);
        self.out.clear();
        self.out
            .extend(ws::upgrade_request(&w.path, &w.host, &w.headers, &key));
        let gen = self.slots.gen(idx);
        let c = self.slots.live_mut(idx);
        c.ws = Some(Box::new(WsConn::new(&key, a ^ b.rotate_left(17), now)));
        self.timers
            .connect
            .push(now + self.cfg.timeout_ns, (idx, gen));
        self.put_out(idx, now);
    }

    /// After bytes were parsed on a WebSocket connection: send the control frames they asked
    /// for, honour the server's close, start sending once the upgrade completed. False when the
    /// connection ended.
    pub(super) fn ws_after_parse(&mut self, idx: usize, now: u64) -> bool {
        let gen = self.slots.gen(idx);
        let c = self.slots.live_mut(idx);
        let w = c.ws.as_mut().expect("a WebSocket connection");
        let (ctrl, closed, opened) = (std::mem::take(&mut w.ctrl), w.closed, w.opened);
        w.opened = false;
        if !self.send_ctrl(idx, &ctrl, now) {
            return false;
        }
        if closed {
            if self.slots.live_ref(idx).inflight.is_empty() {
                self.server_closed(idx, now);
            } else {
                self.fail(idx, ErrorClass::ClosedBeforeResponse, now);
            }
            return false;
        }
        if opened {
            self.fill(idx, now);
        }
        self.slots.get_mut(idx, gen).is_some()
    }

    /// The stream ended or broke during the upgrade: true when it did, and it is accounted.
    pub(super) fn ws_handshake_cut(&mut self, idx: usize, now: u64) -> bool {
        if !self.slots.live_ref(idx).upgrading() {
            return false;
        }
        self.stats.ws.failed(HandshakeFailure::Closed);
        self.fail(idx, ErrorClass::HandshakeFailed, now);
        true
    }

    /// Send the frames a parse left to send (`ctrl`, may be empty) on connection `idx`; false
    /// when that ended the connection.
    pub(super) fn send_ctrl(&mut self, idx: usize, ctrl: &[u8], now: u64) -> bool {
        if ctrl.is_empty() {
            return true;
        }
        let gen = self.slots.gen(idx);
        self.out.clear();
        self.out.extend_from_slice(ctrl);
        self.put_out(idx, now);
        self.slots.get_mut(idx, gen).is_some()
    }

    /// A WebSocket connection whose script is done says goodbye (close 1000) before closing.
    pub(super) fn ws_goodbye(&mut self, idx: usize) {
        let c = self.slots.live_mut(idx);
        let Some(w) = c.ws.as_mut().filter(|w| !w.upgrading && !w.closed) else {
            return;
        };
        w.closed = true;
        let mask = w.mask();
        self.out.clear();
        ws::put_frame(&mut self.out, ws::OP_CLOSE, &1000u16.to_be_bytes(), mask);
        self.seal_out(idx);
        let c = self.slots.live_mut(idx);
        if matches!(c.sock, Sock::Ring(_)) {
            return self.ring_send(idx);
        }
        // The connection is ending either way: a failed write changes nothing.
        self.stats.syscalls += 1;
        let _ = c.send(&self.out);
    }
}
