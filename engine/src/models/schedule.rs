//! Arrival times of the open models (rate, sessions): uniform or Poisson, split across threads.

use super::share;
use crate::clock::secs_to_ns;
use crate::plan::Arrival;
use crate::rng::Rng;

/// Arrival times of an open model for one thread, starting at `start_ns`.
pub struct Schedule {
    next_ns: u64,
    end_ns: u64,
    left: u64,
    mean_gap_s: f64,
    arrival: Arrival,
    rng: Rng,
    /// Fractional ns carried between uniform gaps so long runs do not drift.
    uniform_period_ns: f64,
    uniform_k: u64,
    origin_ns: f64,
}

impl Schedule {
    /// `rate_per_s` is the whole run's rate; thread `thread` of `threads` takes every
    /// `threads`-th uniform slot (or an independent Poisson stream of rate/threads).
    #[allow(clippy::too_many_arguments)] // each is one plan field; a struct would only rename them
    pub fn new(
        start_ns: u64,
        rate_per_s: f64,
        duration_s: Option<f64>,
        total: Option<u64>,
        arrival: Arrival,
        thread: usize,
        threads: usize,
        seed: u64,
    ) -> Schedule {
        let per_thread = rate_per_s / threads as f64;
        let mut rng = Rng::new(seed ^ 0xa5a5_0000 ^ thread as u64);
        let end_ns = duration_s.map_or(u64::MAX, |d| start_ns + secs_to_ns(d));
        let left = total.map_or(u64::MAX, |t| share(t, thread, threads));
        let period = 1e9 / per_thread;
        let origin = start_ns as f64 + thread as f64 * 1e9 / rate_per_s;
        let first = match arrival {
            Arrival::Uniform => origin as u64,
            Arrival::Poisson => start_ns + secs_to_ns(rng.exp(1.0 / per_thread)),
        };
        Schedule {
            next_ns: first,
            end_ns,
            left,
            mean_gap_s: 1.0 / per_thread,
            arrival,
            rng,
            uniform_period_ns: period,
            uniform_k: 0,
            origin_ns: origin,
        }
    }

    pub fn peek(&self) -> Option<u64> {
        (self.left > 0 && self.next_ns < self.end_ns).then_some(self.next_ns)
    }

    /// Pop the next arrival if it is due by `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<u64> {
        let t = self.peek().filter(|&t| t <= now)?;
        self.left -= 1;
        self.next_ns = match self.arrival {
            Arrival::Uniform => {
                self.uniform_k += 1;
                (self.origin_ns + self.uniform_k as f64 * self.uniform_period_ns) as u64
            }
            Arrival::Poisson => t + secs_to_ns(self.rng.exp(self.mean_gap_s)),
        };
        Some(t)
    }

    /// Drop every arrival not yet launched; returns how many there were.
    pub fn drain(&mut self) -> u64 {
        let mut n = 0;
        while self.pop_due(u64::MAX - 1).is_some() {
            n += 1;
        }
        n
    }

    pub fn done(&self) -> bool {
        self.peek().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_schedule_is_exact_and_split_across_threads() {
        let mut all = Vec::new();
        for th in 0..2 {
            let mut s = Schedule::new(0, 1000.0, Some(1.0), None, Arrival::Uniform, th, 2, 1);
            while let Some(t) = s.pop_due(u64::MAX - 1) {
                all.push(t);
            }
        }
        all.sort();
        assert_eq!(all.len(), 1000);
        assert!(all.windows(2).all(|w| w[1] - w[0] == 1_000_000
            || w[1] - w[0] == 999_999
            || w[1] - w[0] == 1_000_001));
    }

    #[test]
    fn poisson_schedule_count_is_about_rate() {
        let mut s = Schedule::new(0, 2000.0, Some(5.0), None, Arrival::Poisson, 0, 1, 3);
        let mut n = 0;
        while s.pop_due(u64::MAX - 1).is_some() {
            n += 1;
        }
        assert!((9500..10500).contains(&n), "n {n}");
        let mut s = Schedule::new(0, 10.0, None, Some(7), Arrival::Poisson, 0, 1, 3);
        assert_eq!(std::iter::from_fn(|| s.pop_due(u64::MAX - 1)).count(), 7);
    }
}
