//! The io_uring side of the reactor: one ring per thread, a ring of provided receive buffers for
//! multishot receives, submissions batched until the loop next waits, and completions tagged
//! with the operation and the connection's slot and generation.

use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

/// Submission queue entries; the completion queue is twice as long.
const RING_ENTRIES: u32 = 4096;
/// Provided receive buffers: how many, and the size of each.
const BUFFERS: u16 = 1024;
pub const BUFFER_BYTES: usize = 16 * 1024;
/// The buffer group of the receive buffers.
const BGID: u16 = 7;

/// What a completion is for (the top byte of its user data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Connect = 1,
    Recv = 2,
    Send = 3,
    Close = 4,
    Cancel = 5,
    /// The bytes still queued when a connection ends gracefully, sent before its close: the
    /// completion only frees them.
    Tail = 6,
}

impl Op {
    fn of(ud: u64) -> Option<Op> {
        Some(match ud >> 56 {
            1 => Op::Connect,
            2 => Op::Recv,
            3 => Op::Send,
            4 => Op::Close,
            5 => Op::Cancel,
            6 => Op::Tail,
            _ => return None,
        })
    }
}

/// The user data of operation `op` on the connection in slot `idx`, generation `gen`.
pub fn user_data(op: Op, idx: usize, gen: u32) -> u64 {
    ((op as u64) << 56) | ((u64::from(gen) & 0xff_ffff) << 32) | (idx as u64 & 0xffff_ffff)
}

/// The operation, slot and generation (its low 24 bits) of a completion's user data.
pub fn split(ud: u64) -> (Option<Op>, usize, u32) {
    (
        Op::of(ud),
        (ud & 0xffff_ffff) as usize,
        ((ud >> 32) & 0xff_ffff) as u32,
    )
}

/// One completion, copied out of the queue so the reactor may submit while handling it.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub user_data: u64,
    pub result: i32,
    pub flags: u32,
}

/// The provided-buffer ring: entries the kernel takes receive buffers from, and the buffers.
struct BufRing {
    entries: *mut types::BufRingEntry,
    layout: std::alloc::Layout,
    buffers: Vec<u8>,
    tail: u16,
}

impl BufRing {
    fn new() -> io::Result<BufRing> {
        let layout = std::alloc::Layout::from_size_align(
            usize::from(BUFFERS) * std::mem::size_of::<types::BufRingEntry>(),
            4096,
        )
        .map_err(io::Error::other)?;
        // SAFETY: a non-zero size; the memory is zeroed and freed in Drop with the same layout.
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if entries.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut ring = BufRing {
            entries,
            layout,
            buffers: vec![0; usize::from(BUFFERS) * BUFFER_BYTES],
            tail: 0,
        };
        for bid in 0..BUFFERS {
            ring.put(bid);
        }
        ring.publish();
        Ok(ring)
    }

    /// Hand buffer `bid` back to the kernel (seen once `publish` runs).
    fn put(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (BUFFERS - 1));
        // SAFETY: `slot` < BUFFERS, inside the entries allocation.
        let e = unsafe { &mut *self.entries.add(slot) };
        let start = usize::from(bid) * BUFFER_BYTES;
        e.set_addr(self.buffers[start..].as_ptr() as u64);
        e.set_len(BUFFER_BYTES as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Make the buffers put back visible to the kernel.
    fn publish(&mut self) {
        // SAFETY: the tail field lives in the first entry; the kernel reads it with acquire.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries).cast_mut();
            std::sync::atomic::AtomicU16::from_ptr(tail)
                .store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }

    /// The first `len` bytes of buffer `bid`.
    fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid) * BUFFER_BYTES;
        &self.buffers[start..start + len.min(BUFFER_BYTES)]
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.entries.cast(), self.layout) };
    }
}

/// A thread's ring.
pub struct Ring {
    ring: IoUring,
    bufs: BufRing,
    /// Send buffers of connections that ended with a send in flight, kept until it completes.
    pub graveyard: HashMap<u64, Vec<u8>>,
    /// Completions of the last wait.
    pub done: Vec<Completion>,
    /// The target's address, read by every connect.
    target: socket2::SockAddr,
    /// io_uring_enter calls.
    pub enters: u64,
    /// Connections (index, generation) with bytes to send before the ring is next entered.
    pub unsent: Vec<(usize, u32)>,
}

impl Ring {
    /// A ring with its receive buffers registered; Err when the kernel does not offer what the
    /// reactor needs (io_uring itself, provided-buffer rings, multishot receive).
    pub fn new(target: std::net::SocketAddr) -> io::Result<Ring> {
        let ring = IoUring::builder()
            .setup_cqsize(RING_ENTRIES * 2)
            .setup_submit_all()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .build(RING_ENTRIES)?;
        if !ring.params().is_feature_ext_arg() {
            return Err(io::Error::other("io_uring without timed waits (EXT_ARG)"));
        }
        let mut probe = io_uring::Probe::new();
        ring.submitter().register_probe(&mut probe)?;
        for code in [
            opcode::RecvMulti::CODE,
            opcode::Connect::CODE,
            opcode::Send::CODE,
            opcode::Close::CODE,
            opcode::AsyncCancel2::CODE,
        ] {
            if !probe.is_supported(code) {
                return Err(io::Error::other(format!("io_uring without opcode {code}")));
            }
        }
        let bufs = BufRing::new()?;
        // SAFETY: the entries stay allocated, and unmoved, for the ring's life (both in `Ring`;
        // the ring is dropped first, as it is declared first).
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(bufs.entries as u64, BUFFERS, BGID, 0)?;
        }
        Ok(Ring {
            ring,
            bufs,
            graveyard: HashMap::new(),
            done: Vec::with_capacity(RING_ENTRIES as usize * 2),
            target: target.into(),
            enters: 0,
            unsent: Vec::new(),
        })
    }

    /// Queue one submission, submitting what is queued first when the queue is full.
    fn push(&mut self, e: &squeue::Entry) {
        loop {
            // SAFETY: every pointer in the entries the reactor builds outlives the operation
            // (see the callers).
            if unsafe { self.ring.submission().push(e) }.is_ok() {
                return;
            }
            self.enters += 1;
            if let Err(err) = self.ring.submit() {
                if err.raw_os_error() != Some(libc::EBUSY) {
                    // Nothing can be queued; the operation will time out through the timers.
                    return;
                }
                self.reap();
            }
        }
    }

    /// Connect `fd` to the target.
    pub fn connect(&mut self, fd: RawFd, ud: u64) {
        let e = opcode::Connect::new(
            types::Fd(fd),
            self.target.as_ptr().cast(),
            self.target.len(),
        )
        .build()
        .user_data(ud);
        self.push(&e);
    }

    /// Receive on `fd` into provided buffers until cancelled or out of buffers.
    pub fn recv(&mut self, fd: RawFd, ud: u64) {
        let e = opcode::RecvMulti::new(types::Fd(fd), BGID)
            .build()
            .user_data(ud);
        self.push(&e);
    }

    /// Send `bytes`, which must stay untouched until the completion comes.
    pub fn send(&mut self, fd: RawFd, bytes: &[u8], ud: u64) {
        let e = opcode::Send::new(types::Fd(fd), bytes.as_ptr(), bytes.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(ud);
        self.push(&e);
    }

    /// Cancel the operations `pending` (their user data), then close `fd`. Cancels go by user
    /// data, a hash lookup: a cancel by descriptor walks every pending operation of the ring,
    /// which with ten thousand idle connections costs more than the rest of a close.
    pub fn close(&mut self, fd: RawFd, pending: impl Iterator<Item = u64>, idx: usize, gen: u32) {
        for ud in pending {
            let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::user_data(ud))
                .build()
                .flags(squeue::Flags::SKIP_SUCCESS)
                .user_data(user_data(Op::Cancel, idx, gen));
            self.push(&cancel);
        }
        let close = opcode::Close::new(types::Fd(fd))
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(user_data(Op::Close, idx, gen));
        self.push(&close);
    }

    /// Entries queued and not yet submitted.
    pub fn queued(&mut self) -> usize {
        self.ring.submission().len()
    }

    /// Submit what is queued without waiting (completions stay in the queue for the next wait,
    /// unless the kernel is busy with a full completion queue: they are reaped first then).
    pub fn submit_queued(&mut self) {
        self.enters += 1;
        if let Err(err) = self.ring.submit() {
            if err.raw_os_error() == Some(libc::EBUSY) {
                self.reap();
            }
        }
    }

    /// Submit what is queued and wait until a completion comes or `timeout` passes (none:
    /// submit only); the completions are then in `done`.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.enters += 1;
        let r = match timeout {
            Some(t) if !t.is_zero() => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            }
            _ => self.ring.submit(),
        };
        match r {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        self.reap();
        Ok(())
    }

    /// Move the completions out of the queue.
    fn reap(&mut self) {
        for c in self.ring.completion() {
            self.done.push(Completion {
                user_data: c.user_data(),
                result: c.result(),
                flags: c.flags(),
            });
        }
    }

    /// The buffer a receive completion filled, if any: (buffer id, its bytes).
    pub fn received(&self, c: &Completion) -> Option<(u16, &[u8])> {
        let bid = cqueue::buffer_select(c.flags)?;
        let len = usize::try_from(c.result).unwrap_or(0);
        Some((bid, self.bufs.bytes(bid, len)))
    }

    /// Give a receive buffer back (visible to the kernel after `publish`).
    pub fn recycle(&mut self, bid: u16) {
        self.bufs.put(bid);
    }

    pub fn publish(&mut self) {
        self.bufs.publish();
    }

    /// The multishot receive goes on (false: it ended and must be armed again if wanted).
    pub fn more(c: &Completion) -> bool {
        cqueue::more(c.flags)
    }

    /// Submit what is still queued (closes at the end of a run).
    pub fn flush(&mut self) {
        self.enters += 1;
        let _ = self.ring.submit();
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        self.flush();
    }
}
