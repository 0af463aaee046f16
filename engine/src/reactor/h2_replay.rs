//! A server's bytes replayed through the HTTP/2 side of one connection, with no socket, timer
//! or model: `streams` GET requests are in flight, the bytes are parsed as the reactor parses
//! them (in pieces cut where asked), and the outcome is returned. The fuzz target
//! (fuzz/fuzz_targets/h2_frames.rs) and the engine's tests use it to check what a parse may never
//! do, whatever the server sends: panic, lose a stream or end one twice, or depend on how the
//! bytes were cut.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;

use super::conn::{Conn, InFlight};
use super::driver::{RingSock, Sock};
use super::h2_conn::{H2Config, H2Conn, H2Kind};
use super::{h2_flow, Config, KindConfig, Script};
use crate::clock::Timeline;
use crate::h2;
use crate::h2::encoder::FieldTable;
use crate::stats::{ErrorClass, ThreadStats};
use crate::validate::{Body, Expect};

/// The body every replayed request expects.
pub const REPLAY_BODY: &[u8] = b"Pong!";

/// What a replay came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub streams: u64,
    /// Streams ended by a reply (valid or not), and those of them that were valid.
    pub answered: u64,
    pub ok: u64,
    /// Streams ended by RST_STREAM.
    pub reset: u64,
    /// Streams still in flight when the bytes ran out or the connection failed.
    pub open: u64,
    /// Replies by error class (index: `ErrorClass as usize`), resets included.
    pub errors: Vec<u64>,
    /// The protocol errors counted, by name.
    pub protocol_errors: BTreeMap<&'static str, u64>,
    /// Why the connection failed: its error class, or None while it stood.
    pub failed: Option<Option<ErrorClass>>,
    /// Bytes kept for later (an incomplete frame) when the input ended.
    pub pending: usize,
    /// The frames the connection had to send back (acks, window updates), in order.
    pub sent_back: Vec<u8>,
    /// The lowest last-stream id of the GOAWAYs received.
    pub goaway: Option<u32>,
}

impl Replay {
    /// Every stream sent is answered, reset or still open, and nothing else.
    pub fn accounted(&self) -> bool {
        self.answered + self.reset + self.open == self.streams && self.ok <= self.answered
    }
}

fn config(streams: u32) -> Config {
    Config {
        addr: ([127, 0, 0, 1], 9).into(),
        kinds: vec![KindConfig {
            bytes: Vec::new(),
            head_request: false,
            idempotent: true,
            expect_status: 200,
            expect: Expect::from(Body::Exact(REPLAY_BODY.to_vec())),
        }],
        weights: vec![1.0],
        timeout_ns: 1_000_000_000,
        connect_timeout_ns: 1_000_000_000,
        close_each: false,
        open_model: false,
        spread_source: false,
        linger_zero: false,
        ws: None,
        h2: Some({
            let mut table = FieldTable::default();
            let fields = table.request("GET", "http", "/", "127.0.0.1", &[]);
            H2Config {
                streams,
                window: h2::DEFAULT_WINDOW as u32,
                kinds: vec![H2Kind {
                    fields,
                    body: Vec::new(),
                }],
                table,
            }
        }),
        tls: None,
    }
}

/// A connection past its preface with `streams` GET requests in flight: stream ids 1, 3, 5, …
/// as the reactor numbers them.
fn connection(cfg: &Config, stats: &mut ThreadStats, streams: u32) -> Conn {
    let hc = cfg.h2.as_ref().expect("an HTTP/2 config");
    let sock = Sock::Ring(RingSock {
        fd: File::open("/dev/null").expect("/dev/null").into(),
        sending: Vec::new(),
        queued: Vec::new(),
        receiving: false,
        connecting: false,
        ending: false,
        unsent: false,
    });
    let script = Script {
        remaining: u64::MAX,
        depth: streams,
        think_ns: 0,
        stop_sending_ns: u64::MAX,
        tag: 0,
    };
    let mut c = Conn::new(sock, script, VecDeque::new(), None, 0);
    c.connecting = false;
    let mut h = H2Conn::new(hc.window, hc.table.len());
    let mut wire = Vec::new();
    for seq in 0..u64::from(streams) {
        let stream = h2_flow::stream_id(seq);
        h.put_request(&mut wire, stream, 0, hc, stats);
        c.inflight.push_back(InFlight {
            kind: 0,
            intended_ns: 0,
            sent_ns: 0,
            deadline_ns: u64::MAX,
            resent: false,
            stream,
        });
        c.sent_seq += 1;
    }
    c.h2 = Some(Box::new(h));
    c
}

/// Replay `data` (cut before each offset in `cuts`, in order) on a connection with `streams`
/// requests in flight.
pub fn replay(data: &[u8], streams: u32, cuts: &[usize]) -> Replay {
    let cfg = config(streams);
    let mut stats = ThreadStats::new(1);
    let mut c = connection(&cfg, &mut stats, streams);
    let at = Timeline::new(0, u64::MAX).stamp(1);
    let (mut sent_back, mut goaway, mut failed) = (Vec::new(), None::<u32>, None);
    let mut start = 0;
    for end in cuts.iter().copied().chain([data.len()]) {
        let end = end.clamp(start, data.len());
        let r = c.consume(&data[start..end], &cfg, &mut stats, 1_000, at);
        start = end;
        let h = c.h2.as_mut().expect("an HTTP/2 connection");
        sent_back.append(&mut h.ctrl);
        if let Some(last) = h.goaway.take() {
            goaway = Some(goaway.map_or(last, |g: u32| g.min(last)));
        }
        if let Err(e) = r {
            failed = Some(e);
            break;
        }
    }
    let k = &stats.kinds[0];
    let reset = k.errors[ErrorClass::StreamReset as usize];
    Replay {
        streams: u64::from(streams),
        answered: k.responses,
        ok: k.ok,
        reset,
        open: c.inflight.len() as u64,
        errors: k.errors.to_vec(),
        protocol_errors: stats.h2.protocol_errors.clone(),
        failed,
        pending: c.pending_bytes(),
        sent_back,
        goaway,
    }
}

/// What a parse may never do, checked on `data` with `streams` in flight: every stream is
/// accounted once however the bytes are cut, and the outcome is the same whether they come at
/// once, byte by byte or in two halves. After a GOAWAY the reactor re-sends the refused streams
/// between reads, so there only the accounting is checked. Panics on a violation; returns the
/// whole-input replay.
pub fn check_replay(data: &[u8], streams: u32) -> Replay {
    let whole = replay(data, streams, &[]);
    assert!(whole.accounted(), "streams not accounted: {whole:?}");
    let bytewise: Vec<usize> = (1..data.len()).collect();
    for cuts in [vec![data.len() / 2], bytewise] {
        let cut = replay(data, streams, &cuts);
        assert!(cut.accounted(), "streams not accounted with cuts: {cut:?}");
        if whole.goaway.is_none() {
            assert_eq!(cut, whole, "the outcome changed with cuts at {cuts:?}");
        }
    }
    whole
}

#[cfg(test)]
mod tests;
