//! The test server: a listener that serves each connection on its own thread, following a
//! policy, and counts requests, connections and what it did.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::serve::serve;

/// What the server does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Reply,
    Status500,
    WrongBody,
    /// Reply, then close with nothing outstanding (FIN rides on the reply: no race).
    CloseAfterReply,
    /// Read the request and close without a byte of reply.
    CloseNoReply,
    /// Read the request and reset (SO_LINGER 0).
    Reset,
    /// Never reply; keep the connection open.
    Stall,
    /// Reply with bytes that are not HTTP.
    Garbage,
    /// Status line, a pause, then the rest.
    SlowHeaders,
    /// The reply, after a pause of one second.
    LateReply,
    /// Hold the request (read nothing more on its connection) and reply at this instant: a
    /// server stall (see `stall_then_answer`).
    ReplyAt(Instant),
    /// Reply with chunked transfer-encoding.
    Chunked,
    /// HTTP/1.0 reply without Content-Length: body ends at close.
    UntilClose,
    /// Reply (keep-alive), then, once the next request has arrived (unread), close silently
    /// with a FIN: an unannounced keep-alive close with that request outstanding.
    ReplyThenFin,
    /// Reply (keep-alive), then, once the next request has arrived (unread), reset
    /// (SO_LINGER 0).
    ReplyThenRst,
    /// As ReplyThenFin, but 100 ms after the next request arrived.
    ReplyThenLateFin,
    /// Reply (keep-alive) and close with a FIN at once: the client may or may not have sent
    /// its next request when it sees the close (the race of RFC 9112 §9.3.1).
    ReplyThenClose,
}

/// A parsed request as the policy sees it.
pub struct Req {
    pub path: String,
    pub http10: bool,
    pub wants_close: bool,
    pub wants_keep_alive: bool,
    /// Index of the request on its connection (0: the connection's first).
    pub conn_seq: u64,
}

pub(super) type Policy = dyn Fn(u64, &Req) -> Action + Send + Sync;

pub struct Counts {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    /// Reads that held more than one request: proof the client pipelined.
    pub pipelined_batches: AtomicU64,
    /// Connections closed silently after a reply (ReplyThen* actions actually carried out).
    pub silent_closes: AtomicU64,
    actions: Mutex<HashMap<Action, u64>>,
    paths: Mutex<HashMap<String, u64>>,
}

impl Counts {
    /// Count one request and what the policy decides to do with it.
    pub(super) fn record(&self, policy: &Policy, req: &Req) -> Action {
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        let action = policy(n, req);
        *self.actions.lock().unwrap().entry(action).or_default() += 1;
        *self
            .paths
            .lock()
            .unwrap()
            .entry(req.path.clone())
            .or_default() += 1;
        action
    }
    pub fn action(&self, a: Action) -> u64 {
        *self.actions.lock().unwrap().get(&a).unwrap_or(&0)
    }
    /// Requests the server held for a stall (`ReplyAt`, whatever the instant).
    pub fn held(&self) -> u64 {
        self.actions
            .lock()
            .unwrap()
            .iter()
            .filter(|(a, _)| matches!(a, Action::ReplyAt(_)))
            .map(|(_, n)| n)
            .sum()
    }
    pub fn path(&self, p: &str) -> u64 {
        *self.paths.lock().unwrap().get(p).unwrap_or(&0)
    }
}

pub struct TestServer {
    pub port: u16,
    pub counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl TestServer {
    pub fn start(policy: impl Fn(u64, &Req) -> Action + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(Counts {
            requests: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            pipelined_batches: AtomicU64::new(0),
            silent_closes: AtomicU64::new(0),
            actions: Mutex::new(HashMap::new()),
            paths: Mutex::new(HashMap::new()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let policy: Arc<Policy> = Arc::new(policy);
        let (c, s) = (counts.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                c.connections.fetch_add(1, Ordering::SeqCst);
                let (c, s, p) = (c.clone(), s.clone(), policy.clone());
                std::thread::spawn(move || serve(conn, &c, &s, &*p));
            }
        });
        TestServer { port, counts, stop }
    }

    /// A port nothing listens on.
    pub fn closed_port() -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    pub fn n(&self, a: Action) -> u64 {
        self.counts.action(a)
    }

    /// Silent closes the server made.
    pub fn silent_closes(&self) -> u64 {
        self.counts.silent_closes.load(Ordering::SeqCst)
    }

    /// Replies the server sent with status 200 and the right body.
    pub fn ok_replies(&self) -> u64 {
        [
            Action::Reply,
            Action::CloseAfterReply,
            Action::SlowHeaders,
            Action::LateReply,
            Action::Chunked,
            Action::UntilClose,
            Action::ReplyThenFin,
            Action::ReplyThenRst,
            Action::ReplyThenClose,
            Action::ReplyThenLateFin,
        ]
        .iter()
        .map(|&a| self.n(a))
        .sum::<u64>()
            + self.counts.held()
    }
}
