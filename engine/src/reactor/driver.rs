//! The reactor's I/O backend: mio's epoll (with a timerfd for precise wake-ups) or an io_uring
//! ring; how a thread waits, and how it hands what happened to the connections.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll};

use super::ring::Ring;
use super::Reactor;
use crate::clock::{now_ns, TimerFd};
use crate::plan::EngineIo;

/// How many socket events are handled between two looks at the clock and the schedule.
const EVENTS_PER_SCHEDULE_CHECK: usize = 32;

pub(super) struct Epoll {
    pub poll: Poll,
    events: Option<Events>,
    timer: TimerFd,
}

pub(super) enum Driver {
    Epoll(Epoll),
    Ring(Box<Ring>),
}

/// A connection's socket under each backend.
pub(super) enum Sock {
    Mio(mio::net::TcpStream),
    Ring(RingSock),
}

/// A socket driven by the ring: what it is sending, and what waits behind that.
pub(super) struct RingSock {
    pub fd: OwnedFd,
    /// The bytes of the send in flight (untouched until it completes); empty: none is.
    pub sending: Vec<u8>,
    /// Bytes queued while a send was in flight.
    pub queued: Vec<u8>,
    /// A multishot receive is armed.
    pub receiving: bool,
    /// The connect is in flight.
    pub connecting: bool,
    /// Its receive ends later in the batch being handled (see `Reactor::mark_ends`).
    pub ending: bool,
    /// `sending` holds bytes not submitted yet: they go as one send before the ring is next
    /// entered, with whatever else the batch adds (see `Reactor::submit_sends`).
    pub unsent: bool,
}

impl RingSock {
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// A send is in flight.
    pub fn busy(&self) -> bool {
        !self.unsent && !self.sending.is_empty()
    }
}

impl Driver {
    /// The backend `want` names; for `auto`, io_uring when the kernel offers it, else epoll
    /// (the reason kept for the result).
    pub fn new(
        want: EngineIo,
        target: std::net::SocketAddr,
    ) -> io::Result<(Driver, Option<String>)> {
        // Timer slack (50 µs by default) would blur the schedule of open models.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        match want {
            EngineIo::Epoll => Ok((Driver::epoll()?, None)),
            EngineIo::IoUring => Ok((Driver::Ring(Box::new(Ring::new(target)?)), None)),
            EngineIo::Auto => match Ring::new(target) {
                Ok(r) => Ok((Driver::Ring(Box::new(r)), None)),
                Err(e) => Ok((Driver::epoll()?, Some(format!("io_uring unavailable: {e}")))),
            },
        }
    }

    fn epoll() -> io::Result<Driver> {
        let poll = Poll::new()?;
        let timer = TimerFd::new()?;
        poll.registry().register(
            &mut SourceFd(&timer.raw_fd()),
            super::TIMER_TOKEN,
            Interest::READABLE,
        )?;
        Ok(Driver::Epoll(Epoll {
            poll,
            events: Some(Events::with_capacity(1024)),
            timer,
        }))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Driver::Epoll(_) => "epoll",
            Driver::Ring(_) => "io_uring",
        }
    }
}

impl Reactor {
    /// Wait for I/O until `coarse_ns` at the latest, or `precise_ns` (sends on a schedule) when
    /// that is sooner; `now_only`: do not wait at all.
    pub fn wait(
        &mut self,
        now: u64,
        precise_ns: Option<u64>,
        coarse_ns: u64,
        now_only: bool,
    ) -> io::Result<()> {
        if matches!(self.io, Driver::Ring(_)) {
            self.submit_sends(None);
        }
        let left = |t: u64| Duration::from_nanos(t.saturating_sub(now));
        match &mut self.io {
            Driver::Epoll(ep) => {
                let timeout = match precise_ns {
                    _ if now_only => Duration::ZERO,
                    Some(p) if p <= now => Duration::ZERO,
                    Some(p) if p < coarse_ns => {
                        if ep.timer.arm(p) {
                            self.stats.syscalls += 1;
                        }
                        // The timerfd wakes us precisely; the poll timeout is only a backstop.
                        left(coarse_ns)
                    }
                    _ => left(coarse_ns),
                };
                self.stats.syscalls += 1;
                let events = ep.events.as_mut().expect("events are put back");
                match ep.poll.poll(events, Some(timeout)) {
                    Err(e) if e.kind() != io::ErrorKind::Interrupted => Err(e),
                    _ => Ok(()),
                }
            }
            Driver::Ring(r) => {
                let until = precise_ns.map_or(coarse_ns, |p| p.min(coarse_ns));
                r.wait((!now_only && until > now).then(|| left(until)))
            }
        }
    }

    /// Before a wait: submit a large batch of sends in chunks, with `between(self, now)` after
    /// each (io_uring; epoll writes as it goes). True when it submitted any: read the clock again.
    pub fn submit_paced(&mut self, mut between: impl FnMut(&mut Reactor, u64)) -> bool {
        matches!(self.io, Driver::Ring(_)) && self.submit_sends(Some(&mut between))
    }

    /// Hand what the last wait brought to the connections; `between(self, now)` runs every
    /// few events, so that a long batch of connects and closes does not hold up the schedule.
    pub fn dispatch(&mut self, mut between: impl FnMut(&mut Reactor, u64)) {
        let mut now = now_ns();
        match &mut self.io {
            Driver::Epoll(ep) => {
                let events = ep.events.take().expect("events are put back");
                for (i, ev) in events.iter().enumerate() {
                    if i % EVENTS_PER_SCHEDULE_CHECK == EVENTS_PER_SCHEDULE_CHECK - 1 {
                        now = now_ns();
                        between(self, now);
                    }
                    if ev.token() == super::TIMER_TOKEN {
                        if let Driver::Epoll(ep) = &mut self.io {
                            ep.timer.drain();
                        }
                    } else {
                        self.handle_event(ev, now);
                    }
                }
                if let Driver::Epoll(ep) = &mut self.io {
                    ep.events = Some(events);
                }
            }
            Driver::Ring(r) => {
                let done = std::mem::take(&mut r.done);
                self.mark_ends(&done);
                for (i, c) in done.iter().enumerate() {
                    if i % EVENTS_PER_SCHEDULE_CHECK == EVENTS_PER_SCHEDULE_CHECK - 1 {
                        now = now_ns();
                        between(self, now);
                    }
                    self.on_completion(c, now);
                }
                if let Driver::Ring(r) = &mut self.io {
                    r.publish();
                    // Completions reaped while handling these (a full submission queue) stay
                    // for the next round; otherwise the vector is used again.
                    if r.done.is_empty() {
                        let mut done = done;
                        done.clear();
                        r.done = done;
                    }
                }
            }
        }
    }

    /// The name of the backend this thread runs on.
    pub fn io_backend(&self) -> &'static str {
        self.io.name()
    }
}
