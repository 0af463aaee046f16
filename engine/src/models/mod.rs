//! Load models: each decides when connections open and what each may send; the reactor does the rest.

mod closed;
mod count;
mod rate;
mod sessions;

use crate::clock::secs_to_ns;
use crate::plan::{Arrival, ModelSpec, Plan};
use crate::reactor::{ConnEnd, Reactor};
use crate::rng::Rng;

pub trait Model {
    /// Open the initial connections.
    fn start(&mut self, now: u64, rt: &mut Reactor);
    /// Launch arrivals that are due.
    fn on_timer(&mut self, now: u64, rt: &mut Reactor);
    /// Next arrival time, if any (needs precise wake-up).
    fn next_due_ns(&self) -> Option<u64>;
    /// A connection ended: reconnect, resume a user later, or let it go.
    fn on_conn_end(&mut self, end: ConnEnd, now: u64, rt: &mut Reactor);
    /// The model will open nothing more (the run ends once the reactor is idle too).
    fn finished(&self, now: u64, rt: &Reactor) -> bool;
    /// The run hit its hard stop: drop what was never launched and say how many requests that was.
    fn abandon(&mut self) -> u64 {
        0
    }
}

/// This thread's share of a total: `total / threads`, the remainder going to the first threads.
pub fn share(total: u64, thread: usize, threads: usize) -> u64 {
    let (t, n) = (thread as u64, threads as u64);
    total / n + u64::from(t < total % n)
}

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

pub fn make(plan: &Plan, thread: usize, start_ns: u64) -> Box<dyn Model> {
    let threads = plan.threads;
    match plan.model {
        ModelSpec::Closed {
            connections,
            duration_s,
            pipeline,
        } => Box::new(closed::Closed::new(
            share(connections, thread, threads),
            start_ns + secs_to_ns(duration_s),
            pipeline,
        )),
        ModelSpec::Count {
            requests,
            concurrency,
        } => {
            // Only threads that get a worker get requests, or a worker-less thread would wait forever.
            let busy = threads.min(concurrency as usize);
            let (n, c) = if thread < busy {
                (
                    share(requests, thread, busy),
                    share(concurrency, thread, busy),
                )
            } else {
                (0, 0)
            };
            Box::new(count::Count::new(n, c))
        }
        ModelSpec::Rate {
            rate,
            duration_s,
            connections_total,
            arrival,
            calls,
            pipeline,
        } => Box::new(rate::Rate::new(
            Schedule::new(
                start_ns,
                rate,
                duration_s,
                connections_total,
                arrival,
                thread,
                threads,
                plan.seed,
            ),
            calls,
            pipeline,
        )),
        ModelSpec::Sessions {
            users_per_s,
            duration_s,
            requests,
            think_s,
            arrival,
        } => Box::new(sessions::Sessions::new(
            Schedule::new(
                start_ns,
                users_per_s,
                Some(duration_s),
                None,
                arrival,
                thread,
                threads,
                plan.seed,
            ),
            requests,
            secs_to_ns(think_s),
        )),
    }
}

/// Latest time a run of this plan may take: the model's own span plus every timeout that can follow.
pub fn hard_stop_ns(plan: &Plan, start_ns: u64) -> u64 {
    let t = plan.timeout_s;
    let ct = plan.connect_timeout_s;
    let grace = 0.25;
    let span_s = match plan.model {
        ModelSpec::Closed { duration_s, .. } => duration_s + ct.max(t),
        ModelSpec::Rate {
            rate,
            duration_s,
            connections_total,
            calls,
            ..
        } => {
            let d = duration_s
                .unwrap_or(f64::INFINITY)
                .min(connections_total.map_or(f64::INFINITY, |n| n as f64 / rate));
            d + ct + calls as f64 * t
        }
        ModelSpec::Sessions {
            duration_s,
            requests,
            think_s,
            ..
        } => duration_s + ct + requests as f64 * (think_s + t) + (ct + t),
        ModelSpec::Count {
            requests,
            concurrency,
        } => {
            let rounds = requests.div_ceil(concurrency) as f64;
            rounds * (ct + t)
        }
    };
    start_ns.saturating_add(secs_to_ns((span_s + grace).min(1e9)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_total() {
        for total in [0u64, 1, 7, 100] {
            for threads in 1..5 {
                assert_eq!(
                    (0..threads).map(|t| share(total, t, threads)).sum::<u64>(),
                    total
                );
            }
        }
    }

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
