//! What a thread saw of the WebSocket protocol beyond each message's outcome: handshakes and why
//! they failed, control frames, fragmented messages, duplicates, and the servers' close codes.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::{json, Value};

use crate::stats::new_hist;

/// Why an upgrade did not open a WebSocket (`handshake_failed`, by reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HandshakeFailure {
    /// A status other than 101 (the codes are kept apart).
    Status,
    /// 101 without `Upgrade: websocket` and `Connection: upgrade`.
    Headers,
    /// A `Sec-WebSocket-Accept` other than the key's.
    Accept,
    /// An extension or subprotocol the engine did not offer.
    Unoffered,
    /// Not an HTTP reply.
    Garbled,
    /// The server closed or reset before its reply was complete.
    Closed,
    /// No reply within the request timeout.
    Timeout,
}

impl HandshakeFailure {
    fn name(self) -> &'static str {
        match self {
            HandshakeFailure::Status => "status",
            HandshakeFailure::Headers => "headers",
            HandshakeFailure::Accept => "accept",
            HandshakeFailure::Unoffered => "unoffered",
            HandshakeFailure::Garbled => "garbled",
            HandshakeFailure::Closed => "closed",
            HandshakeFailure::Timeout => "timeout",
        }
    }
}

pub struct WsStats {
    pub handshakes_ok: u64,
    pub handshake_us: Histogram<u64>,
    pub handshake_failures: BTreeMap<HandshakeFailure, u64>,
    pub handshake_statuses: BTreeMap<u16, u64>,
    /// Data messages received whole (echoes, duplicates and others).
    pub messages_received: u64,
    /// Of those, messages that came in more than one frame.
    pub fragmented: u64,
    /// Echoes of a message already answered.
    pub duplicates: u64,
    pub pings: u64,
    pub pongs_sent: u64,
    pub pongs_received: u64,
    /// Close frames from the server, by status code (1005: none given).
    pub close_codes: BTreeMap<u16, u64>,
    /// Frames that broke the protocol, by what was wrong.
    pub protocol_errors: BTreeMap<&'static str, u64>,
    /// A broadcast load's fan-out (None for echo loads).
    pub broadcast: Option<BroadcastStats>,
}

/// A broadcast load: one publisher, N subscribers, each message due at every subscriber open
/// when publishing started. Deliveries are the results' responses; lost ones are errors.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct BroadcastStats {
    pub subscribers: u64,
    /// Subscribers whose upgrade opened a WebSocket before publishing started.
    pub subscribers_open: u64,
    /// Of those, subscribers the server closed (or reset) before the end.
    pub subscribers_cut: u64,
    /// Whether the publisher's upgrade opened a WebSocket.
    pub publisher_open: bool,
    /// Messages the publisher put on the wire.
    pub published: u64,
    /// Messages due at subscribers (published x subscribers open).
    pub due: u64,
    /// Received whole, in order, first time.
    pub delivered: u64,
    /// Due and never received.
    pub lost: u64,
    /// Received, but not a message the publisher sent (altered).
    pub corrupt: u64,
    /// Received again, or after a later one (out of order).
    pub duplicates: u64,
}

impl BroadcastStats {
    fn merge(&mut self, o: &BroadcastStats) {
        self.subscribers += o.subscribers;
        self.subscribers_open += o.subscribers_open;
        self.subscribers_cut += o.subscribers_cut;
        self.publisher_open |= o.publisher_open;
        self.published += o.published;
        self.due += o.due;
        self.delivered += o.delivered;
        self.lost += o.lost;
        self.corrupt += o.corrupt;
        self.duplicates += o.duplicates;
    }

    fn to_json(&self) -> Value {
        json!({
            "subscribers": self.subscribers,
            "subscribers_open": self.subscribers_open,
            "subscribers_cut": self.subscribers_cut,
            "publisher_open": self.publisher_open,
            "published": self.published,
            "due": self.due,
            "delivered": self.delivered,
            "lost": self.lost,
            "corrupt": self.corrupt,
            "duplicates": self.duplicates,
        })
    }
}

impl Default for WsStats {
    fn default() -> Self {
        WsStats {
            handshakes_ok: 0,
            handshake_us: new_hist(),
            handshake_failures: BTreeMap::new(),
            handshake_statuses: BTreeMap::new(),
            messages_received: 0,
            fragmented: 0,
            duplicates: 0,
            pings: 0,
            pongs_sent: 0,
            pongs_received: 0,
            close_codes: BTreeMap::new(),
            protocol_errors: BTreeMap::new(),
            broadcast: None,
        }
    }
}

fn add<K: Ord + Copy>(a: &mut BTreeMap<K, u64>, b: &BTreeMap<K, u64>) {
    for (k, n) in b {
        *a.entry(*k).or_default() += n;
    }
}

impl WsStats {
    pub fn failed(&mut self, why: HandshakeFailure) {
        *self.handshake_failures.entry(why).or_default() += 1;
    }

    /// An upgrade the server refused or garbled, counted by reason (and status).
    pub fn refused(&mut self, r: super::Refused) {
        if let Some(code) = r.status {
            *self.handshake_statuses.entry(code).or_default() += 1;
        }
        self.failed(r.why);
    }

    /// A control frame from the server, counted and answered into `out` (masked with a key
    /// from `mask`): a ping with a pong carrying its payload, a close with its code. True when
    /// it was a close.
    pub fn control(
        &mut self,
        frame: &super::Frame<'_>,
        out: &mut Vec<u8>,
        mask: impl FnOnce() -> [u8; 4],
    ) -> bool {
        match frame.opcode {
            super::OP_PING => {
                self.pings += 1;
                self.pongs_sent += 1;
                super::put_frame(out, super::OP_PONG, frame.payload, mask());
                false
            }
            super::OP_PONG => {
                self.pongs_received += 1;
                false
            }
            _ => {
                let code = match frame.payload {
                    [a, b, ..] => u16::from_be_bytes([*a, *b]),
                    _ => 1005,
                };
                *self.close_codes.entry(code).or_default() += 1;
                let reply = if code == 1005 {
                    &[][..]
                } else {
                    &frame.payload[..2]
                };
                super::put_frame(out, super::OP_CLOSE, reply, mask());
                true
            }
        }
    }

    pub fn merge(&mut self, o: &WsStats) {
        self.handshakes_ok += o.handshakes_ok;
        self.handshake_us.add(&o.handshake_us).expect("same bounds");
        add(&mut self.handshake_failures, &o.handshake_failures);
        add(&mut self.handshake_statuses, &o.handshake_statuses);
        self.messages_received += o.messages_received;
        self.fragmented += o.fragmented;
        self.duplicates += o.duplicates;
        self.pings += o.pings;
        self.pongs_sent += o.pongs_sent;
        self.pongs_received += o.pongs_received;
        add(&mut self.close_codes, &o.close_codes);
        add(&mut self.protocol_errors, &o.protocol_errors);
        if let Some(b) = &o.broadcast {
            self.broadcast.get_or_insert_with(Default::default).merge(b);
        }
    }

    /// The result's `websocket` object.
    pub fn to_json(&self) -> Value {
        let failures: serde_json::Map<String, Value> = self
            .handshake_failures
            .iter()
            .map(|(k, n)| (k.name().to_owned(), json!(n)))
            .collect();
        let codes = |m: &BTreeMap<u16, u64>| -> serde_json::Map<String, Value> {
            m.iter().map(|(k, n)| (k.to_string(), json!(n))).collect()
        };
        let mut doc = json!({
            "handshakes_ok": self.handshakes_ok,
            "handshake_us": crate::result::hist_summary(&self.handshake_us),
            "handshake_failures": failures,
            "handshake_statuses": codes(&self.handshake_statuses),
            "messages_received": self.messages_received,
            "fragmented": self.fragmented,
            "duplicates": self.duplicates,
            "pings": self.pings,
            "pongs_sent": self.pongs_sent,
            "pongs_received": self.pongs_received,
            "close_codes": codes(&self.close_codes),
            "protocol_errors": self.protocol_errors,
        });
        if let Some(b) = &self.broadcast {
            doc["broadcast"] = b.to_json();
        }
        doc
    }
}
