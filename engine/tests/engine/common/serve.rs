//! One test-server connection: read requests (pipelined ones too), ask the policy what to do
//! with each, and do it, misbehaving on the wire as told.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::json_world;
use super::server::{Action, Counts, Policy, Req};

/// Body for a path: "/" answers "Pong!", "/json/N" (any query aside) a JSON document of N rows
/// (see `json_world`), "/x" answers "x"; "/slow*" paths take 30 ms.
fn body_for(path: &str) -> String {
    if path == "/" {
        "Pong!".into()
    } else if let Some(rows) = path.strip_prefix("/json/") {
        let rows = rows.split('?').next().unwrap_or_default();
        json_world(rows.parse().expect("/json/N"))
    } else {
        path[1..].to_owned()
    }
}

/// The Content-Type line of a body: JSON ones have one, others none.
fn content_type_for(body: &str) -> &'static str {
    if body.starts_with('{') {
        "Content-Type: application/json; charset=utf-8\r\n"
    } else {
        ""
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

/// Make closing `s` send a reset (SO_LINGER 0).
fn set_reset_on_close(s: &TcpStream) {
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
}

fn parse_req(head: &[u8], conn_seq: u64) -> Req {
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let first = text.lines().next().unwrap_or_default().to_owned();
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
        conn_seq,
    }
}

/// The pieces of a well-formed reply to one request.
struct Reply {
    version: &'static str,
    conn_hdr: &'static str,
    /// The Content-Type line, or nothing.
    ctype: &'static str,
    body: String,
    /// The reply a well-behaved server sends.
    ok: String,
    /// The connection stays open after it.
    persist: bool,
}

impl Reply {
    fn to(req: &Req) -> Reply {
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
        let ctype = content_type_for(&body);
        let ok = format!(
            "{version} 200 OK\r\nContent-Length: {}\r\n{ctype}{conn_hdr}\r\n{body}",
            body.len()
        );
        Reply {
            version,
            conn_hdr,
            ctype,
            body,
            ok,
            persist,
        }
    }
}

/// The bytes of the actions that answer with one complete reply and go on.
fn plain_reply(action: Action, r: &Reply) -> Option<String> {
    let (version, conn_hdr, ctype, body) = (r.version, r.conn_hdr, r.ctype, &r.body);
    Some(match action {
        Action::Reply => r.ok.clone(),
        Action::Status500 => {
            format!(
                "{version} 500 Internal Server Error\r\nContent-Length: 5\r\n{conn_hdr}\r\nError"
            )
        }
        Action::WrongBody => {
            let wrong = format!("{body}?");
            format!(
                "{version} 200 OK\r\nContent-Length: {}\r\n{ctype}{conn_hdr}\r\n{wrong}",
                wrong.len()
            )
        }
        Action::Chunked => {
            let (a, b) = body.split_at(body.len() / 2);
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{ctype}{conn_hdr}\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
        }
        _ => return None,
    })
}

/// Do `action` for one request; false when the connection is finished with.
fn act(s: &mut TcpStream, action: Action, r: &Reply, stop: &AtomicBool) -> bool {
    if let Some(bytes) = plain_reply(action, r) {
        return s.write_all(bytes.as_bytes()).is_ok();
    }
    match action {
        Action::CloseAfterReply => {
            // Cork so the FIN leaves in the same segment as the reply: the client sees
            // reply and close together and never races a new request against the close.
            setsockopt_int(s, libc::IPPROTO_TCP, libc::TCP_CORK, 1);
            let _ = s.write_all(r.ok.as_bytes());
            let _ = s.shutdown(Shutdown::Write);
            drain_until_eof(s);
        }
        Action::Reset => set_reset_on_close(s),
        Action::Stall => {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Action::Garbage => {
            let _ = s.write_all(b"garbage, not http\r\n\r\n");
            drain_until_eof(s);
        }
        Action::SlowHeaders => {
            let (head, rest) = r.ok.split_at(17);
            let _ = s.write_all(head.as_bytes());
            std::thread::sleep(Duration::from_millis(100));
            return s.write_all(rest.as_bytes()).is_ok();
        }
        Action::LateReply => {
            std::thread::sleep(Duration::from_secs(1));
            return s.write_all(r.ok.as_bytes()).is_ok();
        }
        Action::ReplyAt(when) => {
            std::thread::sleep(when.saturating_duration_since(Instant::now()));
            return s.write_all(r.ok.as_bytes()).is_ok();
        }
        Action::UntilClose => {
            let _ = s.write_all(format!("HTTP/1.0 200 OK\r\n\r\n{}", r.body).as_bytes());
        }
        Action::CloseNoReply
        | Action::ReplyThenFin
        | Action::ReplyThenRst
        | Action::ReplyThenClose
        | Action::ReplyThenLateFin
        | Action::Reply
        | Action::Status500
        | Action::WrongBody
        | Action::Chunked => {}
    }
    false
}

pub(super) fn serve(mut s: TcpStream, counts: &Counts, stop: &AtomicBool, policy: &Policy) {
    let mut buf: Vec<u8> = Vec::new();
    let mut tmp = [0u8; 8192];
    let mut conn_seq = 0;
    loop {
        // Serve every complete request in the buffer (pipelined requests arrive together).
        let mut served_in_batch = 0;
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let req = parse_req(&buf[..end], conn_seq);
            conn_seq += 1;
            buf.drain(..end + 4);
            served_in_batch += 1;
            if served_in_batch == 2 {
                counts.pipelined_batches.fetch_add(1, Ordering::SeqCst);
            }
            let action = counts.record(policy, &req);
            if req.path.starts_with("/slow") {
                std::thread::sleep(Duration::from_millis(30));
            }
            let reply = Reply::to(&req);
            if matches!(
                action,
                Action::ReplyThenFin
                    | Action::ReplyThenRst
                    | Action::ReplyThenClose
                    | Action::ReplyThenLateFin
            ) {
                let _ = s.write_all(reply.ok.as_bytes());
                return vanish(&mut s, action, !buf.is_empty(), counts, stop);
            }
            if !act(&mut s, action, &reply, stop) {
                return;
            }
            if !reply.persist {
                let _ = s.shutdown(Shutdown::Write);
                drain_until_eof(&mut s);
                return;
            }
        }
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
}

/// After a reply, close without a word: at once (ReplyThenClose), or once the next request is
/// there, in `pending` bytes already read or unread in the socket (ReplyThenFin: FIN,
/// ReplyThenLateFin: FIN 100 ms later, ReplyThenRst: reset). A client that closes first gets no silent close, and none is counted.
fn vanish(s: &mut TcpStream, action: Action, pending: bool, counts: &Counts, stop: &AtomicBool) {
    if action != Action::ReplyThenClose && !pending && !wait_for_bytes(s, stop) {
        return;
    }
    if action == Action::ReplyThenLateFin {
        std::thread::sleep(Duration::from_millis(100));
    }
    counts.silent_closes.fetch_add(1, Ordering::SeqCst);
    if action == Action::ReplyThenRst {
        // Dropping the socket with SO_LINGER 0 resets it.
        set_reset_on_close(s);
    } else {
        let _ = s.shutdown(Shutdown::Write);
        drain_until_eof(s);
    }
}

/// Wait until bytes can be read, without reading them; false when the client closed first.
fn wait_for_bytes(s: &mut TcpStream, stop: &AtomicBool) -> bool {
    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    let mut b = [0u8; 1];
    loop {
        match s.peek(&mut b) {
            Ok(n) => return n > 0,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if stop.load(Ordering::SeqCst) {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
}

/// Wait for the client to close, so our close never turns into a reset over unread bytes.
fn drain_until_eof(s: &mut TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut tmp = [0u8; 4096];
    while let Ok(n) = s.read(&mut tmp) {
        if n == 0 {
            break;
        }
    }
}
