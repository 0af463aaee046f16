//! Monotonic nanosecond clock, the run's timeline seconds, and a timerfd for sub-millisecond
//! wake-ups (epoll waits in ms).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const NS_PER_S: u64 = 1_000_000_000;

/// CLOCK_MONOTONIC in ns; the same clock timerfd uses, so deadlines can be armed absolutely.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * NS_PER_S + ts.tv_nsec as u64
}

pub fn secs_to_ns(s: f64) -> u64 {
    (s * NS_PER_S as f64).round().max(0.0) as u64
}

/// Whole seconds since the run started (the index of the result's per-second timeline), and
/// the run's measured window.
#[derive(Debug, Clone, Copy)]
pub struct Timeline {
    start_ns: u64,
    /// End of the measured window (u64::MAX: the window lasts until the last completion).
    window_end_ns: u64,
}

/// When an outcome happened, as the result counts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    /// Its timeline second.
    pub sec: usize,
    /// Nanoseconds since the run started.
    pub offset_ns: u64,
    /// Within the measured window [start, start + window].
    pub in_window: bool,
}

impl Timeline {
    pub fn new(start_ns: u64, window_end_ns: u64) -> Timeline {
        Timeline {
            start_ns,
            window_end_ns,
        }
    }

    /// The timeline second, run offset and window membership of an outcome at `now_ns`.
    pub fn stamp(&self, now_ns: u64) -> Stamp {
        Stamp {
            sec: self.second_of(now_ns),
            offset_ns: now_ns.saturating_sub(self.start_ns),
            in_window: now_ns <= self.window_end_ns,
        }
    }

    /// The timeline second `now_ns` falls in (0 before the start).
    pub fn second_of(&self, now_ns: u64) -> usize {
        (now_ns.saturating_sub(self.start_ns) / NS_PER_S) as usize
    }

    /// When timeline second `sec` begins.
    pub fn second_start_ns(&self, sec: usize) -> u64 {
        self.start_ns + sec as u64 * NS_PER_S
    }
}

/// A one-shot absolute timer; `arm` only issues a syscall when the deadline changes.
pub struct TimerFd {
    fd: OwnedFd,
    armed_ns: u64,
}

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // Timer slack (50 µs by default) would blur the schedule of open models.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        // SAFETY: fd is a fresh, owned descriptor.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed_ns: 0,
        })
    }

    /// Fire at `deadline_ns` (0 disarms); true when that took a system call.
    pub fn arm(&mut self, deadline_ns: u64) -> bool {
        if deadline_ns == self.armed_ns {
            return false;
        }
        self.armed_ns = deadline_ns;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (deadline_ns / NS_PER_S) as libc::time_t,
                tv_nsec: (deadline_ns % NS_PER_S) as libc::c_long,
            },
        };
        // SAFETY: valid fd and itimerspec.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        true
    }

    /// Consume the expiry so that the edge-triggered registration fires again.
    pub fn drain(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a local buffer from a non-blocking fd.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed_ns = 0;
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
