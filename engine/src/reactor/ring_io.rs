//! Connections on the io_uring backend: connects, multishot receives and sends as submissions,
//! and each completion moved into the same connection logic the epoll backend drives.

use std::io;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

use super::conn::{is_reset, Conn};
use super::driver::{Driver, RingSock, Sock};
use super::ring::{self, Completion, Op, Ring};
use super::Reactor;
use crate::stats::ErrorClass;

impl Reactor {
    fn ring(&mut self) -> &mut Ring {
        match &mut self.io {
            Driver::Ring(r) => r,
            Driver::Epoll(_) => unreachable!("a ring operation on the epoll backend"),
        }
    }

    /// A fresh socket (from `net`) for the ring: its connect goes in as a submission.
    pub(super) fn ring_sock(&mut self, sock: socket2::Socket, idx: usize, gen: u32) -> Sock {
        let fd = sock.into_raw_fd();
        // SAFETY: `fd` was just released by its owner.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let rs = RingSock {
            fd,
            sending: Vec::new(),
            in_flight: false,
            queued: Vec::new(),
            receiving: false,
            connecting: true,
        };
        let raw = rs.raw();
        self.ring()
            .connect(raw, ring::user_data(Op::Connect, idx, gen));
        Sock::Ring(rs)
    }

    /// Send `self.out` on connection `idx`: at once when nothing is in flight, else after it.
    pub(super) fn ring_send(&mut self, idx: usize) {
        let gen = self.slots.gen(idx);
        let c = self.slots.live_mut(idx);
        let Sock::Ring(rs) = &mut c.sock else {
            unreachable!("a ring send on an epoll socket")
        };
        if rs.in_flight {
            rs.queued.extend_from_slice(&self.out);
            return;
        }
        rs.sending.clear();
        rs.sending.extend_from_slice(&self.out);
        rs.in_flight = true;
        let (fd, ptr, len) = (rs.raw(), rs.sending.as_ptr(), rs.sending.len());
        // SAFETY: `sending` is neither touched nor freed until the send's completion: it moves
        // to the graveyard if the connection ends first.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        let ud = ring::user_data(Op::Send, idx, gen);
        match &mut self.io {
            Driver::Ring(r) => r.send(fd, bytes, ud),
            Driver::Epoll(_) => unreachable!(),
        }
    }

    /// Close a connection that has left its slot (`idx`, `gen` were its address).
    pub(super) fn ring_release(&mut self, rs: RingSock, idx: usize, gen: u32) {
        let fd = rs.fd.into_raw_fd();
        let mut pending = Vec::with_capacity(3);
        if rs.connecting {
            pending.push(ring::user_data(Op::Connect, idx, gen));
        }
        if rs.receiving {
            pending.push(ring::user_data(Op::Recv, idx, gen));
        }
        let r = self.ring();
        if rs.in_flight {
            let ud = ring::user_data(Op::Send, idx, gen);
            pending.push(ud);
            r.graveyard.insert(ud, rs.sending);
        }
        r.close(fd, &pending, idx, gen);
    }

    /// The live connection a completion is for, if it still is.
    fn target_of(&mut self, ud: u64) -> Option<(Op, usize)> {
        let (op, idx, gen) = ring::split(ud);
        let op = op?;
        let live = idx < self.slots.len()
            && self.slots.gen(idx) & 0xff_ffff == gen
            && self.slots.get(idx).is_some();
        live.then_some((op, idx))
    }

    pub(super) fn on_completion(&mut self, c: &Completion, now: u64) {
        let Some((op, idx)) = self.target_of(c.user_data) else {
            return self.stale(c);
        };
        match op {
            Op::Connect => self.ring_connected(idx, c.result, now),
            Op::Recv => self.ring_received(idx, c, now),
            Op::Send => self.ring_sent(idx, c.result, now),
            Op::Close | Op::Cancel => {}
        }
    }

    /// A completion of a connection that has ended: give back its buffer or its send bytes.
    fn stale(&mut self, c: &Completion) {
        let r = self.ring();
        if let Some((bid, _)) = r.received(c) {
            r.recycle(bid);
        }
        if ring::split(c.user_data).0 == Some(Op::Send) {
            r.graveyard.remove(&c.user_data);
        }
    }

    fn ring_connected(&mut self, idx: usize, res: i32, now: u64) {
        if let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock {
            rs.connecting = false;
        }
        if res < 0 {
            let class = self.connect_error(&io::Error::from_raw_os_error(-res));
            return self.fail(idx, class, now);
        }
        self.arm_recv(idx);
        self.connected(idx, now);
    }

    fn arm_recv(&mut self, idx: usize) {
        let gen = self.slots.gen(idx);
        let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock else {
            return;
        };
        rs.receiving = true;
        let fd = rs.raw();
        self.ring().recv(fd, ring::user_data(Op::Recv, idx, gen));
    }

    fn ring_received(&mut self, idx: usize, c: &Completion, now: u64) {
        let more = Ring::more(c);
        let gen = self.slots.gen(idx);
        if !more {
            if let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock {
                rs.receiving = false;
            }
        }
        if c.result < 0 {
            let e = io::Error::from_raw_os_error(-c.result);
            return match -c.result {
                // Out of buffers: the receive ended; take it up again after this batch's
                // buffers went back.
                libc::ENOBUFS => self.arm_recv(idx),
                libc::ECANCELED => {}
                _ => self.read_failed(idx, &e, now),
            };
        }
        let Some((bid, bytes)) = self.ring().received(c) else {
            // No buffer: the stream ended.
            return self.on_eof(idx, now);
        };
        let n = bytes.len();
        // SAFETY: buffer `bid` is the kernel's no more and is not given back before the bytes
        // are parsed (below); the buffers' memory is neither moved nor freed while the ring lives.
        let data = unsafe { std::slice::from_raw_parts(bytes.as_ptr(), n) };
        let mut completed = 0;
        let live = n == 0 || self.take_bytes(idx, data, now, &mut completed);
        self.ring().recycle(bid);
        if n == 0 {
            return self.on_eof(idx, now);
        }
        if !live || self.ending.contains(&c.user_data) {
            // The end follows in this batch and decides what the connection does.
            return;
        }
        if completed > 0 {
            self.after_replies(idx, now);
        }
        if !more && self.slots.get_mut(idx, gen).is_some() {
            self.arm_recv(idx);
        }
    }

    fn ring_sent(&mut self, idx: usize, res: i32, now: u64) {
        if res < 0 {
            if -res == libc::ECANCELED {
                return;
            }
            return self.write_failed(idx, &io::Error::from_raw_os_error(-res), now);
        }
        let gen = self.slots.gen(idx);
        let c: &mut Conn = self.slots.live_mut(idx);
        let Sock::Ring(rs) = &mut c.sock else {
            return;
        };
        rs.sending.drain(..(res as usize).min(rs.sending.len()));
        if rs.sending.is_empty() {
            if rs.queued.is_empty() {
                rs.in_flight = false;
                return;
            }
            std::mem::swap(&mut rs.sending, &mut rs.queued);
        }
        let (fd, ptr, len) = (rs.raw(), rs.sending.as_ptr(), rs.sending.len());
        // SAFETY: as in `ring_send`.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        self.ring()
            .send(fd, bytes, ring::user_data(Op::Send, idx, gen));
    }

    /// A receive failed: as a failed read on the epoll backend.
    pub(super) fn read_failed(&mut self, idx: usize, e: &io::Error, now: u64) {
        let c = self.slots.live_ref(idx);
        // A reset with nothing outstanding is the server dropping an idle connection.
        if c.inflight.is_empty() && is_reset(e) {
            return self.server_closed(idx, now);
        }
        if is_reset(e) && self.resend_after_unannounced_close(idx, ErrorClass::Reset, now) {
            return;
        }
        self.fail(idx, ErrorClass::Reset, now);
    }
}
