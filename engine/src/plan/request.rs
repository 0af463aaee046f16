//! The plan's `requests` entries: method, path, headers, body, weight and what the reply must be.

use serde_json::{Map, Value};

use super::fields::{err, int, num, obj, req_int, string};
use super::PlanError;
use crate::validate::Expect;

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

/// The request kinds of a plan: a non-empty array, weights not all 0.
pub(super) fn parse_requests(v: Option<&Value>) -> Result<Vec<RequestSpec>, PlanError> {
    let reqs = match v {
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
    Ok(requests)
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
    let headers = parse_headers(m, &c)?;
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

fn parse_headers(m: &Map<String, Value>, c: &str) -> Result<Vec<(String, String)>, PlanError> {
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
    Ok(headers)
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
