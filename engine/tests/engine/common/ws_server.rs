//! An in-process WebSocket echo server (std::net, a thread per connection) that misbehaves on
//! purpose, message by message and handshake by handshake, and counts what it did and what the
//! client sent (unmasked frames, pongs, close frames), so tests can demand exact counts.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use sha1::{Digest, Sha1};

/// What the server does with one upgrade (by connection index, from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Upgrade {
    Accept,
    Status(u16),
    WrongAccept,
    NoUpgradeHeader,
    CloseBeforeReply,
    /// Never answers the upgrade.
    Hang,
}

/// What the server does with one message (by its index on the connection, from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Msg {
    Echo,
    Drop,
    Duplicate,
    Corrupt,
    /// Echo in this many frames (continuations), a ping between the first two.
    Fragment(u8),
    PingThenEcho,
    /// Echo, then a close frame with this code, in one write.
    EchoThenClose(u16),
}

type UpgradePolicy = dyn Fn(u64) -> Upgrade + Send + Sync;
type MsgPolicy = dyn Fn(u64) -> Msg + Send + Sync;

#[derive(Default)]
pub struct WsCounts {
    pub upgrades: Mutex<HashMap<Upgrade, u64>>,
    pub msgs: Mutex<HashMap<Msg, u64>>,
    pub unmasked: AtomicU64,
    pub pongs: AtomicU64,
    pub client_closes: Mutex<HashMap<u16, u64>>,
}

pub struct WsServer {
    pub port: u16,
    pub counts: Arc<WsCounts>,
    stop: Arc<AtomicBool>,
}

impl Drop for WsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl WsServer {
    pub fn start(
        upgrade: impl Fn(u64) -> Upgrade + Send + Sync + 'static,
        msg: impl Fn(u64) -> Msg + Send + Sync + 'static,
    ) -> WsServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(WsCounts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (up, mp): (Arc<UpgradePolicy>, Arc<MsgPolicy>) = (Arc::new(upgrade), Arc::new(msg));
        let c = counts.clone();
        super::accept_until(listener, stop.clone(), move |i, conn| {
            serve(conn, i, &c, &*up, &*mp)
        });
        WsServer { port, counts, stop }
    }

    pub fn upgrades(&self, u: Upgrade) -> u64 {
        *self.counts.upgrades.lock().unwrap().get(&u).unwrap_or(&0)
    }

    pub fn msgs(&self, m: Msg) -> u64 {
        *self.counts.msgs.lock().unwrap().get(&m).unwrap_or(&0)
    }

    pub fn client_closes(&self, code: u16) -> u64 {
        *self
            .counts
            .client_closes
            .lock()
            .unwrap()
            .get(&code)
            .unwrap_or(&0)
    }
}

pub(super) fn frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![if fin { 0x80 } else { 0 } | opcode];
    match payload.len() {
        n if n < 126 => f.push(n as u8),
        n if n <= 0xffff => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

/// Read the upgrade request's head; None when the client went away.
pub(super) fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).ok()? == 0 {
            return None;
        }
        head.push(b[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// One client frame, unmasked: (opcode, payload, was masked); None at the end.
pub(super) fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>, bool)> {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).ok()?;
    let masked = h[1] & 0x80 != 0;
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).ok()?;
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).ok()?;
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut mask = [0u8; 4];
    if masked {
        s.read_exact(&mut mask).ok()?;
    }
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).ok()?;
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= mask[i & 3];
    }
    Some((h[0] & 0x0f, payload, masked))
}

pub(super) fn bump<K: std::hash::Hash + Eq>(m: &Mutex<HashMap<K, u64>>, k: K) {
    *m.lock().unwrap().entry(k).or_default() += 1;
}

pub(super) fn upgrade(s: &mut TcpStream, head: &str, how: Upgrade) -> bool {
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap_or_default()
        .trim();
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    let good = base64::engine::general_purpose::STANDARD.encode(h.finalize());
    let reply = match how {
        Upgrade::Accept => format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {good}\r\n\r\n"
        ),
        Upgrade::Status(code) => format!("HTTP/1.1 {code} No\r\nContent-Length: 0\r\n\r\n"),
        Upgrade::WrongAccept => "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n".to_owned(),
        Upgrade::NoUpgradeHeader => format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {good}\r\n\r\n"
        ),
        Upgrade::CloseBeforeReply => return false,
        Upgrade::Hang => {
            std::thread::sleep(std::time::Duration::from_secs(30));
            return false;
        }
    };
    s.write_all(reply.as_bytes()).is_ok() && how == Upgrade::Accept
}

/// The frames the server answers message `payload` with, as `what` says; None: nothing.
pub(super) fn reply(what: Msg, payload: &[u8]) -> Option<Vec<u8>> {
    Some(match what {
        Msg::Echo => frame(0x1, true, payload),
        Msg::Drop => return None,
        Msg::Duplicate => [frame(0x1, true, payload), frame(0x1, true, payload)].concat(),
        Msg::Corrupt => {
            let mut p = payload.to_vec();
            let last = p.len() - 1;
            p[last] = if p[last] == b'z' { b'y' } else { b'z' };
            frame(0x1, true, &p)
        }
        Msg::Fragment(n) => {
            let n = n.max(2) as usize;
            let step = payload.len().div_ceil(n);
            let parts: Vec<&[u8]> = payload.chunks(step).collect();
            let mut out = frame(0x1, parts.len() == 1, parts[0]);
            out.extend(frame(0x9, true, b"mid"));
            for (i, p) in parts.iter().enumerate().skip(1) {
                out.extend(frame(0x0, i == parts.len() - 1, p));
            }
            out
        }
        Msg::PingThenEcho => [frame(0x9, true, b"hello"), frame(0x1, true, payload)].concat(),
        Msg::EchoThenClose(code) => [
            frame(0x1, true, payload),
            frame(0x8, true, &code.to_be_bytes()),
        ]
        .concat(),
    })
}

fn serve(mut s: TcpStream, conn: u64, c: &WsCounts, up: &UpgradePolicy, mp: &MsgPolicy) {
    s.set_nodelay(true).ok();
    let Some(head) = read_head(&mut s) else {
        return;
    };
    let how = up(conn);
    bump(&c.upgrades, how);
    if !upgrade(&mut s, &head, how) {
        return;
    }
    let mut seq = 0;
    while let Some((op, payload, masked)) = read_frame(&mut s) {
        if !masked {
            c.unmasked.fetch_add(1, Ordering::SeqCst);
        }
        match op {
            0xA => {
                c.pongs.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            0x8 => {
                let code = payload
                    .get(..2)
                    .map_or(1005, |b| u16::from_be_bytes([b[0], b[1]]));
                bump(&c.client_closes, code);
                let _ = s.write_all(&frame(0x8, true, &payload));
                return;
            }
            _ => {}
        }
        let what = mp(seq);
        seq += 1;
        bump(&c.msgs, what);
        let Some(out) = reply(what, &payload) else {
            continue;
        };
        if s.write_all(&out).is_err() {
            return;
        }
    }
}
