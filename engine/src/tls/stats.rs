//! What a thread saw of TLS: handshakes (full and resumed) and their time, the protocol ALPN
//! chose, and failures by reason.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::{json, Value};

use super::TlsFailure;
use crate::stats::{new_hist, record_us};

pub struct TlsStats {
    /// Handshakes completed.
    pub handshakes: u64,
    /// Of those, resumed from an earlier connection's session ticket.
    pub resumed: u64,
    /// From the TCP connect's end to the handshake's end, µs.
    pub handshake_us: Histogram<u64>,
    /// The protocol ALPN chose, per completed handshake ("" when none was chosen).
    pub alpn: BTreeMap<String, u64>,
    /// Connections whose TLS failed, by reason.
    pub failures: BTreeMap<TlsFailure, u64>,
    /// The cipher suite of each completed handshake.
    pub cipher_suites: BTreeMap<String, u64>,
    /// close_notify alerts the server sent.
    pub close_notify: u64,
}

impl Default for TlsStats {
    fn default() -> Self {
        TlsStats {
            handshakes: 0,
            resumed: 0,
            handshake_us: new_hist(),
            alpn: BTreeMap::new(),
            failures: BTreeMap::new(),
            cipher_suites: BTreeMap::new(),
            close_notify: 0,
        }
    }
}

impl TlsStats {
    pub fn handshake(&mut self, us: u64, resumed: bool, alpn: Option<&[u8]>, suite: &str) {
        *self.cipher_suites.entry(suite.to_string()).or_default() += 1;
        self.handshakes += 1;
        self.resumed += u64::from(resumed);
        record_us(&mut self.handshake_us, us);
        let name = alpn.map_or_else(String::new, |a| String::from_utf8_lossy(a).into_owned());
        *self.alpn.entry(name).or_default() += 1;
    }

    pub fn failed(&mut self, why: TlsFailure) {
        *self.failures.entry(why).or_default() += 1;
    }

    pub fn merge(&mut self, o: &TlsStats) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        self.handshake_us.add(&o.handshake_us).expect("same bounds");
        for (k, n) in &o.alpn {
            *self.alpn.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.cipher_suites {
            *self.cipher_suites.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.failures {
            *self.failures.entry(*k).or_default() += n;
        }
        self.close_notify += o.close_notify;
    }

    /// The result's `tls` object; `server_name` and `verified` come from the plan.
    pub fn to_json(&self, server_name: &str, verified: bool) -> Value {
        let h = &self.handshake_us;
        let pct = |q: f64| (!h.is_empty()).then(|| h.value_at_quantile(q));
        let failures: serde_json::Map<String, Value> = self
            .failures
            .iter()
            .map(|(k, n)| (k.name().to_string(), json!(n)))
            .collect();
        json!({
            "version": "TLSv1.3",
            "server_name": server_name,
            "verified": verified,
            "handshakes": self.handshakes,
            "resumed": self.resumed,
            "handshake_us": {
                "p50": pct(0.5),
                "p99": pct(0.99),
                "max": (!h.is_empty()).then(|| h.max()),
            },
            "alpn": self.alpn,
            "failures": failures,
            "cipher_suites": self.cipher_suites,
            "close_notify": self.close_notify,
        })
    }
}
