//! An in-process HTTP/2 server (h2c with prior knowledge; std::net, a thread per connection)
//! that misbehaves on purpose: GOAWAY after N streams on each connection, RST_STREAM on every
//! k-th stream it receives, small flow-control windows both ways, pings. It honours the
//! client's windows and counts what it did and what the client did wrong, so tests can demand
//! exact counts.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How the server behaves.
#[derive(Clone, Default)]
pub struct H2Behaviour {
    /// Answer this many streams on a connection, then GOAWAY (last id: the last answered).
    pub goaway_after: Option<u64>,
    /// Reset every k-th stream received (counted over all connections), code 2.
    pub rst_every: Option<u64>,
    /// SETTINGS_INITIAL_WINDOW_SIZE for the client's request bodies (default 65,535), given
    /// back by WINDOW_UPDATE as bodies are read.
    pub window: Option<u32>,
    pub max_streams: Option<u32>,
    /// Bytes of each reply's body ("Pong!" when 0: a body of this size of 'x' otherwise).
    pub body_bytes: usize,
    /// A PING before every n-th reply.
    pub ping_every: Option<u64>,
    /// A header every request must carry (name, value): a request without it is a bad one.
    pub want_header: Option<(Vec<u8>, Vec<u8>)>,
    /// Bytes of an `x-pad` header added to each reply, whose head then goes on in
    /// CONTINUATION frames of at most 16,384 bytes.
    pub reply_pad: usize,
    /// The `:scheme` every request must carry (None: "http"; "https" behind a TLS front).
    pub scheme: Option<&'static str>,
}

#[derive(Default)]
pub struct H2Counts {
    pub connections: AtomicU64,
    pub streams: AtomicU64,
    /// Whole requests taken (answered or reset), over all connections.
    pub taken: AtomicU64,
    pub answered: AtomicU64,
    pub resets: AtomicU64,
    pub goaways: AtomicU64,
    /// Streams above a GOAWAY's last id that the client still sent on that connection.
    pub after_goaway: AtomicU64,
    pub pings_sent: AtomicU64,
    pub pings_acked: AtomicU64,
    /// Request body bytes received, and body bytes beyond the window the server gave.
    pub body_bytes: AtomicU64,
    pub window_violations: AtomicU64,
    /// Requests whose headers or body were not what the client was asked to send.
    pub bad_requests: AtomicU64,
    /// CONTINUATION frames received, and sent.
    pub continuations_in: AtomicU64,
    pub continuations_out: AtomicU64,
}

pub struct H2Server {
    pub port: u16,
    pub counts: Arc<H2Counts>,
    stop: Arc<AtomicBool>,
}

impl Drop for H2Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl H2Server {
    /// `body`: the request body every stream must carry.
    pub fn start(b: H2Behaviour, body: &[u8]) -> H2Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(H2Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, body) = (counts.clone(), Arc::new(body.to_vec()));
        super::accept_until(listener, stop.clone(), move |_, conn| {
            Conn::new(conn, b.clone(), c.clone(), body.clone()).serve()
        });
        H2Server { port, counts, stop }
    }

    pub fn n(&self, f: impl Fn(&H2Counts) -> &AtomicU64) -> u64 {
        f(&self.counts).load(Ordering::SeqCst)
    }
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let l = (payload.len() as u32).to_be_bytes();
    let mut f = vec![l[1], l[2], l[3], kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

struct Reply {
    stream: u32,
    body: Vec<u8>,
    sent: usize,
    window: i64,
}

struct Conn {
    s: TcpStream,
    b: H2Behaviour,
    c: Arc<H2Counts>,
    want_body: Arc<Vec<u8>>,
    dec: loona_hpack::Decoder<'static>,
    enc: loona_hpack::Encoder<'static>,
    answered: u64,
    last_answered: u32,
    goaway: bool,
    /// Request bodies being read: stream → bytes, and whether its headers were right.
    open: HashMap<u32, (Vec<u8>, bool)>,
    replies: VecDeque<Reply>,
    send_window: i64,
    client_initial: i64,
    my_window_left: HashMap<u32, i64>,
    /// The client acknowledged our SETTINGS: our window applies from then on.
    acked: bool,
    /// A request header block being put together: its stream, HEADERS flags and bytes.
    block: Option<(u32, u8, Vec<u8>)>,
}

impl Conn {
    fn new(s: TcpStream, b: H2Behaviour, c: Arc<H2Counts>, want_body: Arc<Vec<u8>>) -> Conn {
        c.connections.fetch_add(1, Ordering::SeqCst);
        Conn {
            s,
            b,
            c,
            want_body,
            dec: loona_hpack::Decoder::new(),
            enc: loona_hpack::Encoder::new(),
            answered: 0,
            last_answered: 0,
            goaway: false,
            open: HashMap::new(),
            replies: VecDeque::new(),
            send_window: 65_535,
            client_initial: 65_535,
            my_window_left: HashMap::new(),
            acked: false,
            block: None,
        }
    }

    fn read_frame(&mut self) -> Option<(u8, u8, u32, Vec<u8>)> {
        let mut h = [0u8; 9];
        self.s.read_exact(&mut h).ok()?;
        let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
        let mut p = vec![0; len];
        self.s.read_exact(&mut p).ok()?;
        let id = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
        Some((h[3], h[4], id, p))
    }

    fn serve(mut self) {
        let mut pre = [0u8; 24];
        if self.s.read_exact(&mut pre).is_err() || pre != PREFACE {
            return;
        }
        let mut settings = Vec::new();
        for (id, v) in [(3u16, self.b.max_streams), (4, self.b.window)] {
            if let Some(v) = v {
                settings.extend_from_slice(&id.to_be_bytes());
                settings.extend_from_slice(&v.to_be_bytes());
            }
        }
        if self.s.write_all(&frame(4, 0, 0, &settings)).is_err() {
            return;
        }
        while let Some((kind, flags, id, p)) = self.read_frame() {
            if !self.on_frame(kind, flags, id, &p) {
                break;
            }
            if self.flush().is_err() {
                return;
            }
        }
        // Read what the client still sends until it closes.
        let mut sink = [0u8; 4096];
        while matches!(self.s.read(&mut sink), Ok(n) if n > 0) {}
    }

    /// Take one frame; false when the server is done with the connection.
    fn on_frame(&mut self, kind: u8, flags: u8, id: u32, p: &[u8]) -> bool {
        match kind {
            0x4 if flags & 1 == 0 => {
                for pair in p.chunks_exact(6) {
                    let v = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
                    if u16::from_be_bytes([pair[0], pair[1]]) == 4 {
                        let d = i64::from(v) - self.client_initial;
                        self.client_initial = i64::from(v);
                        self.replies.iter_mut().for_each(|r| r.window += d);
                    }
                }
                let _ = self.s.write_all(&frame(4, 1, 0, &[]));
            }
            0x8 => {
                let inc = i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff);
                if id == 0 {
                    self.send_window += inc;
                } else if let Some(r) = self.replies.iter_mut().find(|r| r.stream == id) {
                    r.window += inc;
                }
            }
            0x4 => {
                // The client's ack of our SETTINGS: streams it opened before now had 65,535.
                let d = i64::from(self.b.window.unwrap_or(65_535)) - 65_535;
                self.my_window_left.values_mut().for_each(|l| *l += d);
                self.acked = true;
            }
            0x6 if flags & 1 != 0 => {
                self.c.pings_acked.fetch_add(1, Ordering::SeqCst);
            }
            0x1 if flags & 4 == 0 => self.block = Some((id, flags, p.to_vec())),
            0x9 => {
                self.c.continuations_in.fetch_add(1, Ordering::SeqCst);
                let Some((sid, first, mut block)) = self.block.take() else {
                    self.c.bad_requests.fetch_add(1, Ordering::SeqCst);
                    return true;
                };
                block.extend_from_slice(p);
                if sid != id {
                    self.c.bad_requests.fetch_add(1, Ordering::SeqCst);
                } else if flags & 4 != 0 {
                    self.on_headers(first, id, &block);
                } else {
                    self.block = Some((sid, first, block));
                }
            }
            0x1 => self.on_headers(flags, id, p),
            0x0 => self.on_data(flags, id, p),
            _ => {}
        }
        true
    }

    fn on_headers(&mut self, flags: u8, id: u32, p: &[u8]) {
        let mut ok = true;
        let mut path = false;
        let fields = self.dec.decode(p).unwrap_or_default();
        if let Some((name, value)) = &self.b.want_header {
            ok &= fields.iter().any(|(k, v)| k == name && v == value);
        }
        for (k, v) in &fields {
            match k.as_slice() {
                b":method" => ok &= v == b"GET" || v == b"POST",
                b":scheme" => ok &= v == self.b.scheme.unwrap_or("http").as_bytes(),
                b":path" => path = v == b"/",
                b"connection" | b"host" => ok = false,
                _ => {}
            }
        }
        self.c.streams.fetch_add(1, Ordering::SeqCst);
        if self.goaway {
            self.c.after_goaway.fetch_add(1, Ordering::SeqCst);
            return;
        }
        self.open.insert(id, (Vec::new(), ok && path));
        let w = if self.acked {
            self.b.window.unwrap_or(65_535)
        } else {
            65_535
        };
        self.my_window_left.insert(id, i64::from(w));
        if flags & 1 != 0 {
            self.request_done(id);
        }
    }

    fn on_data(&mut self, flags: u8, id: u32, p: &[u8]) {
        self.c
            .body_bytes
            .fetch_add(p.len() as u64, Ordering::SeqCst);
        let Some((body, _)) = self.open.get_mut(&id) else {
            return;
        };
        body.extend_from_slice(p);
        let left = self.my_window_left.get_mut(&id).unwrap();
        *left -= p.len() as i64;
        if *left < 0 {
            self.c.window_violations.fetch_add(1, Ordering::SeqCst);
        }
        if !p.is_empty() {
            // Give the bytes back at once (stream and connection).
            let inc = (p.len() as u32).to_be_bytes();
            *left += p.len() as i64;
            let mut w = frame(8, 0, 0, &inc);
            w.extend_from_slice(&frame(8, 0, id, &inc));
            let _ = self.s.write_all(&w);
        }
        if flags & 1 != 0 {
            self.request_done(id);
        }
    }

    /// A whole request on stream `id`: reset, answered, or refused by GOAWAY.
    fn request_done(&mut self, id: u32) {
        let Some((body, ok)) = self.open.remove(&id) else {
            return;
        };
        if !ok || body != *self.want_body {
            self.c.bad_requests.fetch_add(1, Ordering::SeqCst);
        }
        let n = self.c.taken.fetch_add(1, Ordering::SeqCst) + 1;
        if self.b.rst_every.is_some_and(|k| n % k == 0) {
            self.c.resets.fetch_add(1, Ordering::SeqCst);
            let _ = self.s.write_all(&frame(3, 0, id, &2u32.to_be_bytes()));
        } else {
            self.c.answered.fetch_add(1, Ordering::SeqCst);
            let body = if self.b.body_bytes == 0 {
                b"Pong!".to_vec()
            } else {
                vec![b'x'; self.b.body_bytes]
            };
            let len = body.len().to_string();
            let pad = vec![b'p'; self.b.reply_pad];
            let mut fields = vec![
                (&b":status"[..], &b"200"[..]),
                (b"content-type", b"text/plain"),
                (b"content-length", len.as_bytes()),
            ];
            if !pad.is_empty() {
                fields.push((b"x-pad", &pad));
            }
            let block = self.enc.encode(fields);
            if self
                .b
                .ping_every
                .is_some_and(|k| (self.answered + 1) % k == 0)
            {
                self.c.pings_sent.fetch_add(1, Ordering::SeqCst);
                let _ = self.s.write_all(&frame(6, 0, 0, &[7; 8]));
            }
            let mut parts = block.chunks(16_384).peekable();
            let mut head = Vec::new();
            let mut kind = 1;
            while let Some(part) = parts.next() {
                let flags = if parts.peek().is_none() { 4 } else { 0 };
                head.extend_from_slice(&frame(kind, flags, id, part));
                if kind == 9 {
                    self.c.continuations_out.fetch_add(1, Ordering::SeqCst);
                }
                kind = 9;
            }
            let _ = self.s.write_all(&head);
            self.replies.push_back(Reply {
                stream: id,
                body,
                sent: 0,
                window: self.client_initial,
            });
        }
        self.answered += 1;
        self.last_answered = id;
        if self.b.goaway_after.is_some_and(|g| self.answered == g) {
            self.goaway = true;
        }
    }

    /// Send reply bodies as the client's windows allow; at a GOAWAY once all are sent, say it
    /// and stop writing.
    fn flush(&mut self) -> std::io::Result<()> {
        let mut out = Vec::new();
        for r in self.replies.iter_mut() {
            while r.sent < r.body.len() {
                let n = (r.body.len() - r.sent)
                    .min(16_384)
                    .min(self.send_window.min(r.window).max(0) as usize);
                if n == 0 {
                    break;
                }
                let end = if r.sent + n == r.body.len() { 1 } else { 0 };
                out.extend_from_slice(&frame(0, end, r.stream, &r.body[r.sent..r.sent + n]));
                r.sent += n;
                self.send_window -= n as i64;
                r.window -= n as i64;
            }
        }
        self.replies.retain(|r| r.sent < r.body.len());
        if self.goaway && self.replies.is_empty() && self.last_answered != u32::MAX {
            let mut p = self.last_answered.to_be_bytes().to_vec();
            p.extend_from_slice(&0u32.to_be_bytes());
            out.extend_from_slice(&frame(7, 0, 0, &p));
            self.c.goaways.fetch_add(1, Ordering::SeqCst);
            self.last_answered = u32::MAX;
            self.s.write_all(&out)?;
            return self.s.shutdown(Shutdown::Write);
        }
        self.s.write_all(&out)
    }
}
