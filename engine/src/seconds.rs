//! One second of a thread's timeline (by completion time), what completed within the measured
//! window and after it, and one engine thread's CPUs and CPU time: what the per-second,
//! per-window and per-thread accounts of the result are built from.

use hdrhistogram::Histogram;

use crate::clock::Stamp;
use crate::stats::Errors;

/// One second of the timeline, by completion time.
#[derive(Default)]
pub struct Second {
    pub completed: u64,
    pub ok: u64,
    pub errors: Errors,
    /// Requests re-sent after an unannounced close in this second.
    pub resent: u64,
    pub open_connections: u64,
    /// Every request that ended in the second, failures at the time they failed (None: none).
    pub latency_us: Option<Histogram<u64>>,
    /// Engine CPU time charged to this second, and the wall time it was measured over
    /// (both summed over threads).
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// The trace model: requests due in this second (by their intended time), launched.
    pub arrivals: u64,
    /// The busiest thread's CPU share in this second (one thread saturated among idle ones
    /// limits the load as much as all of them saturated).
    pub busiest_cpu: f64,
}

impl Second {
    /// Fraction of one core per engine thread during the second (0 when not measured).
    pub fn engine_cpu(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.cpu_ns as f64 / self.wall_ns as f64
        }
    }

    /// The share the saturation rule reads: the busiest thread's (the average when a thread's
    /// own share was not measured).
    pub fn saturation_cpu(&self) -> f64 {
        self.busiest_cpu.max(self.engine_cpu())
    }
}

/// One engine thread: the CPUs it runs on as the kernel reports them (read back after pinning),
/// and the CPU and wall time it used.
#[derive(Clone, Debug, Default)]
pub struct ThreadCpu {
    pub thread: usize,
    pub cpus: Vec<usize>,
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// The replies this thread received (its own share of the load).
    pub responses: u64,
}

impl ThreadCpu {
    pub fn fraction(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.cpu_ns as f64 / self.wall_ns as f64
        }
    }
}

/// Outcomes against the measured window.
#[derive(Default, Clone, Copy)]
pub struct Window {
    /// Valid replies completed within the window.
    pub ok_in: u64,
    /// Replies (ok or not) completed within the window.
    pub responses_in: u64,
    /// Replies (ok or not) completed after the window, while in-flight requests drained.
    pub completed_after: u64,
    /// When the last request ended (reply or error), in ns since the start.
    pub last_completion_ns: u64,
}

impl Window {
    pub fn completion(&mut self, at: Stamp) {
        self.last_completion_ns = self.last_completion_ns.max(at.offset_ns);
    }

    pub fn merge(&mut self, o: &Window) {
        self.ok_in += o.ok_in;
        self.responses_in += o.responses_in;
        self.completed_after += o.completed_after;
        self.last_completion_ns = self.last_completion_ns.max(o.last_completion_ns);
    }
}
