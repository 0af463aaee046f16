//! Timing bounds that only quiet CPUs keep (a turnaround under 1 ms, a wake-up within 5 ms, a
//! latency within 10 % of the stall's arithmetic): the machine's other work is measured around
//! the test, and a bound that fails while other work took the CPUs fails as "the machine was
//! busy: …" with what took them, never with the wrong figure alone. Other work is every CPU's
//! busy time (/proc/stat: user, nice, system, irq, softirq) less this test process's own CPU
//! time (the engine, the in-process test servers and any test running beside), plus the time
//! the hypervisor stole. A bound that fails on a quiet machine fails as it is.

use std::fmt;
use std::time::Instant;

/// Other work at or above this share of the machine's CPUs makes it busy: the share at which
/// wsgibench calls a repeat contended (machine/cpustat.py CONTENDED_PCT).
pub const BUSY_PCT: f64 = 5.0;

/// The machine's CPU time so far: (busy, stolen) seconds over every CPU, and how many CPUs.
fn machine_s() -> (f64, f64, usize) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    // SAFETY: sysconf has no preconditions.
    let tick = 1.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let (mut busy, mut steal, mut cpus) = (0.0, 0.0, 0);
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some(name) if name.starts_with("cpu") && name != "cpu" => cpus += 1,
            _ => continue,
        }
        let t: Vec<f64> = words.map(|w| w.parse().unwrap_or(0.0)).collect();
        let at = |i: usize| t.get(i).copied().unwrap_or(0.0);
        busy += (at(0) + at(1) + at(2) + at(5) + at(6)) * tick;
        steal += at(7) * tick;
    }
    (busy, steal, cpus.max(1))
}

/// This process's own CPU seconds so far (every thread).
fn own_s() -> f64 {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// What others took of the machine over a window.
#[derive(Clone, Copy, Debug)]
pub struct OtherWork {
    pub wall_s: f64,
    pub cpus: usize,
    pub other_s: f64,
    pub steal_s: f64,
}

impl OtherWork {
    pub fn pct(&self) -> f64 {
        100.0 * (self.other_s + self.steal_s) / (self.wall_s * self.cpus as f64).max(1e-9)
    }

    pub fn busy(&self) -> bool {
        self.pct() >= BUSY_PCT
    }
}

impl fmt::Display for OtherWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "other work took {:.1} % of the {} CPU(s) over {:.2} s (other processes {:.2} CPU-s, \
             steal {:.2} s)",
            self.pct(),
            self.cpus,
            self.wall_s,
            self.other_s,
            self.steal_s
        )
    }
}

/// A window from `start` on.
pub struct Quiet {
    began: Instant,
    busy_s: f64,
    steal_s: f64,
    own_s: f64,
}

impl Quiet {
    pub fn start() -> Self {
        let (busy_s, steal_s, _) = machine_s();
        Quiet {
            began: Instant::now(),
            busy_s,
            steal_s,
            own_s: own_s(),
        }
    }

    /// Other work since `start`: the machine's busy time less this process's own, and steal.
    pub fn so_far(&self) -> OtherWork {
        let (busy, steal, cpus) = machine_s();
        let own = own_s() - self.own_s;
        OtherWork {
            wall_s: self.began.elapsed().as_secs_f64(),
            cpus,
            other_s: (busy - self.busy_s - own).max(0.0),
            steal_s: (steal - self.steal_s).max(0.0),
        }
    }

    /// A timing bound: when `ok` is false, panics with `what`, said as the machine being busy
    /// when other work took the CPUs since `start`.
    #[track_caller]
    pub fn bound(&self, ok: bool, what: impl FnOnce() -> String) {
        if ok {
            return;
        }
        let work = self.so_far();
        if work.busy() {
            panic!(
                "the machine was busy: {work}; the bound it broke: {}",
                what()
            );
        }
        panic!("{}", what());
    }
}
