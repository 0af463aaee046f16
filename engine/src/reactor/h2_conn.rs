//! HTTP/2 connections in the reactor: each request a stream (HEADERS, then DATA within the
//! server's flow-control windows), replies taken frame by frame in any order, the server's
//! SETTINGS, PING, WINDOW_UPDATE, RST_STREAM and GOAWAY honoured and counted.

use std::collections::{HashMap, VecDeque};

use super::Config;
use crate::h2::encoder::{Encoder, FieldTable, Item};
use crate::h2::{self, FrameHead};
use crate::stats::{ErrorClass, ThreadStats};
use crate::validate::ReplyCheck;

/// One request kind as HTTP/2 sends it: its header fields (encoded per connection) and body.
pub struct H2Kind {
    pub fields: Vec<Item>,
    pub body: Vec<u8>,
}

/// Settings of an HTTP/2 load, shared by its connections.
pub struct H2Config {
    pub streams: u32,
    /// The receive window offered for each stream and the connection.
    pub window: u32,
    pub kinds: Vec<H2Kind>,
    /// The kinds' fields that the static table does not hold whole.
    pub table: FieldTable,
}

/// A stream sent and not yet complete.
struct Stream {
    kind: u16,
    status: u16,
    /// Set once the final response head came.
    check: Option<ReplyCheck>,
    content_length: Option<u64>,
    received: u64,
    recv_avail: i64,
    recv_unacked: u32,
    send_window: i64,
    body_sent: usize,
}

/// The HTTP/2 side of one connection.
pub(super) struct H2Conn {
    decoder: httlib_hpack::Decoder<'static>,
    /// Decoded fields of the block at hand (kept to reuse its allocation).
    fields: Vec<(Vec<u8>, Vec<u8>, u8)>,
    streams: HashMap<u32, Stream>,
    /// Streams whose body waits for flow-control window, oldest first.
    waiting: VecDeque<u32>,
    peer_max_frame: usize,
    peer_initial_window: i64,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until it says).
    pub peer_max_streams: u32,
    send_window: i64,
    recv_avail: i64,
    recv_unacked: u32,
    window: u32,
    /// A header block being put together (HEADERS, CONTINUATION): its stream and END_STREAM.
    block: Option<(u32, bool)>,
    block_bytes: Vec<u8>,
    /// Frames to send once the bytes at hand are parsed (acks, window updates, body data).
    pub ctrl: Vec<u8>,
    /// The last stream id of a GOAWAY that came and the reactor has not acted on yet.
    pub goaway: Option<u32>,
    encoder: Encoder,
    /// The header block of the request at hand (kept to reuse its allocation).
    request_block: Vec<u8>,
}

type Parsed = Result<(usize, u32), Option<ErrorClass>>;
type Taken = Result<u32, Option<ErrorClass>>;

fn protocol_error(stats: &mut ThreadStats, what: &'static str) -> Option<ErrorClass> {
    stats.h2.protocol_error(what);
    Some(ErrorClass::ProtocolError)
}

fn word(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Send as much of a stream's body as the windows and the frame size allow; true when all of
/// it is sent.
fn send_body(
    out: &mut Vec<u8>,
    id: u32,
    s: &mut Stream,
    body: &[u8],
    conn_window: &mut i64,
    max_frame: usize,
) -> bool {
    while s.body_sent < body.len() {
        let room = (*conn_window).min(s.send_window).max(0) as usize;
        let n = (body.len() - s.body_sent).min(max_frame).min(room);
        if n == 0 {
            return false;
        }
        let end = s.body_sent + n == body.len();
        let flags = if end { h2::END_STREAM } else { 0 };
        h2::put_frame(
            out,
            h2::DATA,
            flags,
            id,
            &body[s.body_sent..s.body_sent + n],
        );
        s.body_sent += n;
        *conn_window -= n as i64;
        s.send_window -= n as i64;
    }
    true
}

impl H2Conn {
    pub fn new(window: u32, fields: usize) -> H2Conn {
        H2Conn {
            decoder: httlib_hpack::Decoder::default(),
            fields: Vec::new(),
            streams: HashMap::new(),
            waiting: VecDeque::new(),
            peer_max_frame: h2::MAX_FRAME,
            peer_initial_window: h2::DEFAULT_WINDOW,
            peer_max_streams: u32::MAX,
            send_window: h2::DEFAULT_WINDOW,
            recv_avail: i64::from(window).max(h2::DEFAULT_WINDOW),
            recv_unacked: 0,
            window,
            block: None,
            block_bytes: Vec::new(),
            ctrl: Vec::new(),
            goaway: None,
            encoder: Encoder::new(fields, h2::encoder::DEFAULT_TABLE),
            request_block: Vec::new(),
        }
    }

    /// Put request `kind` on stream `id` into `out`: its HEADERS, and as much of its body as
    /// the windows allow (the rest follows as WINDOW_UPDATEs come).
    pub fn put_request(
        &mut self,
        out: &mut Vec<u8>,
        id: u32,
        kind: u16,
        cfg: &H2Config,
        stats: &mut ThreadStats,
    ) {
        let k = &cfg.kinds[kind as usize];
        self.request_block.clear();
        self.encoder
            .encode(&k.fields, &cfg.table, &mut self.request_block);
        h2::put_block(
            out,
            id,
            &self.request_block,
            k.body.is_empty(),
            self.peer_max_frame,
        );
        let mut s = Stream {
            kind,
            status: 0,
            check: None,
            content_length: None,
            received: 0,
            recv_avail: i64::from(self.window),
            recv_unacked: 0,
            send_window: self.peer_initial_window,
            body_sent: 0,
        };
        if !k.body.is_empty()
            && (!self.waiting.is_empty()
                || !send_body(
                    out,
                    id,
                    &mut s,
                    &k.body,
                    &mut self.send_window,
                    self.peer_max_frame,
                ))
        {
            stats.h2.window_stalls += 1;
            self.waiting.push_back(id);
        }
        self.streams.insert(id, s);
        stats.h2.streams += 1;
    }

    /// Send what the windows now allow of the bodies that wait, into `ctrl`.
    fn pump(&mut self, cfg: &H2Config) {
        let mut still = VecDeque::new();
        while let Some(id) = self.waiting.pop_front() {
            let Some(s) = self.streams.get_mut(&id) else {
                continue;
            };
            let body = &cfg.kinds[s.kind as usize].body;
            if !send_body(
                &mut self.ctrl,
                id,
                s,
                body,
                &mut self.send_window,
                self.peer_max_frame,
            ) {
                still.push_back(id);
            }
        }
        self.waiting = still;
    }

    /// Forget stream `id` (answered or reset); its kind, when it was open.
    fn close_stream(&mut self, id: u32) -> Option<Stream> {
        self.waiting.retain(|&w| w != id);
        self.streams.remove(&id)
    }

    /// SETTINGS: applied, then acknowledged.
    fn settings(
        &mut self,
        head: FrameHead,
        p: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
    ) -> Taken {
        if head.stream != 0 {
            return Err(protocol_error(stats, "settings_on_stream"));
        }
        if head.flags & h2::ACK != 0 {
            return if p.is_empty() {
                Ok(0)
            } else {
                Err(protocol_error(stats, "settings_ack_with_payload"))
            };
        }
        if p.len() % 6 != 0 {
            return Err(protocol_error(stats, "settings_size"));
        }
        for pair in p.chunks_exact(6) {
            let v = word(&pair[2..]);
            match u16::from_be_bytes([pair[0], pair[1]]) {
                h2::SETTINGS_ENABLE_PUSH if v != 0 => {
                    return Err(protocol_error(stats, "settings_value"))
                }
                h2::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.peer_max_streams = v;
                    let m = &mut stats.h2.max_concurrent_streams;
                    *m = Some(m.map_or(v, |o| o.min(v)));
                }
                h2::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if i64::from(v) > h2::MAX_WINDOW {
                        return Err(protocol_error(stats, "flow_control"));
                    }
                    let delta = i64::from(v) - self.peer_initial_window;
                    self.peer_initial_window = i64::from(v);
                    self.streams
                        .values_mut()
                        .for_each(|s| s.send_window += delta);
                }
                h2::SETTINGS_MAX_FRAME_SIZE => {
                    if !(h2::MAX_FRAME as u32..1 << 24).contains(&v) {
                        return Err(protocol_error(stats, "settings_value"));
                    }
                    self.peer_max_frame = v as usize;
                }
                h2::SETTINGS_HEADER_TABLE_SIZE => self.encoder.peer_table_size(v),
                _ => {} // unknown settings
            }
        }
        stats.h2.settings_received += 1;
        h2::put_frame(&mut self.ctrl, h2::SETTINGS, h2::ACK, 0, &[]);
        self.pump(cfg.h2.as_ref().expect("an HTTP/2 load"));
        Ok(0)
    }

    /// WINDOW_UPDATE: more room to send bodies.
    fn window_update(
        &mut self,
        head: FrameHead,
        p: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
    ) -> Taken {
        if p.len() != 4 {
            return Err(protocol_error(stats, "window_update_size"));
        }
        let inc = i64::from(word(p) & 0x7fff_ffff);
        if inc == 0 {
            return Err(protocol_error(stats, "window_update_zero"));
        }
        stats.h2.window_updates_received += 1;
        let w = if head.stream == 0 {
            &mut self.send_window
        } else {
            match self.streams.get_mut(&head.stream) {
                Some(s) => &mut s.send_window,
                None => return Ok(0), // a stream already closed
            }
        };
        *w += inc;
        if *w > h2::MAX_WINDOW {
            return Err(protocol_error(stats, "flow_control"));
        }
        self.pump(cfg.h2.as_ref().expect("an HTTP/2 load"));
        Ok(0)
    }

    /// The receive windows after `len` bytes of DATA on stream `s`, given back by WINDOW_UPDATE
    /// once half of a window is used; Err when the server sent beyond a window.
    fn consumed(
        &mut self,
        id: u32,
        s: &mut Stream,
        len: u32,
        end: bool,
        stats: &mut ThreadStats,
    ) -> Result<(), Option<ErrorClass>> {
        self.recv_avail -= i64::from(len);
        s.recv_avail -= i64::from(len);
        if self.recv_avail < 0 || s.recv_avail < 0 {
            return Err(protocol_error(stats, "flow_control"));
        }
        self.recv_unacked += len;
        if self.recv_unacked >= self.window / 2 {
            h2::put_window_update(&mut self.ctrl, 0, self.recv_unacked);
            self.recv_avail += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
            stats.h2.window_updates_sent += 1;
        }
        s.recv_unacked += len;
        if !end && s.recv_unacked >= self.window / 2 {
            h2::put_window_update(&mut self.ctrl, id, s.recv_unacked);
            s.recv_avail += i64::from(s.recv_unacked);
            s.recv_unacked = 0;
            stats.h2.window_updates_sent += 1;
        }
        Ok(())
    }
}

/// The payload of a DATA or HEADERS frame without its padding (and HEADERS' priority).
fn unpadded<'a>(
    head: FrameHead,
    p: &'a [u8],
    stats: &mut ThreadStats,
) -> Result<&'a [u8], Option<ErrorClass>> {
    let (mut start, mut end) = (0, p.len());
    if head.flags & h2::PADDED != 0 {
        let pad = usize::from(*p.first().ok_or_else(|| protocol_error(stats, "padding"))?);
        start = 1;
        end = end
            .checked_sub(pad)
            .ok_or_else(|| protocol_error(stats, "padding"))?;
    }
    if head.kind == h2::HEADERS && head.flags & h2::PRIORITY_FLAG != 0 {
        start += 5;
    }
    if start > end {
        return Err(protocol_error(stats, "padding"));
    }
    Ok(&p[start..end])
}

mod frames;
