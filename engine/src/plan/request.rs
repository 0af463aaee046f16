//! The plan's `requests` entries: method, path, headers, body, weight and what the reply must be.

use serde_json::{Map, Value};

use super::expect::parse_expect;
use super::fields::{err, num, obj, string};
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
