//! WebSocket broadcast loads (engine addition): `subscribers` connections upgrade and listen,
//! one publisher (on thread 0) sends messages at a rate once every subscriber is open or has
//! failed, and every message is due at every subscriber that was open when publishing started.
//!
//! Each message carries its number and when it was due, so a subscriber on any thread knows
//! its latency (receipt minus due time: the publisher's lag included, as in the open models)
//! and which messages it missed: a delivery is a response (ok, or bad_body when altered), a
//! message never received a `message_lost` error, one received again or after a later one a
//! duplicate. After the last message, subscribers wait up to `timeout_s` for what is still on
//! its way. Runs on epoll over plain TCP; the threads share only the atomics in [`Shared`].

mod link;
mod publish;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};

use crate::clock::{now_ns, secs_to_ns, Timeline};
use crate::net::{connect_error_class, start_connect, ConnectStart, SourceSpread};
use crate::plan::{ModelSpec, Plan};
use crate::reactor::Config;
use crate::runner::{CpuSampler, Finished};
use crate::stats::{ErrorClass, ThreadStats};
use crate::ws::{self, BroadcastStats};
use link::{Link, State};
use publish::Publisher;

const PUBLISHER: Token = Token(usize::MAX - 1);
/// How long a thread sleeps at most while it waits on the others.
const NAP: Duration = Duration::from_millis(5);

/// What the threads of a broadcast run tell each other.
#[derive(Default)]
pub struct Shared {
    /// Subscribers open or failed (publishing starts when all are).
    settled: AtomicU64,
    /// When publishing started (0: not yet).
    start_ns: AtomicU64,
    /// Messages published, final once `done`.
    published: AtomicU64,
    done: AtomicBool,
}

/// One subscriber and what this thread knows of it.
struct Sub {
    /// None: the connect failed at once (counted).
    link: Option<Link>,
    /// Open or failed, told to `Shared::settled`.
    settled: bool,
    /// Its upgrade opened a WebSocket.
    opened: bool,
    /// Opened before publishing started: every message is due at it.
    counted: bool,
    /// The number of the message due next, and messages received (ok or altered) in order.
    next: u64,
    got: u64,
}

struct Fanout<'a> {
    plan: &'a Plan,
    cfg: &'a Config,
    shared: &'a Shared,
    poll: Poll,
    subs: Vec<Sub>,
    publisher: Option<Publisher>,
    stats: ThreadStats,
    bstats: BroadcastStats,
    timeline: Timeline,
    scratch: Vec<u8>,
    /// Until when connects and upgrades may take, and the run's hard stop.
    settle_by: u64,
    hard_stop: u64,
    /// When this thread saw publishing start and end.
    started: Option<u64>,
    done_at: Option<u64>,
    /// The subscribers not open by the settle time (or the start) have been failed.
    expired: bool,
    len: usize,
    duration_ns: u64,
}

fn params(plan: &Plan) -> (u64, f64, f64) {
    match plan.model {
        ModelSpec::Broadcast {
            subscribers,
            publish_rate,
            duration_s,
        } => (subscribers, publish_rate, duration_s),
        _ => unreachable!("a broadcast plan"),
    }
}

/// One thread of a broadcast run: its share of the subscribers, and the publisher on thread 0.
pub fn worker(
    plan: &Plan,
    cfg: &Config,
    thread: usize,
    start_ns: u64,
    shared: &Shared,
) -> io::Result<Finished> {
    let (subscribers, rate, duration_s) = params(plan);
    let mine = crate::models::share(subscribers, thread, plan.threads);
    let settle_by = start_ns + secs_to_ns(plan.connect_timeout_s) + secs_to_ns(plan.timeout_s);
    let mut f = Fanout {
        plan,
        cfg,
        shared,
        poll: Poll::new()?,
        subs: Vec::with_capacity(mine as usize),
        publisher: None,
        stats: ThreadStats::new(plan.requests.len()),
        bstats: BroadcastStats {
            subscribers: mine,
            ..BroadcastStats::default()
        },
        timeline: Timeline::new(start_ns, start_ns + secs_to_ns(duration_s)),
        scratch: vec![0; 64 * 1024],
        settle_by,
        hard_stop: crate::models::hard_stop_ns(plan, start_ns),
        started: None,
        done_at: None,
        expired: false,
        len: cfg.ws.as_ref().expect("a websocket load").message_bytes,
        duration_ns: secs_to_ns(duration_s),
    };
    f.connect_all(mine, thread, rate, duration_s)?;
    f.run()?;
    f.finish();
    let mut stats = f.stats;
    stats.ws.broadcast = Some(f.bstats);
    Ok(Finished {
        stats,
        io_backend: "epoll",
        io_note: (plan.engine_io == crate::plan::EngineIo::Auto)
            .then(|| "broadcast loads run on epoll".to_owned()),
    })
}

impl Fanout<'_> {
    /// Start connecting this thread's subscribers and, on thread 0, the publisher.
    fn connect_all(&mut self, n: u64, thread: usize, rate: f64, duration_s: f64) -> io::Result<()> {
        let mut spread =
            SourceSpread::new(self.cfg.addr, self.cfg.spread_source, (thread as u32) * 61);
        let seed = self
            .plan
            .seed
            .wrapping_mul(0x9e37_79b9)
            .wrapping_add(thread as u64);
        let now = now_ns();
        for i in 0..n {
            let link = self.connect(&mut spread, seed ^ (i << 20), Token(i as usize), now)?;
            let settled = link.is_none();
            self.subs.push(Sub {
                link,
                settled,
                opened: false,
                counted: false,
                next: 0,
                got: 0,
            });
            if settled {
                self.shared.settled.fetch_add(1, Ordering::AcqRel);
            }
        }
        if thread == 0 {
            match self.connect(&mut spread, !seed, PUBLISHER, now)? {
                Some(link) => self.publisher = Some(Publisher::new(link, rate, duration_s)),
                None => self.shared.done.store(true, Ordering::Release),
            }
        }
        Ok(())
    }

    /// A connection under way, or None when the connect failed at once (its error counted);
    /// Err only when the poll itself fails.
    fn connect(
        &mut self,
        spread: &mut SourceSpread,
        seed: u64,
        token: Token,
        now: u64,
    ) -> io::Result<Option<Link>> {
        let started = start_connect(
            self.cfg.addr,
            spread,
            self.cfg.linger_zero,
            &mut self.stats.syscalls,
        );
        let mut sock = match started {
            ConnectStart::Pending(s) => s,
            ConnectStart::Failed(e) => {
                let class = connect_error_class(&e);
                self.stats.link_error(0, class, self.timeline.stamp(now));
                return Ok(None);
            }
        };
        self.stats.syscalls += 1;
        self.poll
            .registry()
            .register(&mut sock, token, Interest::READABLE | Interest::WRITABLE)?;
        Ok(Some(Link::new(sock, seed, now)))
    }
}

mod run;
