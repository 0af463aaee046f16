//! The plan's `websocket` section: each request is a WebSocket message on an upgraded
//! connection, echoed by the server (engine addition).

use serde_json::Value;

use super::fields::{err, int, obj};
use super::{PlanError, RequestSpec};
use crate::ws::{MAX_PAYLOAD, SEQ_DIGITS};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsSpec {
    /// Bytes of each message (its number and a filler).
    pub message_bytes: usize,
}

/// `websocket`, checked against the rest of the plan: one request (the upgrade's path and
/// headers), HTTP/1.1 with keep-alive.
pub(super) fn parse_websocket(
    v: Option<&Value>,
    requests: &[RequestSpec],
    http_minor: u8,
    keep_alive: bool,
) -> Result<Option<WsSpec>, PlanError> {
    let w = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(w) => obj(w, "websocket")?,
    };
    let bytes = int(w, "message_bytes", "websocket")?.unwrap_or(64);
    if !(SEQ_DIGITS as u64..=MAX_PAYLOAD).contains(&bytes) {
        return err(format!(
            "websocket.message_bytes must be in {SEQ_DIGITS}..={MAX_PAYLOAD} (each message carries its 16-digit number)"
        ));
    }
    if requests.len() != 1 || !requests[0].method.eq_ignore_ascii_case("GET") {
        return err("websocket needs exactly one request, a GET: the upgrade's path and headers");
    }
    if http_minor != 1 || !keep_alive {
        return err("websocket needs HTTP/1.1 with keep-alive (the upgrade keeps the connection)");
    }
    Ok(Some(WsSpec {
        message_bytes: bytes as usize,
    }))
}
