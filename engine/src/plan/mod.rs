//! The load plan (protocol_version 1): parsing a JSON value into typed, validated settings.
//!
//! - `fields`: typed readers for JSON fields;
//! - `target`: the target address and the loopback rule;
//! - `model`: the load model and its parameters;
//! - `request`: the request kinds;
//! - `expect`: what their replies must be.

mod expect;
mod fields;
mod http2;
mod model;
mod request;
mod target;
mod tls;
pub mod trace;
mod websocket;

use std::net::SocketAddr;

use serde_json::{Map, Value};

use fields::{boolean, err, int, num, obj, positive};
pub use http2::H2Spec;
pub use model::{Arrival, ModelSpec};
pub use request::RequestSpec;
pub use target::is_loopback;
pub use tls::{CaSource, TlsSpec};
pub use websocket::WsSpec;

pub const PROTOCOL_VERSION: u64 = 1;

/// A plan that can not be run; rendered as one line on stderr (exit 2).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError(pub String);

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The engine's I/O backend (`engine_io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineIo {
    /// io_uring when the kernel offers it, else epoll.
    Auto,
    Epoll,
    IoUring,
}

fn parse_engine_io(m: &Fields) -> Result<EngineIo, PlanError> {
    match m.get("engine_io") {
        None | Some(Value::Null) => Ok(EngineIo::Auto),
        Some(Value::String(s)) if s == "auto" => Ok(EngineIo::Auto),
        Some(Value::String(s)) if s == "epoll" => Ok(EngineIo::Epoll),
        Some(Value::String(s)) if s == "io_uring" => Ok(EngineIo::IoUring),
        Some(other) => err(format!(
            "engine_io must be \"auto\", \"epoll\" or \"io_uring\", not {other}"
        )),
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub host: String,
    pub addr: SocketAddr,
    pub model: ModelSpec,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub http_minor: u8,
    pub keep_alive: bool,
    pub requests: Vec<RequestSpec>,
    pub timeout_s: f64,
    pub connect_timeout_s: f64,
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub seed: u64,
    /// Bind client sockets to 127.0.0.x (x cycling) for IPv4 loopback targets, so that
    /// connection-per-request load does not run out of ephemeral ports (engine addition).
    pub spread_source: bool,
    /// Close client sockets with SO_LINGER 0 (RST, no TIME_WAIT) (engine addition).
    pub linger_zero: bool,
    /// Open models: this host's arrivals start this long after the run's start, so that the
    /// uniform schedules of several load hosts interleave instead of arriving together.
    pub phase_ns: u64,
    /// The I/O backend asked for (engine addition).
    pub engine_io: EngineIo,
    /// Requests are WebSocket messages on upgraded connections (engine addition).
    pub websocket: Option<WsSpec>,
    /// Requests are HTTP/2 streams over h2c connections (engine addition).
    pub http2: Option<H2Spec>,
    /// Connections are TLS 1.3 (engine addition).
    pub tls: Option<TlsSpec>,
}

type Fields = Map<String, Value>;

fn check_protocol_version(m: &Fields) -> Result<(), PlanError> {
    match int(m, "protocol_version", "plan")? {
        Some(PROTOCOL_VERSION) | None => Ok(()),
        Some(other) => err(format!(
            "protocol_version {other} is not supported (engine speaks 1)"
        )),
    }
}

/// The `http` section: (minor version, keep-alive).
fn parse_http(v: Option<&Value>) -> Result<(u8, bool), PlanError> {
    let h = match v {
        None | Some(Value::Null) => return Ok((1, true)),
        Some(h) => h,
    };
    let hm = obj(h, "http")?;
    let minor = match hm.get("version") {
        None => 1,
        Some(Value::String(s)) if s == "1.1" => 1,
        Some(Value::String(s)) if s == "1.0" => 0,
        Some(Value::Number(n)) if n.as_f64() == Some(1.1) => 1,
        Some(Value::Number(n)) if n.as_f64() == Some(1.0) => 0,
        Some(other) => {
            return err(format!(
                "http.version must be \"1.0\" or \"1.1\", not {other}"
            ))
        }
    };
    // HTTP/1.0 defaults to one request per connection, 1.1 to keep-alive.
    Ok((
        minor,
        boolean(hm, "keep_alive", "http")?.unwrap_or(minor == 1),
    ))
}

/// (timeout_s, connect_timeout_s); the connect timeout defaults to the request timeout.
fn parse_timeouts(m: &Fields) -> Result<(f64, f64), PlanError> {
    let timeout_s = positive(num(m, "timeout_s", "plan")?.unwrap_or(5.0), "timeout_s")?;
    let connect_timeout_s = positive(
        num(m, "connect_timeout_s", "plan")?.unwrap_or(timeout_s),
        "connect_timeout_s",
    )?;
    Ok((timeout_s, connect_timeout_s))
}

fn parse_threads(m: &Fields) -> Result<usize, PlanError> {
    let threads = int(m, "threads", "plan")?.unwrap_or(1);
    if !(1..=256).contains(&threads) {
        return err("threads must be in 1..=256");
    }
    Ok(threads as usize)
}

fn parse_cpus(v: Option<&Value>) -> Result<Vec<usize>, PlanError> {
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(1024);
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|c| match c.as_u64() {
                Some(c) if (c as usize) < ncpu => Ok(c as usize),
                _ => err("cpus must be a list of CPU numbers"),
            })
            .collect(),
        Some(_) => err("cpus must be a list of CPU numbers"),
    }
}

/// `phase_s`: from 0 up to (not including) one second.
fn parse_phase(m: &Fields) -> Result<u64, PlanError> {
    match num(m, "phase_s", "plan")? {
        None => Ok(0),
        Some(p) if (0.0..1.0).contains(&p) => Ok(crate::clock::secs_to_ns(p)),
        Some(p) => err(format!("phase_s must be in [0, 1) seconds, not {p}")),
    }
}

impl Plan {
    pub fn from_value(v: &Value) -> Result<Plan, PlanError> {
        let m = obj(v, "plan")?;
        check_protocol_version(m)?;
        let (host, addr) = target::parse_target(m)?;
        let model = model::parse_model(m.get("model").unwrap_or(&Value::Null))?;
        let (http_minor, keep_alive) = parse_http(m.get("http"))?;
        let requests = request::parse_requests(m.get("requests"))?;
        let (timeout_s, connect_timeout_s) = parse_timeouts(m)?;
        let threads = parse_threads(m)?;
        let cpus = parse_cpus(m.get("cpus"))?;
        let websocket =
            websocket::parse_websocket(m.get("websocket"), &requests, http_minor, keep_alive)?;
        let http2 = http2::parse_http2(
            m.get("http2"),
            &model,
            keep_alive,
            websocket.is_some(),
            &requests,
        )?;
        let tls = tls::parse_tls(m.get("tls"), &host)?;
        let engine_io = parse_engine_io(m)?;
        websocket::check_broadcast(&model, websocket.as_ref(), tls.is_some(), engine_io)?;
        let streams = websocket.is_some() || http2.is_some();
        model::check_pool(&model, keep_alive, streams, threads)?;
        trace::check_kinds(&model, requests.len())?;
        Ok(Plan {
            host,
            addr,
            model,
            http_minor,
            keep_alive,
            requests,
            timeout_s,
            connect_timeout_s,
            threads,
            cpus,
            seed: int(m, "seed", "plan")?.unwrap_or(1),
            spread_source: boolean(m, "spread_source", "plan")?.unwrap_or(true),
            linger_zero: boolean(m, "linger_zero", "plan")?.unwrap_or(false),
            phase_ns: parse_phase(m)?,
            engine_io,
            websocket,
            http2,
            tls,
        })
    }

    /// The Host header value: `host[:port]`.
    pub fn host_header(&self) -> String {
        let h = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.addr.port() == 80 {
            h
        } else {
            format!("{h}:{}", self.addr.port())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Body;
    use serde_json::json;

    fn base() -> Value {
        json!({"protocol_version": 1, "target": {"host": "127.0.0.1", "port": 8080},
               "model": {"kind": "closed", "connections": 4, "duration_s": 1.0},
               "requests": [{"name": "pong", "path": "/", "expect": {"status": 200, "body": "Pong!"}}]})
    }

    #[test]
    fn parses_defaults() {
        let p = Plan::from_value(&base()).unwrap();
        assert_eq!(
            p.model,
            ModelSpec::Closed {
                connections: 4,
                duration_s: 1.0,
                pipeline: 1
            }
        );
        assert_eq!((p.http_minor, p.keep_alive, p.threads), (1, true, 1));
        assert_eq!(p.requests[0].expect.body, Body::Exact(b"Pong!".to_vec()));
        assert_eq!(p.timeout_s, 5.0);
    }

    #[test]
    fn accepts_integral_floats_and_conn_rate_alias() {
        let mut v = base();
        v["model"] = json!({"kind": "conn_rate", "rate": 100.0, "duration_s": 2, "calls": 10.0});
        match Plan::from_value(&v).unwrap().model {
            ModelSpec::Rate { calls, rate, .. } => assert_eq!((calls, rate), (10, 100.0)),
            m => panic!("wrong model {m:?}"),
        }
    }

    #[test]
    fn a_pool_needs_keep_alive_and_a_connection_per_thread() {
        let mut v = base();
        v["model"] = json!({"kind": "rate", "rate": 100, "duration_s": 1, "pool": 2});
        match Plan::from_value(&v).unwrap().model {
            ModelSpec::Rate { pool, calls, .. } => assert_eq!((pool, calls), (Some(2), 1)),
            m => panic!("wrong model {m:?}"),
        }
        v["threads"] = json!(3);
        let e = Plan::from_value(&v).unwrap_err().0;
        assert!(e.contains("at least the threads"), "{e}");
        v["threads"] = json!(1);
        v["http"] = json!({"version": "1.1", "keep_alive": false});
        let e = Plan::from_value(&v).unwrap_err().0;
        assert!(e.contains("keep-alive"), "{e}");
    }

    #[test]
    fn rejects_bad_plans() {
        let cases: Vec<(Value, &str)> = vec![
            (json!({"kind": "closed", "duration_s": 1}), "connections"),
            (json!({"kind": "bogus"}), "model.kind"),
            (
                json!({"kind": "rate", "rate": 10}),
                "duration_s or connections_total",
            ),
            (
                json!({"kind": "rate", "rate": 10, "duration_s": 1, "pool": 0}),
                "model.pool must be >= 1",
            ),
            (
                json!({"kind": "rate", "rate": 10, "duration_s": 1, "pool": 4, "calls": 2}),
                "one request per arrival",
            ),
        ];
        for (model, needle) in cases {
            let mut v = base();
            v["model"] = model;
            let e = Plan::from_value(&v).unwrap_err();
            assert!(e.0.contains(needle), "{e:?} lacks {needle}");
        }
        let mut v = base();
        v["requests"][0]["expect"] = json!({"status": 200, "body": "x", "body_len": 1});
        assert!(Plan::from_value(&v).unwrap_err().0.contains("at most one"));
        let mut v = base();
        v["target"]["host"] = json!("10.1.2.3");
        assert!(Plan::from_value(&v)
            .unwrap_err()
            .0
            .contains("outside loopback"));
        v["allow_remote"] = json!(true);
        assert!(Plan::from_value(&v).is_ok());
    }

    #[test]
    fn websocket_plans_take_one_get_over_keep_alive() {
        let mut v = base();
        v["websocket"] = json!({"message_bytes": 128});
        let p = Plan::from_value(&v).unwrap();
        assert_eq!(p.websocket, Some(WsSpec { message_bytes: 128 }));
        v["websocket"] = json!({});
        assert_eq!(
            Plan::from_value(&v)
                .unwrap()
                .websocket
                .unwrap()
                .message_bytes,
            64
        );
        let refused = [
            (json!({"message_bytes": 8}), None, "message_bytes"),
            (json!({}), Some(json!({"keep_alive": false})), "keep-alive"),
        ];
        for (ws, http, needle) in refused {
            let mut v = base();
            v["websocket"] = ws;
            if let Some(h) = http {
                v["http"] = h;
            }
            assert!(
                Plan::from_value(&v).unwrap_err().0.contains(needle),
                "{needle}"
            );
        }
        let mut v = base();
        v["websocket"] = json!({});
        v["requests"][0]["method"] = json!("POST");
        assert!(Plan::from_value(&v).unwrap_err().0.contains("exactly one"));
    }
}
