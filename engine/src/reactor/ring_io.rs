//! Connections on the io_uring backend: connects, multishot receives and sends as submissions,
//! and each completion moved into the same connection logic the epoll backend drives.

use std::io;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

use super::conn::is_reset;
use super::driver::{Driver, RingSock, Sock};
use super::ring::{self, Completion, Op, Ring};
use super::Reactor;
use crate::clock::now_ns;
use crate::stats::ErrorClass;

/// Submission entries queued before a paced submission enters the ring and looks at the schedule.
const SUBMIT_CHUNK: usize = 64;
/// Rounds over what the schedule refilled meanwhile before a paced submission hands back.
const PACED_PASSES: u32 = 4;

/// What a paced submission runs between its chunks (the schedule's arrivals).
pub(super) type Between<'a> = &'a mut dyn FnMut(&mut Reactor, u64);

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
            queued: Vec::new(),
            receiving: false,
            connecting: true,
            ending: false,
            unsent: false,
        };
        let raw = rs.raw();
        self.ring()
            .connect(raw, ring::user_data(Op::Connect, idx, gen));
        Sock::Ring(rs)
    }

    /// Send `self.out` on connection `idx`: with the rest of this batch's bytes for it when
    /// nothing is in flight (one send per connection per entry of the ring, as a closed loop of
    /// many streams refills them reply by reply), else after the send in flight.
    pub(super) fn ring_send(&mut self, idx: usize) {
        let gen = self.slots.gen(idx);
        let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock else {
            unreachable!("a ring send on an epoll socket")
        };
        if rs.busy() {
            rs.queued.extend_from_slice(&self.out);
            return;
        }
        rs.sending.extend_from_slice(&self.out);
        if !rs.unsent {
            rs.unsent = true;
            self.ring().unsent.push((idx, gen));
        }
    }

    /// Queue the sends the batch left (before the ring is entered). With `between`, every
    /// `SUBMIT_CHUNK` queued entries are submitted at once and `between(self, now)` runs after
    /// them: on loopback each send also runs the server's TCP receive, so an overloaded server's
    /// hundreds of refills in one entry of the ring would hold up the schedule for milliseconds
    /// (the epoll backend writes them between its looks at the schedule). True when a chunk was
    /// submitted, so the caller reads the clock again before it waits.
    pub(super) fn submit_sends(&mut self, mut between: Option<Between<'_>>) -> bool {
        let mut entered = false;
        let mut batch = std::mem::take(&mut self.ring().unsent);
        for _ in 0..PACED_PASSES {
            if batch.is_empty() {
                break;
            }
            for &(idx, gen) in &batch {
                if let Some(c) = self.slots.get_mut(idx, gen) {
                    if let Sock::Ring(rs) = &mut c.sock {
                        if std::mem::take(&mut rs.unsent) {
                            self.submit_send(idx);
                        }
                    }
                }
                if let Some(between) = between.as_mut() {
                    if self.ring().queued() >= SUBMIT_CHUNK {
                        self.ring().submit_queued();
                        entered = true;
                        between(self, now_ns());
                    }
                }
            }
            // What `between` refilled (a sessions model's next request) goes in the next round.
            batch.clear();
            std::mem::swap(&mut batch, &mut self.ring().unsent);
        }
        // What the last round refilled waits for the wait, which queues it (and the vector's
        // room is kept for the next batch).
        std::mem::swap(&mut batch, &mut self.ring().unsent);
        entered
    }

    /// Submit the bytes in `sending` (not empty) of connection `idx`.
    fn submit_send(&mut self, idx: usize) {
        let gen = self.slots.gen(idx);
        let Sock::Ring(rs) = &self.slots.live_ref(idx).sock else {
            return;
        };
        let (fd, ptr, len) = (rs.raw(), rs.sending.as_ptr(), rs.sending.len());
        // SAFETY: `sending` is neither touched nor freed until the send's completion: it moves
        // to the graveyard if the connection ends first.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        self.ring()
            .send(fd, bytes, ring::user_data(Op::Send, idx, gen));
    }

    /// Close a connection that has left its slot (`idx`, `gen` were its address). `graceful`:
    /// it ended without an error, so a send in flight completes and the bytes queued behind it
    /// (a pong, a close frame, a PING's ACK) go out before the close; otherwise pending sends
    /// are cancelled.
    pub(super) fn ring_release(&mut self, mut rs: RingSock, idx: usize, gen: u32, graceful: bool) {
        if std::mem::take(&mut rs.unsent) {
            // Never submitted (so nothing is queued behind them): they go as the tail of a
            // graceful close, and with the connection otherwise.
            rs.queued = std::mem::take(&mut rs.sending);
        }
        let fd = rs.fd.into_raw_fd();
        let ud = |op| ring::user_data(op, idx, gen);
        let sending = !rs.sending.is_empty();
        let pending = [
            rs.connecting.then(|| ud(Op::Connect)),
            rs.receiving.then(|| ud(Op::Recv)),
            (sending && !graceful).then(|| ud(Op::Send)),
        ];
        let r = self.ring();
        if sending {
            r.graveyard.insert(ud(Op::Send), rs.sending);
        }
        if graceful && !rs.queued.is_empty() {
            // The Vec's bytes stay where they are once it is in the graveyard, until the
            // completion (stale by then) removes it.
            let tail = r.graveyard.entry(ud(Op::Tail)).or_insert(rs.queued);
            // SAFETY: the graveyard keeps these bytes until the send's completion.
            let bytes = unsafe { std::slice::from_raw_parts(tail.as_ptr(), tail.len()) };
            r.send(fd, bytes, ud(Op::Tail));
        }
        r.close(fd, pending.into_iter().flatten(), idx, gen);
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
            Op::Close | Op::Cancel | Op::Tail => {}
        }
    }

    /// A completion of a connection that has ended: give back its buffer or its send bytes.
    fn stale(&mut self, c: &Completion) {
        let r = self.ring();
        if let Some((bid, _)) = r.received(c) {
            r.recycle(bid);
        }
        if matches!(ring::split(c.user_data).0, Some(Op::Send | Op::Tail)) {
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
        if !live || self.ends_in_batch(idx) {
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
        let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock else {
            return;
        };
        rs.sending.drain(..(res as usize).min(rs.sending.len()));
        if rs.sending.is_empty() {
            if rs.queued.is_empty() {
                return;
            }
            std::mem::swap(&mut rs.sending, &mut rs.queued);
        }
        self.submit_send(idx);
    }

    /// Mark the live connections whose receive ends in the batch `done` (the peer's FIN, or an
    /// error that ends the connection): like epoll's hang-up flag, it says the data before it is
    /// the last, so the connection must not send again on the strength of that data.
    pub(super) fn mark_ends(&mut self, done: &[Completion]) {
        for c in done {
            // Out of buffers (re-armed) or cancelled: the connection goes on.
            let ends = c.result == 0
                || (c.result < 0 && ![libc::ECANCELED, libc::ENOBUFS].contains(&-c.result));
            if !ends {
                continue;
            }
            if let Some((Op::Recv, idx)) = self.target_of(c.user_data) {
                if let Sock::Ring(rs) = &mut self.slots.live_mut(idx).sock {
                    rs.ending = true;
                }
            }
        }
    }

    fn ends_in_batch(&self, idx: usize) -> bool {
        matches!(&self.slots.live_ref(idx).sock, Sock::Ring(rs) if rs.ending)
    }

    /// A receive failed: as a failed read on the epoll backend.
    pub(super) fn read_failed(&mut self, idx: usize, e: &io::Error, now: u64) {
        if self.ws_handshake_cut(idx, now) || self.tls_handshake_cut(idx, now) {
            return;
        }
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
