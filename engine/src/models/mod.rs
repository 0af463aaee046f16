//! Load models: each decides when connections open and what each may send; the reactor does the rest.

mod closed;
mod count;
mod pool;
mod rate;
mod schedule;
mod sessions;
mod trace;

use crate::clock::secs_to_ns;
use crate::plan::{Arrival, ModelSpec, Plan};
use crate::reactor::{ConnEnd, Reactor};
pub use schedule::Schedule;
pub use trace::add_arrivals;

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

/// Thread `thread`'s schedule of an open model (rate, duration, total, arrival).
fn schedules(
    plan: &Plan,
    thread: usize,
    start_ns: u64,
) -> impl Fn(f64, Option<f64>, Option<u64>, Arrival) -> Schedule + '_ {
    move |rate, duration_s, total, arrival| {
        Schedule::new(
            start_ns + plan.phase_ns,
            rate,
            duration_s,
            total,
            arrival,
            thread,
            plan.threads,
            plan.seed,
        )
    }
}

pub fn make(plan: &Plan, thread: usize, start_ns: u64) -> Box<dyn Model> {
    let threads = plan.threads;
    let schedule = schedules(plan, thread, start_ns);
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
        } => Box::new(count::Count::for_thread(
            requests,
            concurrency,
            thread,
            threads,
        )),
        ModelSpec::Rate {
            rate,
            duration_s,
            connections_total,
            arrival,
            calls,
            pipeline,
            pool,
        } => {
            let schedule = schedule(rate, duration_s, connections_total, arrival);
            match pool {
                Some(size) => Box::new(pool::Pool::new(schedule, share(size, thread, threads))),
                None => Box::new(rate::Rate::new(schedule, calls, pipeline)),
            }
        }
        ModelSpec::Sessions {
            users_per_s,
            duration_s,
            requests,
            think_s,
            arrival,
        } => Box::new(sessions::Sessions::new(
            schedule(users_per_s, Some(duration_s), None, arrival),
            requests,
            secs_to_ns(think_s),
        )),
        ModelSpec::Trace(ref spec) => Box::new(trace::Trace::new(spec, thread, threads, start_ns)),
        ModelSpec::Broadcast { .. } => unreachable!("a broadcast runs in broadcast::run"),
    }
}

/// The measured window in seconds: the closed model's duration, the span of an open model's
/// schedule (its duration, or connections_total / rate when that ends it sooner); None for
/// `count`, whose window ends at its last completion.
pub fn window_s(plan: &Plan) -> Option<f64> {
    match plan.model {
        ModelSpec::Closed { duration_s, .. }
        | ModelSpec::Sessions { duration_s, .. }
        | ModelSpec::Broadcast { duration_s, .. } => Some(duration_s),
        ModelSpec::Rate {
            rate,
            duration_s,
            connections_total,
            ..
        } => Some(
            duration_s
                .unwrap_or(f64::INFINITY)
                .min(connections_total.map_or(f64::INFINITY, |n| n as f64 / rate)),
        ),
        ModelSpec::Trace(ref t) => Some(t.window_s()),
        ModelSpec::Count { .. } => None,
    }
}

/// Latest time a run of this plan may take: the model's own span plus every timeout that can follow.
pub fn hard_stop_ns(plan: &Plan, start_ns: u64) -> u64 {
    let t = plan.timeout_s;
    let ct = plan.connect_timeout_s;
    let grace = 0.25;
    let span_s = match plan.model {
        ModelSpec::Closed { duration_s, .. } => duration_s + ct.max(t),
        ModelSpec::Rate { calls, .. } => {
            window_s(plan).unwrap_or(f64::INFINITY) + ct + calls as f64 * t
        }
        ModelSpec::Trace(ref tr) => tr.window_s() + ct + t,
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
        // Connecting, publishing, then the last messages' delivery.
        ModelSpec::Broadcast { duration_s, .. } => ct + duration_s + t,
    };
    // A WebSocket connection's upgrade has the request timeout of its own.
    let upgrade_s = if plan.websocket.is_some() { t } else { 0.0 };
    start_ns.saturating_add(secs_to_ns((span_s + upgrade_s + grace).min(1e9)))
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
}
