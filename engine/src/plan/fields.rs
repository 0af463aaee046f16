//! Typed readers for plan JSON fields; each error names the field it is about.

use serde_json::{Map, Value};

use super::PlanError;

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError(msg.into()))
}

pub(super) fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, PlanError> {
    match v.as_object() {
        Some(m) => Ok(m),
        None => err(format!("{what} must be an object")),
    }
}

pub(super) fn num(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<Option<f64>, PlanError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => err(format!("{ctx}.{key} must be a number")),
        },
    }
}

/// Integers may arrive as 100.0 from Python; accept integral floats.
pub(super) fn int(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<Option<u64>, PlanError> {
    match num(m, key, ctx)? {
        None => Ok(None),
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 1e18 => Ok(Some(x as u64)),
        Some(_) => err(format!("{ctx}.{key} must be a non-negative integer")),
    }
}

pub(super) fn req_int(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<u64, PlanError> {
    int(m, key, ctx)?.map_or_else(|| err(format!("{ctx}.{key} is required")), Ok)
}

pub(super) fn req_num(m: &Map<String, Value>, key: &str, ctx: &str) -> Result<f64, PlanError> {
    num(m, key, ctx)?.map_or_else(|| err(format!("{ctx}.{key} is required")), Ok)
}

pub(super) fn boolean(
    m: &Map<String, Value>,
    key: &str,
    ctx: &str,
) -> Result<Option<bool>, PlanError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => err(format!("{ctx}.{key} must be a boolean")),
    }
}

pub(super) fn string<'a>(
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

pub(super) fn positive(x: f64, what: &str) -> Result<f64, PlanError> {
    if x > 0.0 {
        Ok(x)
    } else {
        err(format!("{what} must be > 0"))
    }
}
