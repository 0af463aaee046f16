//! Runs a plan: one event loop per thread (pinned when asked), merges their stats, measures CPU cost.

use std::sync::{Arc, Barrier, Mutex};

use crate::clock::{now_ns, secs_to_ns, Timeline, NS_PER_S};
use crate::h2::encoder::FieldTable;
use crate::http::build_request;
use crate::models::{self, Model};
use crate::plan::Plan;
use crate::reactor::{Config, H2Config, H2Kind, KindConfig, Reactor, TlsSetup, WsConfig};
use crate::stats::{ThreadCpu, ThreadStats};
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
    /// The I/O backend the threads ran on, and why `auto` did not pick io_uring if it did not.
    pub io_backend: &'static str,
    pub io_note: Option<String>,
}

/// The reactor's settings for `plan`; Err: its TLS trust could not be read.
pub fn config_of(plan: &Plan) -> Result<Config, String> {
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
            // A WebSocket message is never sent twice.
            idempotent: plan.websocket.is_none()
                && ["GET", "HEAD"]
                    .iter()
                    .any(|m| r.method.eq_ignore_ascii_case(m)),
            expect_status: r.expect_status,
            expect: r.expect.clone(),
        })
        .collect();
    let tls = plan.tls.as_ref().map(|t| tls_setup(plan, t)).transpose()?;
    Ok(Config {
        addr: plan.addr,
        kinds,
        weights: plan.requests.iter().map(|r| r.weight).collect(),
        timeout_ns: secs_to_ns(plan.timeout_s),
        connect_timeout_ns: secs_to_ns(plan.connect_timeout_s),
        close_each: !plan.keep_alive,
        open_model: plan.model.is_open(),
        spread_source: plan.spread_source,
        linger_zero: plan.linger_zero,
        ws: plan.websocket.as_ref().map(|w| WsConfig {
            message_bytes: w.message_bytes,
            path: plan.requests[0].path.clone(),
            host: host.clone(),
            headers: plan.requests[0].headers.clone(),
        }),
        h2: plan.http2.as_ref().map(|h| {
            let scheme = if plan.tls.is_some() { "https" } else { "http" };
            let mut table = FieldTable::default();
            let kinds = plan
                .requests
                .iter()
                .map(|r| H2Kind {
                    fields: table.request(&r.method, scheme, &r.path, &host, &r.headers),
                    body: r.body.clone(),
                })
                .collect();
            H2Config {
                streams: h.streams,
                window: h.window_bytes,
                kinds,
                table,
            }
        }),
        tls,
    })
}

/// The TLS client every connection of `plan` starts from: ALPN offers h2 for HTTP/2 loads,
/// http/1.1 for HTTP/1.1 ones, nothing for HTTP/1.0.
fn tls_setup(plan: &Plan, t: &crate::plan::TlsSpec) -> Result<TlsSetup, String> {
    let alpn: &[&[u8]] = match (&plan.http2, plan.http_minor) {
        (Some(_), _) => &[b"h2"],
        (None, 1) => &[b"http/1.1"],
        (None, _) => &[],
    };
    Ok(TlsSetup {
        config: crate::tls::client_config(t, alpn)?,
        name: crate::tls::server_name(t),
    })
}

pub fn run(plan: &Plan) -> std::io::Result<RunOutcome> {
    run_after(plan, || Ok(()))
}

/// Run a plan once `gate` returns: everything is set up before it, no connection is opened.
pub fn run_after(
    plan: &Plan,
    gate: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<RunOutcome> {
    let nofile_limit = sys::make_room_for_fds();
    check_pinning(plan)?;
    let cfg = Arc::new(config_of(plan).map_err(std::io::Error::other)?);
    gate()?;
    let (u0, s0) = sys::cpu_times_s();
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let start_ns = now_ns();
    let fanout = &crate::broadcast::Shared::default();
    // Every thread pins itself and reads its mask back before any of them opens a connection:
    // one that did not get its CPUs fails the run before load.
    let ready = &Barrier::new(plan.threads.max(1));
    let refused: &Mutex<Option<String>> = &Mutex::new(None);
    let results: Vec<std::io::Result<Finished>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.threads)
            .map(|t| {
                let cfg = Arc::clone(&cfg);
                scope.spawn(move || thread_run(plan, cfg, t, start_ns, (ready, refused), fanout))
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
    let (mut io_backend, mut io_note) = ("epoll", None);
    for r in results {
        let f = r?;
        stats.merge(&f.stats);
        io_backend = f.io_backend;
        io_note = io_note.or(f.io_note);
    }
    Ok(RunOutcome {
        stats,
        started_unix_s,
        elapsed_s,
        user_s: u1 - u0,
        sys_s: s1 - s0,
        nofile_limit,
        max_rss_kib: sys::max_rss_kib(),
        io_backend,
        io_note,
    })
}

/// One engine thread: pinned and its mask read back, then, once every thread has its CPUs (the
/// barrier; the first refusal fails them all), its load model; its CPU time and CPUs in its stats.
fn thread_run(
    plan: &Plan,
    cfg: Arc<Config>,
    t: usize,
    start_ns: u64,
    (ready, refused): (&Barrier, &Mutex<Option<String>>),
    fanout: &crate::broadcast::Shared,
) -> std::io::Result<Finished> {
    let cpus = match sys::pin_verified(&thread_cpus(plan, t)) {
        Ok(cpus) => cpus,
        Err(e) => {
            let mut first = refused.lock().expect("not poisoned");
            first.get_or_insert(format!("engine thread {t}: {e}"));
            Vec::new()
        }
    };
    ready.wait();
    if let Some(e) = refused.lock().expect("not poisoned").clone() {
        return Err(std::io::Error::other(e));
    }
    let (cpu0, wall0) = (sys::thread_cpu_ns(), now_ns());
    let mut done = if matches!(plan.model, crate::plan::ModelSpec::Broadcast { .. }) {
        crate::broadcast::worker(plan, &cfg, t, start_ns, fanout)
    } else {
        worker(plan, cfg, t, start_ns)
    }?;
    done.stats.threads = vec![ThreadCpu {
        thread: t,
        cpus,
        cpu_ns: sys::thread_cpu_ns().saturating_sub(cpu0),
        wall_ns: now_ns().saturating_sub(wall0),
        responses: done.stats.kinds.iter().map(|k| k.responses).sum(),
    }];
    // One thread's timeline: its busiest thread is itself.
    for s in &mut done.stats.timeline {
        s.busiest_cpu = s.engine_cpu();
    }
    Ok(done)
}

/// The CPUs engine thread `t` runs on: one CPU each when there are several threads, so threads
/// do not share a core; the plan's whole set for a single thread (none: not pinned).
pub fn thread_cpus(plan: &Plan, t: usize) -> Vec<usize> {
    if plan.cpus.is_empty() {
        Vec::new()
    } else if plan.threads > 1 {
        vec![plan.cpus[t % plan.cpus.len()]]
    } else {
        plan.cpus.clone()
    }
}

/// Before anything else: the main thread pinned to the plan's CPUs and every thread's set tried
/// and read back on it, so a CPU that does not exist (or that this process may not use) stops
/// the run with the reason, before load.
fn check_pinning(plan: &Plan) -> std::io::Result<()> {
    let refuse = |e: String| std::io::Error::other(format!("engine pinning: {e}"));
    for t in 0..plan.threads {
        sys::pin_verified(&thread_cpus(plan, t)).map_err(|e| refuse(format!("thread {t}: {e}")))?;
    }
    sys::pin_verified(&plan.cpus).map_err(refuse)?;
    Ok(())
}

/// What one thread hands back.
pub struct Finished {
    pub stats: ThreadStats,
    pub io_backend: &'static str,
    pub io_note: Option<String>,
}

fn worker(
    plan: &Plan,
    cfg: Arc<Config>,
    thread: usize,
    start_ns: u64,
) -> std::io::Result<Finished> {
    let window_end_ns = models::window_s(plan).map_or(u64::MAX, |w| start_ns + secs_to_ns(w));
    let timeline = Timeline::new(start_ns, window_end_ns);
    let seed = plan
        .seed
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(thread as u64);
    let rt =
        Reactor::new(cfg, seed, timeline, (thread as u32) * 61, plan.engine_io).map_err(|e| {
            std::io::Error::new(e.kind(), format!("engine_io {:?}: {e}", plan.engine_io))
        })?;
    Worker {
        rt,
        model: models::make(plan, thread, start_ns),
        timeline,
        hard_stop: models::hard_stop_ns(plan, start_ns),
    }
    .run()
}

/// The thread's CPU time, sampled at the first look at the clock in each timeline second.
pub struct CpuSampler {
    sec: usize,
    wall_ns: u64,
    cpu_ns: u64,
}

impl CpuSampler {
    pub fn new(now: u64, sec: usize) -> CpuSampler {
        CpuSampler {
            sec,
            wall_ns: now,
            cpu_ns: sys::thread_cpu_ns(),
        }
    }

    /// In a new second (or at the end, `last`), charge the CPU time used since the previous
    /// sample, and the wall time it took, to the second that sample was taken in. The loop
    /// wakes at every second's start, so that is close to the second the time belongs to.
    pub fn sample(&mut self, now: u64, sec: usize, stats: &mut ThreadStats, last: bool) {
        if sec == self.sec && !last {
            return;
        }
        let cpu = sys::thread_cpu_ns();
        let s = stats.second(self.sec);
        s.cpu_ns += cpu.saturating_sub(self.cpu_ns);
        s.wall_ns += now.saturating_sub(self.wall_ns);
        *self = CpuSampler {
            sec,
            wall_ns: now,
            cpu_ns: cpu,
        };
    }
}

/// One thread's event loop: the reactor and its model.
struct Worker {
    rt: Reactor,
    model: Box<dyn Model>,
    timeline: Timeline,
    hard_stop: u64,
}

impl Worker {
    fn run(mut self) -> std::io::Result<Finished> {
        let mut ended = Vec::new();
        let t0 = now_ns();
        let mut cpu = CpuSampler::new(t0, self.timeline.second_of(t0));
        self.model.start(t0, &mut self.rt);
        loop {
            let now = now_ns();
            self.rt.expire(now);
            self.model.on_timer(now, &mut self.rt);
            // Only the ends present now: a reconnect that fails at once is handled next round,
            // so a refused port can not spin this loop without re-reading the clock.
            std::mem::swap(&mut ended, &mut self.rt.ended);
            for e in ended.drain(..) {
                self.model.on_conn_end(e, now, &mut self.rt);
            }
            let sec = self.timeline.second_of(now);
            cpu.sample(now, sec, &mut self.rt.stats, false);
            let open = self.rt.open_conns();
            let s = self.rt.stats.second(sec);
            s.open_connections = s.open_connections.max(open);
            if self.model.finished(now, &self.rt) && self.rt.idle() {
                break;
            }
            if now >= self.hard_stop {
                self.rt.abort_all(now);
                self.rt.stats.abandoned += self.model.abandon();
                break;
            }
            let model = &mut self.model;
            let paced = self.rt.submit_paced(|rt, now| {
                rt.expire_schedule(now);
                model.on_timer(now, rt);
            });
            if paced {
                continue; // the clock moved on: look at the schedule and the ends again
            }
            let (precise, coarse) = self.wake_at(sec);
            let now_only = !self.rt.ended.is_empty();
            self.rt.wait(now, precise, coarse, now_only)?;
            let model = &mut self.model;
            self.rt.dispatch(|rt, now| {
                rt.expire_schedule(now);
                model.on_timer(now, rt);
            });
        }
        let now = now_ns();
        cpu.sample(now, self.timeline.second_of(now), &mut self.rt.stats, true);
        let io_backend = self.rt.io_backend();
        let io_note = self.rt.io_note.take();
        self.rt.finish();
        Ok(Finished {
            stats: std::mem::replace(&mut self.rt.stats, ThreadStats::new(0)),
            io_backend,
            io_note,
        })
    }

    /// When to wake: for the schedule (precisely), and for timeouts, the next timeline second
    /// and the hard stop (coarsely).
    fn wake_at(&mut self, sec: usize) -> (Option<u64>, u64) {
        let precise = [self.model.next_due_ns(), self.rt.next_precise_ns()]
            .into_iter()
            .flatten()
            .min();
        let next_second = self.timeline.second_start_ns(sec + 1);
        let coarse = [
            self.rt.next_coarse_ns(),
            Some(next_second),
            Some(self.hard_stop),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(self.hard_stop);
        (precise, coarse)
    }
}
