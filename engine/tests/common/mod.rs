//! In-process HTTP test servers (std::net, a thread per connection) that misbehave on purpose
//! and count what they did, so tests can demand that the engine's counts equal the server's.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

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
    /// Reply with chunked transfer-encoding.
    Chunked,
    /// HTTP/1.0 reply without Content-Length: body ends at close.
    UntilClose,
}

/// A parsed request as the policy sees it.
pub struct Req {
    pub path: String,
    pub http10: bool,
    pub wants_close: bool,
    pub wants_keep_alive: bool,
}

type Policy = dyn Fn(u64, &Req) -> Action + Send + Sync;

pub struct Counts {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    /// Reads that held more than one request: proof the client pipelined.
    pub pipelined_batches: AtomicU64,
    actions: Mutex<HashMap<Action, u64>>,
    paths: Mutex<HashMap<String, u64>>,
}

impl Counts {
    pub fn action(&self, a: Action) -> u64 {
        *self.actions.lock().unwrap().get(&a).unwrap_or(&0)
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

/// Body for a path: "/" answers "Pong!", "/x" answers "x"; "/slow*" paths take 30 ms.
pub fn body_for(path: &str) -> String {
    if path == "/" {
        "Pong!".into()
    } else {
        path[1..].to_owned()
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
}

fn setsockopt_int(s: &TcpStream, level: i32, opt: i32, val: i32) {
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            (&val as *const i32).cast(),
            std::mem::size_of::<i32>() as u32,
        );
    }
}

fn reset(s: TcpStream) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as u32,
        );
    }
    drop(s);
}

fn parse_req(head: &[u8]) -> Req {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let first = text.lines().next().unwrap_or_default().to_owned();
    let mut parts = first.split_whitespace();
    let _method = parts.next();
    let path = String::from_utf8_lossy(head)
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let http10 = first.ends_with("http/1.0");
    let conn_hdr = text
        .lines()
        .find(|l| l.starts_with("connection:"))
        .unwrap_or_default()
        .to_owned();
    Req {
        path,
        http10,
        wants_close: conn_hdr.contains("close"),
        wants_keep_alive: conn_hdr.contains("keep-alive"),
    }
}

fn serve(mut s: TcpStream, counts: &Counts, stop: &AtomicBool, policy: &Policy) {
    let mut buf: Vec<u8> = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        // Serve every complete request in the buffer (pipelined requests arrive together).
        let mut served_in_batch = 0;
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let req = parse_req(&buf[..end]);
            buf.drain(..end + 4);
            served_in_batch += 1;
            if served_in_batch == 2 {
                counts.pipelined_batches.fetch_add(1, Ordering::SeqCst);
            }
            let n = counts.requests.fetch_add(1, Ordering::SeqCst);
            let action = policy(n, &req);
            *counts.actions.lock().unwrap().entry(action).or_default() += 1;
            *counts
                .paths
                .lock()
                .unwrap()
                .entry(req.path.clone())
                .or_default() += 1;
            if req.path.starts_with("/slow") {
                std::thread::sleep(Duration::from_millis(30));
            }
            let persist = if req.http10 {
                req.wants_keep_alive
            } else {
                !req.wants_close
            };
            let version = if req.http10 { "HTTP/1.0" } else { "HTTP/1.1" };
            let conn_hdr = match (req.http10, persist) {
                (true, true) => "Connection: keep-alive\r\n",
                (false, false) => "Connection: close\r\n",
                _ => "",
            };
            let body = body_for(&req.path);
            let ok = format!(
                "{version} 200 OK\r\nContent-Length: {}\r\n{conn_hdr}\r\n{body}",
                body.len()
            );
            match action {
                Action::Reply => {
                    if s.write_all(ok.as_bytes()).is_err() {
                        return;
                    }
                }
                Action::Status500 => {
                    let r = format!("{version} 500 Internal Server Error\r\nContent-Length: 5\r\n{conn_hdr}\r\nError");
                    if s.write_all(r.as_bytes()).is_err() {
                        return;
                    }
                }
                Action::WrongBody => {
                    let wrong = format!("{body}?");
                    let r = format!(
                        "{version} 200 OK\r\nContent-Length: {}\r\n{conn_hdr}\r\n{wrong}",
                        wrong.len()
                    );
                    if s.write_all(r.as_bytes()).is_err() {
                        return;
                    }
                }
                Action::CloseAfterReply => {
                    // Cork so the FIN leaves in the same segment as the reply: the client sees
                    // reply and close together and never races a new request against the close.
                    setsockopt_int(&s, libc::IPPROTO_TCP, libc::TCP_CORK, 1);
                    let _ = s.write_all(ok.as_bytes());
                    let _ = s.shutdown(Shutdown::Write);
                    drain_until_eof(s);
                    return;
                }
                Action::CloseNoReply => return,
                Action::Reset => return reset(s),
                Action::Stall => {
                    while !stop.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    return;
                }
                Action::Garbage => {
                    let _ = s.write_all(b"garbage, not http\r\n\r\n");
                    drain_until_eof(s);
                    return;
                }
                Action::SlowHeaders => {
                    let (head, rest) = ok.split_at(17);
                    let _ = s.write_all(head.as_bytes());
                    std::thread::sleep(Duration::from_millis(100));
                    if s.write_all(rest.as_bytes()).is_err() {
                        return;
                    }
                }
                Action::Chunked => {
                    let (a, b) = body.split_at(body.len() / 2);
                    let r = format!(
                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{conn_hdr}\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                        a.len(),
                        b.len()
                    );
                    if s.write_all(r.as_bytes()).is_err() {
                        return;
                    }
                }
                Action::UntilClose => {
                    let _ = s.write_all(format!("HTTP/1.0 200 OK\r\n\r\n{body}").as_bytes());
                    return;
                }
            }
            if !persist {
                let _ = s.shutdown(Shutdown::Write);
                drain_until_eof(s);
                return;
            }
        }
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
}

/// Wait for the client to close, so our close never turns into a reset over unread bytes.
fn drain_until_eof(mut s: TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut tmp = [0u8; 4096];
    while let Ok(n) = s.read(&mut tmp) {
        if n == 0 {
            break;
        }
    }
}

/// A plan against `port` with one "pong" kind expecting 200 "Pong!".
pub fn plan(port: u16, model: Value) -> Value {
    json!({
        "protocol_version": 1,
        "target": {"host": "127.0.0.1", "port": port},
        "model": model,
        "http": {"version": "1.1", "keep_alive": true},
        "requests": [{"name": "pong", "method": "GET", "path": "/", "weight": 1,
                      "expect": {"status": 200, "body": "Pong!"}}],
        "timeout_s": 2.0,
        "connect_timeout_s": 2.0,
        "threads": 1,
        "seed": 1
    })
}

pub fn run(plan: &Value) -> Value {
    wsgibench_engine::run_value(plan).unwrap_or_else(|e| panic!("run failed: {e}"))
}

pub fn total(r: &Value, key: &str) -> u64 {
    r["totals"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("totals.{key} missing"))
}

pub fn err(r: &Value, class: &str) -> u64 {
    r["totals"]["errors"][class]
        .as_u64()
        .unwrap_or_else(|| panic!("errors.{class} missing"))
}

/// Sum of all error classes.
pub fn all_errors(r: &Value) -> u64 {
    r["totals"]["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// Every request sent ended exactly once: ok, or one error class (connect errors are pre-send).
pub fn assert_accounting(r: &Value) {
    let t = &r["totals"];
    let connect: u64 = ["connect_refused", "connect_timeout", "connect_error"]
        .iter()
        .map(|c| err(r, c))
        .sum();
    let outcomes = total(r, "ok") + all_errors(r) - connect;
    assert_eq!(
        t["requests_sent"].as_u64().unwrap(),
        outcomes,
        "requests_sent != ok + errors: {t}"
    );
    for k in r["kinds"].as_array().unwrap() {
        assert_eq!(
            k["latency_us"]["count"], k["responses"],
            "every response has a latency"
        );
    }
}
