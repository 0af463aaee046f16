//! Runs a plan: one event loop per thread (pinned when asked), merges their stats, measures CPU cost.

use std::sync::Arc;
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest};

use crate::clock::{now_ns, secs_to_ns, TimerFd, NS_PER_S};
use crate::http::build_request;
use crate::models;
use crate::plan::Plan;
use crate::reactor::{Config, KindConfig, Reactor, TIMER_TOKEN};
use crate::stats::ThreadStats;
use crate::sys;

/// Everything a result is built from.
pub struct RunOutcome {
    pub stats: ThreadStats,
    pub started_unix_s: f64,
    pub elapsed_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub nofile_limit: u64,
    pub max_rss_kib: u64,
    pub pin_error: Option<String>,
}

pub fn config_of(plan: &Plan) -> Config {
    let host = plan.host_header();
    let kinds = plan
        .requests
        .iter()
        .map(|r| KindConfig {
            bytes: build_request(
                &r.method,
                &r.path,
                &host,
                &r.headers,
                &r.body,
                plan.http_minor,
                plan.keep_alive,
            ),
            head_request: r.method.eq_ignore_ascii_case("HEAD"),
            expect_status: r.expect_status,
            expect: r.expect.clone(),
        })
        .collect();
    Config {
        addr: plan.addr,
        kinds,
        weights: plan.requests.iter().map(|r| r.weight).collect(),
        timeout_ns: secs_to_ns(plan.timeout_s),
        connect_timeout_ns: secs_to_ns(plan.connect_timeout_s),
        close_each: !plan.keep_alive,
        open_model: plan.model.is_open(),
        spread_source: plan.spread_source,
        linger_zero: plan.linger_zero,
    }
}

/// How many socket events are handled between two looks at the clock and the schedule.
const EVENTS_PER_SCHEDULE_CHECK: usize = 32;

pub fn run(plan: &Plan) -> std::io::Result<RunOutcome> {
    let nofile_limit = sys::raise_nofile();
    let pin_error = sys::pin_current_thread(&plan.cpus)
        .err()
        .map(|e| format!("sched_setaffinity: {e}"));
    let cfg = Arc::new(config_of(plan));
    let (u0, s0) = sys::cpu_times_s();
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let start_ns = now_ns();
    let results: Vec<std::io::Result<ThreadStats>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.threads)
            .map(|t| {
                let cfg = Arc::clone(&cfg);
                scope.spawn(move || {
                    if !plan.cpus.is_empty() {
                        // One CPU per thread when there are enough, so threads do not share a core.
                        let cpu = [plan.cpus[t % plan.cpus.len()]];
                        let _ = sys::pin_current_thread(if plan.threads > 1 {
                            &cpu
                        } else {
                            &plan.cpus
                        });
                    }
                    worker(plan, cfg, t, start_ns)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread panicked"))
            .collect()
    });
    let elapsed_s = (now_ns() - start_ns) as f64 / NS_PER_S as f64;
    let (u1, s1) = sys::cpu_times_s();
    let mut stats = ThreadStats::new(plan.requests.len());
    for r in results {
        stats.merge(&r?);
    }
    Ok(RunOutcome {
        stats,
        started_unix_s,
        elapsed_s,
        user_s: u1 - u0,
        sys_s: s1 - s0,
        nofile_limit,
        max_rss_kib: sys::max_rss_kib(),
        pin_error,
    })
}

fn worker(
    plan: &Plan,
    cfg: Arc<Config>,
    thread: usize,
    start_ns: u64,
) -> std::io::Result<ThreadStats> {
    let seed = plan
        .seed
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(thread as u64);
    let mut rt = Reactor::new(cfg, seed, start_ns, (thread as u32) * 61)?;
    let mut timer = TimerFd::new()?;
    rt.poll.registry().register(
        &mut SourceFd(&timer.raw_fd()),
        TIMER_TOKEN,
        Interest::READABLE,
    )?;
    let mut model = models::make(plan, thread, start_ns);
    let hard_stop = models::hard_stop_ns(plan, start_ns);
    let mut events = Events::with_capacity(1024);
    let mut ended = Vec::new();
    model.start(now_ns(), &mut rt);
    loop {
        let now = now_ns();
        rt.expire(now);
        model.on_timer(now, &mut rt);
        // Only the ends present now: a reconnect that fails at once is handled next round,
        // so a refused port can not spin this loop without re-reading the clock.
        std::mem::swap(&mut ended, &mut rt.ended);
        for e in ended.drain(..) {
            model.on_conn_end(e, now, &mut rt);
        }
        let sec = rt.second_of(now);
        let open = rt.open_conns;
        let s = rt.stats.second(sec);
        s.open_connections = s.open_connections.max(open);
        if model.finished(now, &rt) && rt.idle() {
            break;
        }
        if now >= hard_stop {
            rt.abort_all(now);
            rt.stats.abandoned += model.abandon();
            break;
        }
        // Wake for: schedule (precisely, via timerfd), timeouts, the next timeline second, hard stop.
        let precise = [model.next_due_ns(), rt.next_precise_ns()]
            .into_iter()
            .flatten()
            .min();
        let next_second = start_ns + (sec as u64 + 1) * NS_PER_S;
        let coarse = [rt.next_coarse_ns(), Some(next_second), Some(hard_stop)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(hard_stop);
        let timeout = if !rt.ended.is_empty() {
            Some(Duration::ZERO)
        } else {
            match precise {
                Some(p) if p <= now => Some(Duration::ZERO),
                Some(p) if p < coarse => {
                    timer.arm(p);
                    // The timerfd wakes us precisely; the poll timeout is only a backstop.
                    Some(Duration::from_nanos(coarse.saturating_sub(now)))
                }
                _ => Some(Duration::from_nanos(coarse.saturating_sub(now))),
            }
        };
        if let Err(e) = rt.poll.poll(&mut events, timeout) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let mut now = now_ns();
        for (i, ev) in events.iter().enumerate() {
            if i % EVENTS_PER_SCHEDULE_CHECK == EVENTS_PER_SCHEDULE_CHECK - 1 {
                // A full batch of connects and closes takes milliseconds: keep the schedule
                // (arrivals, think timers) going in between instead of after the whole batch.
                now = now_ns();
                rt.expire_schedule(now);
                model.on_timer(now, &mut rt);
            }
            if ev.token() == TIMER_TOKEN {
                timer.drain();
            } else {
                rt.handle_event(ev, now);
            }
        }
    }
    Ok(rt.stats)
}
