//! The per-thread reactor: connections, request/response flow, timeouts and outcome accounting.
//!
//! Models (closed, rate, sessions, count) only decide when connections open and what each may
//! send (a [`Script`]); everything on the wire happens here. The parts:
//!
//! - `script`: what a connection may send, and reserving its next request;
//! - `slots`: live connections addressed by generation-checked mio tokens;
//! - `timers`: connect and request timeouts, think timers, deferred opens;
//! - `conn`: one connection's state: handshake, parsing and accounting replies (`conn_io` its
//!   writes on epoll, `quote` the bytes of a reply kept in case it is wrong);
//! - `driver`: the I/O backend (epoll or io_uring), waiting and dispatching what happened;
//! - `events`: socket events driving connections, and how a connection ends;
//! - `ring`, `ring_io`: the io_uring ring and its buffers, and connections driven by it;
//! - `pool`: a fixed pool of connections fed by a schedule (rate with `pool`);
//! - `given`: requests of a kind the model gives (trace) instead of the weighted pick;
//! - `resend`: unannounced keep-alive closes, and re-sending what they left unanswered;
//! - `ws_conn`, `ws_flow`: WebSocket connections: the upgrade, messages and their echoes;
//! - `h2_conn`, `h2_flow`: HTTP/2 connections: streams, flow control, the server's frames;
//! - `tls_flow`: TLS connections: the handshake, and every byte through rustls both ways.

mod conn;
mod conn_io;
mod driver;
mod ending;
mod events;
mod given;
mod h2_conn;
mod h2_flow;
pub mod h2_replay;
mod pool;
mod quote;
mod resend;
mod ring;
mod ring_io;
mod script;
mod slots;
mod timers;
mod tls_flow;
mod ws_conn;
mod ws_flow;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use mio::Interest;

use crate::clock::Timeline;
use crate::net::{connect_error_class, new_socket, start_connect, ConnectStart, SourceSpread};
use crate::plan::EngineIo;
use crate::rng::{KindPicker, Rng};
use crate::stats::{record_us, ErrorClass, ThreadStats};
use crate::validate::Expect;

use conn::{Conn, Ticket};
use driver::{Driver, Sock};
pub use h2_conn::{H2Config, H2Kind};
use script::Issuer;
pub use script::{ConnEnd, EndReason, Script};
use slots::Slots;
pub use slots::TIMER_TOKEN;
use timers::Timers;
pub use ws_conn::WsConfig;

/// Read buffer shared by all connections of a thread; only partial heads are kept per connection.
const SCRATCH_BYTES: usize = 64 * 1024;

/// One request kind, ready to put on the wire.
pub struct KindConfig {
    pub bytes: Vec<u8>,
    pub head_request: bool,
    /// GET or HEAD: may be sent again after an unannounced keep-alive close.
    pub idempotent: bool,
    pub expect_status: u16,
    pub expect: Expect,
}

/// Settings shared by every connection of a run.
pub struct Config {
    pub addr: SocketAddr,
    pub kinds: Vec<KindConfig>,
    pub weights: Vec<f64>,
    pub timeout_ns: u64,
    pub connect_timeout_ns: u64,
    /// Requests ask the server to close after replying (keep_alive false).
    pub close_each: bool,
    /// Open model: record service time beside corrected latency.
    pub open_model: bool,
    pub spread_source: bool,
    pub linger_zero: bool,
    /// Requests are WebSocket messages on upgraded connections.
    pub ws: Option<WsConfig>,
    /// Requests are HTTP/2 streams on h2c connections.
    pub h2: Option<H2Config>,
    /// Connections are TLS: the client configuration and the server's name.
    pub tls: Option<TlsSetup>,
}

/// What every TLS connection of a run starts from.
pub struct TlsSetup {
    pub config: Arc<rustls::ClientConfig>,
    pub name: rustls::pki_types::ServerName<'static>,
}

/// One thread's connections and everything they share.
pub struct Reactor {
    io: Driver,
    /// Why `auto` fell back to epoll, if it did.
    pub io_note: Option<String>,
    cfg: Arc<Config>,
    issuer: Issuer,
    slots: Slots<Conn>,
    pub stats: ThreadStats,
    spread: SourceSpread,
    timers: Timers,
    /// Connections ended since the runner last handed them to the model.
    pub ended: Vec<ConnEnd>,
    timeline: Timeline,
    /// Read buffer shared by all connections.
    scratch: Vec<u8>,
    /// The batch of requests being put on one connection.
    out: Vec<u8>,
    /// TLS: records sealed from `out`, and plaintext opened from what arrived.
    sealed: Vec<u8>,
    plain: Vec<u8>,
    /// A rate model's fixed pool of connections, when it has one.
    pool: Option<pool::Pool>,
}

impl Reactor {
    pub fn new(
        cfg: Arc<Config>,
        seed: u64,
        timeline: Timeline,
        spread_offset: u32,
        engine_io: EngineIo,
    ) -> io::Result<Reactor> {
        let (io, io_note) = Driver::new(engine_io, cfg.addr)?;
        let issuer = Issuer::new(KindPicker::new(&cfg.weights), Rng::new(seed));
        let spread = SourceSpread::new(cfg.addr, cfg.spread_source, spread_offset);
        let kinds = cfg.kinds.len();
        Ok(Reactor {
            io,
            io_note,
            cfg,
            issuer,
            slots: Slots::default(),
            stats: ThreadStats::new(kinds),
            spread,
            timers: Timers::default(),
            ended: Vec::new(),
            timeline,
            scratch: vec![0; SCRATCH_BYTES],
            out: Vec::with_capacity(4096),
            sealed: Vec::new(),
            plain: Vec::new(),
            pool: None,
        })
    }

    /// The run is over: submit the closes still queued on the ring.
    pub fn finish(&mut self) {
        if let Driver::Ring(r) = &mut self.io {
            r.flush();
            // Every io_uring_enter, including those a full submission queue forced.
            self.stats.syscalls += r.enters;
        }
    }

    /// Connections open now (connecting or connected).
    pub fn open_conns(&self) -> u64 {
        self.slots.live()
    }

    /// Limit the requests of this thread to `n` in all (count model), across reconnects and failures.
    pub fn set_budget(&mut self, n: u64) {
        self.issuer.budget = Some(n);
    }

    /// Requests the budget still allows (0 without a budget).
    pub fn budget_left(&self) -> u64 {
        self.issuer.budget.unwrap_or(0)
    }

    /// Nothing is open or pending: the thread may finish once its model is done.
    pub fn idle(&self) -> bool {
        self.slots.live() == 0
            && !self.timers.has_deferred_opens()
            && self.ended.is_empty()
            && self.queued() == 0
    }

    /// Open a connection for `script`, reserving its first request now. `intended_ns` is when the
    /// model wanted it (open models), for schedule lag and corrected latency. False when the
    /// script or the budget has nothing left.
    pub fn open(&mut self, script: Script, intended_ns: Option<u64>, now: u64) -> bool {
        self.open_for(script, intended_ns, true, now)
    }

    /// Open a new connection for a script whose connection the server closed, its next request
    /// intended at `intended_ns` (when it would have gone on the old connection), so that its
    /// latency includes the reconnect. Not a schedule event: no lag is recorded. False when the
    /// script or the budget has nothing left.
    pub fn reconnect(&mut self, script: Script, intended_ns: Option<u64>, now: u64) -> bool {
        self.open_for(script, intended_ns, false, now)
    }

    fn open_for(
        &mut self,
        mut script: Script,
        intended_ns: Option<u64>,
        lag: bool,
        now: u64,
    ) -> bool {
        let Some(kind) = self.issuer.reserve(&mut script, now) else {
            return false;
        };
        if let Some(t) = intended_ns.filter(|_| lag) {
            record_us(&mut self.stats.lag_us, now.saturating_sub(t) / 1000);
        }
        let ticket = Ticket::fresh(kind);
        self.connect(script, VecDeque::from([ticket]), intended_ns, now);
        true
    }

    /// Start connecting for `script`, whose `tickets` (not empty) are already reserved.
    fn connect(
        &mut self,
        script: Script,
        tickets: VecDeque<Ticket>,
        intended_ns: Option<u64>,
        now: u64,
    ) {
        let placed = match &self.io {
            Driver::Epoll(_) => self.connect_epoll(),
            Driver::Ring(_) => self.connect_ring(),
        };
        let (idx, sock) = match placed {
            Ok(p) => p,
            Err(e) => return self.connect_failed(&tickets, script, &e, now),
        };
        let gen = self.slots.gen(idx);
        self.slots
            .put(idx, Conn::new(sock, script, tickets, intended_ns, now));
        self.timers
            .connect
            .push(now + self.cfg.connect_timeout_ns, (idx, gen));
        self.stats.peak_open = self.stats.peak_open.max(self.slots.live());
    }

    /// A connecting socket registered with epoll, in a reserved slot.
    fn connect_epoll(&mut self) -> io::Result<(usize, Sock)> {
        let started = start_connect(
            self.cfg.addr,
            &mut self.spread,
            self.cfg.linger_zero,
            &mut self.stats.syscalls,
        );
        let mut sock = match started {
            ConnectStart::Pending(s) => s,
            ConnectStart::Failed(e) => return Err(e),
        };
        let (idx, gen) = self.slots.reserve();
        let Driver::Epoll(ep) = &self.io else {
            unreachable!("an epoll connect on the ring")
        };
        self.stats.syscalls += 1;
        if let Err(e) = ep.poll.registry().register(
            &mut sock,
            slots::token(idx, gen),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            self.slots.unreserve(idx);
            return Err(e);
        }
        Ok((idx, Sock::Mio(sock)))
    }

    /// A socket whose connect is a ring submission, in a reserved slot.
    fn connect_ring(&mut self) -> io::Result<(usize, Sock)> {
        let sock = new_socket(
            self.cfg.addr,
            &mut self.spread,
            self.cfg.linger_zero,
            false,
            &mut self.stats.syscalls,
        )?;
        let (idx, gen) = self.slots.reserve();
        Ok((idx, self.ring_sock(sock, idx, gen)))
    }

    /// Close the socket of a connection that has left slot `idx` (generation `gen`);
    /// `graceful`: it ended without an error, its script done or the server's side closed (what
    /// it still has to send, such as a PING's ACK after a GOAWAY, goes out first, as on epoll,
    /// whose writes are already in the kernel).
    fn release(&mut self, sock: Sock, idx: usize, gen: u32, graceful: bool) {
        match sock {
            // Dropping the socket closes it, which also removes it from epoll.
            Sock::Mio(s) => {
                self.stats.syscalls += 1;
                drop(s);
            }
            Sock::Ring(rs) => self.ring_release(rs, idx, gen, graceful),
        }
    }

    /// Open `script` at `due_ns` (a user coming back after think time on a closed connection).
    pub fn open_at(&mut self, due_ns: u64, script: Script) {
        self.timers.deferred_opens.push(due_ns, script);
    }

    /// The connect failed at once: each request it was for gets the connect error class.
    fn connect_failed(
        &mut self,
        tickets: &VecDeque<Ticket>,
        script: Script,
        e: &io::Error,
        now: u64,
    ) {
        let class = self.connect_error(e);
        let at = self.timeline.stamp(now);
        for t in tickets {
            let waited = now.saturating_sub(t.intended_ns.unwrap_or(now)) / 1000;
            self.stats.error(t.kind as usize, class, at, waited);
        }
        self.ended.push(ConnEnd {
            script,
            reason: EndReason::Error(class),
            resume_at_ns: now,
        });
    }

    /// The error class of a failed connect; the engine's own limits are also counted as
    /// exhaustion (saturation reasons).
    pub(super) fn connect_error(&mut self, e: &io::Error) -> ErrorClass {
        let class = connect_error_class(e);
        match class {
            ErrorClass::FdLimit => self.stats.exhaustion.fd_limit += 1,
            ErrorClass::PortsExhausted => self.stats.exhaustion.ephemeral_ports += 1,
            _ => {}
        }
        class
    }
}
