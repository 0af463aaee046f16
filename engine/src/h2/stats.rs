//! What a thread saw of HTTP/2 beyond each request's outcome: the server's settings, GOAWAY and
//! RST_STREAM by error code, streams the server refused by GOAWAY and sent again, flow control,
//! and frames that broke the protocol.

use std::collections::BTreeMap;

use serde_json::{json, Value};

#[derive(Default)]
pub struct H2Stats {
    pub connections: u64,
    pub streams: u64,
    /// GOAWAY frames from the server, by error code.
    pub goaways: BTreeMap<u32, u64>,
    /// Streams the server reset, by error code (each one a `stream_reset` request).
    pub rst_streams: BTreeMap<u32, u64>,
    /// Streams above a GOAWAY's last stream id: never processed, sent again on a new connection.
    pub refused_by_goaway: u64,
    pub settings_received: u64,
    /// The smallest SETTINGS_MAX_CONCURRENT_STREAMS a server gave (None: never limited).
    pub max_concurrent_streams: Option<u32>,
    pub pings: u64,
    pub window_updates_sent: u64,
    pub window_updates_received: u64,
    /// Times a request body waited for the server's flow-control window.
    pub window_stalls: u64,
    /// Frames that broke the protocol, by what was wrong.
    pub protocol_errors: BTreeMap<&'static str, u64>,
}

fn add<K: Ord + Copy>(a: &mut BTreeMap<K, u64>, b: &BTreeMap<K, u64>) {
    for (k, n) in b {
        *a.entry(*k).or_default() += n;
    }
}

impl H2Stats {
    pub fn protocol_error(&mut self, what: &'static str) {
        *self.protocol_errors.entry(what).or_default() += 1;
    }

    pub fn merge(&mut self, o: &H2Stats) {
        self.connections += o.connections;
        self.streams += o.streams;
        add(&mut self.goaways, &o.goaways);
        add(&mut self.rst_streams, &o.rst_streams);
        self.refused_by_goaway += o.refused_by_goaway;
        self.settings_received += o.settings_received;
        self.max_concurrent_streams = match (self.max_concurrent_streams, o.max_concurrent_streams)
        {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.pings += o.pings;
        self.window_updates_sent += o.window_updates_sent;
        self.window_updates_received += o.window_updates_received;
        self.window_stalls += o.window_stalls;
        add(&mut self.protocol_errors, &o.protocol_errors);
    }

    /// The result's `http2` object.
    pub fn to_json(&self) -> Value {
        let codes = |m: &BTreeMap<u32, u64>| -> serde_json::Map<String, Value> {
            m.iter().map(|(k, n)| (k.to_string(), json!(n))).collect()
        };
        json!({
            "connections": self.connections,
            "streams": self.streams,
            "goaways": codes(&self.goaways),
            "rst_streams": codes(&self.rst_streams),
            "refused_by_goaway": self.refused_by_goaway,
            "settings_received": self.settings_received,
            "max_concurrent_streams": self.max_concurrent_streams,
            "pings": self.pings,
            "window_updates_sent": self.window_updates_sent,
            "window_updates_received": self.window_updates_received,
            "window_stalls": self.window_stalls,
            "protocol_errors": self.protocol_errors,
        })
    }
}
