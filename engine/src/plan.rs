//! The load plan (protocol_version 1): parsing a JSON value into typed, validated settings.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use serde_json::{Map, Value};

use crate::validate::Expect;

pub const PROTOCOL_VERSION: u64 = 1;

/// A plan that can not be run; rendered as one line on stderr (exit 2).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError(pub String);

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError(msg.into()))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    Uniform,
    Poisson,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    Closed {
        connections: u64,
        duration_s: f64,
        pipeline: u32,
    },
    Rate {
        rate: f64,
        duration_s: Option<f64>,
        connections_total: Option<u64>,
        arrival: Arrival,
        calls: u64,
        pipeline: bool,
    },
    Sessions {
        users_per_s: f64,
        duration_s: f64,
        requests: u64,
        think_s: f64,
        arrival: Arrival,
    },
    Count {
        requests: u64,
        concurrency: u64,
    },
}

impl ModelSpec {
    /// Open models measure latency from the intended send time (coordinated-omission corrected).
    pub fn is_open(&self) -> bool {
        matches!(self, ModelSpec::Rate { .. } | ModelSpec::Sessions { .. })
    }
}

#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub name: String,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub weight: f64,
    pub expect_status: u16,
    pub expect: Expect,
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
    pub allow_remote: bool,
    /// Bind client sockets to 127.0.0.x (x cycling) for IPv4 loopback targets, so that
    /// connection-per-request load does not run out of ephemeral ports (engine addition).
    pub spread_source: bool,
    /// Close client sockets with SO_LINGER 0 (RST, no TIME_WAIT) (engine addition).
    pub linger_zero: bool,
}

fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, PlanError> {
    match v.as_object() {
        Some(m) => Ok(m),
        None => err(format!("{what} must be an object")),
    }
}

fn num(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<Option<f64>, PlanError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => err(format!("{ctx}.{key} must be a number")),
        },
    }
}

/// Integers may arrive as 100.0 from Python; accept integral floats.
fn int(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<Option<u64>, PlanError> {
    match num(m, key, ctx)? {
        None => Ok(None),
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 1e18 => Ok(Some(x as u64)),
        Some(_) => err(format!("{ctx}.{key} must be a non-negative integer")),
    }
}

fn req_int(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<u64, PlanError> {
    int(m, key, ctx)?.map_or_else(|| err(format!("{ctx}.{key} is required")), Ok)
}

fn req_num(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<f64, PlanError> {
    num(m, key, ctx)?.map_or_else(|| err(format!("{ctx}.{key} is required")), Ok)
}

fn boolean(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<Option<bool>, PlanError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => err(format!("{ctx}.{key} must be a boolean")),
    }
}

fn string<'a>(
    m: &'a Map<String, Value>,
    key: &str,
    ctx: &str,
) -> Result<Option<&'a str>, PlanError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => err(format!("{ctx}.{key} must be a string")),
    }
}

fn positive(x: f64, what: &str) -> Result<f64, PlanError> {
    if x > 0.0 {
        Ok(x)
    } else {
        err(format!("{what} must be > 0"))
    }
}

fn arrival(m: &Map<String, Value>) -> Result<Arrival, PlanError> {
    match string(m, "arrival", "model")? {
        None | Some("uniform") => Ok(Arrival::Uniform),
        Some("poisson") => Ok(Arrival::Poisson),
        Some(other) => err(format!(
            "model.arrival must be \"uniform\" or \"poisson\", not {other:?}"
        )),
    }
}

fn parse_model(v: &Value) -> Result<ModelSpec, PlanError> {
    let m = obj(v, "model")?;
    let c = "model";
    let kind = string(m, "kind", c)?.ok_or_else(|| PlanError("model.kind is required".into()))?;
    Ok(match kind {
        "closed" => {
            let connections = req_int(m, "connections", c)?;
            if connections == 0 {
                return err("model.connections must be >= 1");
            }
            let pipeline = int(m, "pipeline", c)?.unwrap_or(1);
            if !(1..=1024).contains(&pipeline) {
                return err("model.pipeline must be in 1..=1024");
            }
            ModelSpec::Closed {
                connections,
                duration_s: positive(req_num(m, "duration_s", c)?, "model.duration_s")?,
                pipeline: pipeline as u32,
            }
        }
        "rate" | "conn_rate" => {
            let duration_s = num(m, "duration_s", c)?;
            let connections_total = int(m, "connections_total", c)?;
            if duration_s.is_none() && connections_total.is_none() {
                return err("model rate needs duration_s or connections_total");
            }
            if let Some(d) = duration_s {
                positive(d, "model.duration_s")?;
            }
            let calls = int(m, "calls", c)?.unwrap_or(1);
            if calls == 0 {
                return err("model.calls must be >= 1");
            }
            let pipeline = match m.get("pipeline") {
                // `pipeline: 1` (a depth, as in closed) is accepted as "no pipelining".
                Some(Value::Number(n)) => n.as_f64().unwrap_or(1.0) > 1.0,
                _ => boolean(m, "pipeline", c)?.unwrap_or(false),
            };
            ModelSpec::Rate {
                rate: positive(req_num(m, "rate", c)?, "model.rate")?,
                duration_s,
                connections_total,
                arrival: arrival(m)?,
                calls,
                pipeline,
            }
        }
        "sessions" => {
            let requests = int(m, "requests", c)?.unwrap_or(1);
            if requests == 0 {
                return err("model.requests must be >= 1");
            }
            let think_s = num(m, "think_s", c)?.unwrap_or(0.0);
            if think_s < 0.0 {
                return err("model.think_s must be >= 0");
            }
            ModelSpec::Sessions {
                users_per_s: positive(req_num(m, "users_per_s", c)?, "model.users_per_s")?,
                duration_s: positive(req_num(m, "duration_s", c)?, "model.duration_s")?,
                requests,
                think_s,
                arrival: arrival(m)?,
            }
        }
        "count" => {
            let requests = req_int(m, "requests", c)?;
            let concurrency = req_int(m, "concurrency", c)?;
            if requests == 0 || concurrency == 0 {
                return err("model.requests and model.concurrency must be >= 1");
            }
            ModelSpec::Count {
                requests,
                concurrency,
            }
        }
        other => {
            return err(format!(
                "model.kind must be closed, rate, conn_rate, sessions or count, not {other:?}"
            ))
        }
    })
}

fn parse_expect(v: Option<&Value>, ctx: &str) -> Result<(u16, Expect), PlanError> {
    let Some(v) = v else {
        return Ok((200, Expect::None));
    };
    let m = obj(v, &format!("{ctx}.expect"))?;
    let c = format!("{ctx}.expect");
    let status = req_int(m, "status", &c)?;
    if !(100..=999).contains(&status) {
        return err(format!("{c}.status must be an HTTP status code"));
    }
    let mut checks = Vec::new();
    if let Some(b) = string(m, "body", &c)? {
        checks.push(Expect::Exact(b.as_bytes().to_vec()));
    }
    if let Some(n) = int(m, "body_len", &c)? {
        checks.push(Expect::Len(n));
    }
    if let Some(h) = string(m, "body_sha256", &c)? {
        let bytes = decode_hex(h).filter(|b| b.len() == 32);
        match bytes {
            Some(b) => checks.push(Expect::Sha256(b.try_into().expect("32 bytes"))),
            None => return err(format!("{c}.body_sha256 must be 64 hex digits")),
        }
    }
    if let Some(f) = m.get("body_float") {
        let fm = obj(f, &format!("{c}.body_float"))?;
        let fc = format!("{c}.body_float");
        let min = num(fm, "min", &fc)?.unwrap_or(f64::NEG_INFINITY);
        let max = num(fm, "max", &fc)?.unwrap_or(f64::INFINITY);
        checks.push(Expect::Float { min, max });
    }
    if checks.len() > 1 {
        return err(format!(
            "{c} may hold at most one of body, body_len, body_sha256, body_float"
        ));
    }
    Ok((status as u16, checks.pop().unwrap_or(Expect::None)))
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn parse_request(v: &Value, i: usize) -> Result<RequestSpec, PlanError> {
    let c = format!("requests[{i}]");
    let m = obj(v, &c)?;
    let name = string(m, "name", &c)?
        .map(str::to_owned)
        .unwrap_or_else(|| format!("r{i}"));
    let method = string(m, "method", &c)?.unwrap_or("GET").to_owned();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return err(format!("{c}.method must be an HTTP method"));
    }
    let path = string(m, "path", &c)?.unwrap_or("/").to_owned();
    if !path.starts_with('/') || path.bytes().any(|b| b <= b' ') {
        return err(format!("{c}.path must start with / and hold no spaces"));
    }
    let mut headers = Vec::new();
    if let Some(h) = m.get("headers") {
        for (k, val) in obj(h, &format!("{c}.headers"))? {
            let Some(s) = val.as_str() else {
                return err(format!("{c}.headers.{k} must be a string"));
            };
            if k.is_empty() || k.bytes().any(|b| b <= b' ' || b == b':') || s.contains(['\r', '\n'])
            {
                return err(format!("{c}.headers.{k} is not a valid header"));
            }
            headers.push((k.clone(), s.to_owned()));
        }
    }
    let body = string(m, "body", &c)?.unwrap_or("").as_bytes().to_vec();
    let weight = num(m, "weight", &c)?.unwrap_or(1.0);
    if weight < 0.0 {
        return err(format!("{c}.weight must be >= 0"));
    }
    let (expect_status, expect) = parse_expect(m.get("expect"), &c)?;
    Ok(RequestSpec {
        name,
        method,
        path,
        headers,
        body,
        weight,
        expect_status,
        expect,
    })
}

/// 127.0.0.0/8 and ::1 (also IPv4-mapped loopback).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

impl Plan {
    pub fn from_value(v: &Value) -> Result<Plan, PlanError> {
        let m = obj(v, "plan")?;
        match int(m, "protocol_version", "plan")? {
            Some(PROTOCOL_VERSION) | None => {}
            Some(other) => {
                return err(format!(
                    "protocol_version {other} is not supported (engine speaks 1)"
                ))
            }
        }
        let t = obj(m.get("target").unwrap_or(&Value::Null), "target")?;
        let host = string(t, "host", "target")?
            .unwrap_or("127.0.0.1")
            .to_owned();
        let port = req_int(t, "port", "target")?;
        if port == 0 || port > 65535 {
            return err("target.port must be in 1..=65535");
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addr = match (bare, port as u16).to_socket_addrs() {
            Ok(mut it) => match it.next() {
                Some(a) => a,
                None => return err(format!("target.host {host:?} does not resolve")),
            },
            Err(e) => return err(format!("target.host {host:?} does not resolve: {e}")),
        };
        let allow_remote = boolean(m, "allow_remote", "plan")?.unwrap_or(false);
        if !allow_remote && !is_loopback(addr.ip()) {
            return err(format!(
                "target {addr} is outside loopback; refusing without allow_remote / --allow-remote"
            ));
        }
        let model = parse_model(m.get("model").unwrap_or(&Value::Null))?;
        let (http_minor, keep_alive) = match m.get("http") {
            None | Some(Value::Null) => (1, true),
            Some(h) => {
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
                (
                    minor,
                    boolean(hm, "keep_alive", "http")?.unwrap_or(minor == 1),
                )
            }
        };
        let reqs = match m.get("requests") {
            Some(Value::Array(a)) if !a.is_empty() => a,
            _ => return err("requests must be a non-empty array"),
        };
        let requests = reqs
            .iter()
            .enumerate()
            .map(|(i, r)| parse_request(r, i))
            .collect::<Result<Vec<_>, _>>()?;
        if requests.len() > u16::MAX as usize {
            return err("too many request kinds");
        }
        if requests.iter().map(|r| r.weight).sum::<f64>() <= 0.0 {
            return err("request weights must not all be 0");
        }
        let timeout_s = positive(num(m, "timeout_s", "plan")?.unwrap_or(5.0), "timeout_s")?;
        let connect_timeout_s = positive(
            num(m, "connect_timeout_s", "plan")?.unwrap_or(timeout_s),
            "connect_timeout_s",
        )?;
        let threads = int(m, "threads", "plan")?.unwrap_or(1);
        if !(1..=256).contains(&threads) {
            return err("threads must be in 1..=256");
        }
        let ncpu = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .max(1024);
        let cpus = match m.get("cpus") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|c| match c.as_u64() {
                    Some(c) if (c as usize) < ncpu => Ok(c as usize),
                    _ => err("cpus must be a list of CPU numbers"),
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return err("cpus must be a list of CPU numbers"),
        };
        Ok(Plan {
            host,
            addr,
            model,
            http_minor,
            keep_alive,
            requests,
            timeout_s,
            connect_timeout_s,
            threads: threads as usize,
            cpus,
            seed: int(m, "seed", "plan")?.unwrap_or(1),
            allow_remote,
            spread_source: boolean(m, "spread_source", "plan")?.unwrap_or(true),
            linger_zero: boolean(m, "linger_zero", "plan")?.unwrap_or(false),
        })
    }

    /// The Host header value: host[:port].
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
        assert_eq!(p.requests[0].expect, Expect::Exact(b"Pong!".to_vec()));
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
    fn rejects_bad_plans() {
        let cases: Vec<(Value, &str)> = vec![
            (json!({"kind": "closed", "duration_s": 1}), "connections"),
            (json!({"kind": "bogus"}), "model.kind"),
            (
                json!({"kind": "rate", "rate": 10}),
                "duration_s or connections_total",
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
}
