//! The plan's `websocket` section: each request is a WebSocket message on an upgraded
//! connection, echoed by the server (engine addition).

use serde_json::Value;

use super::fields::{err, int, obj};
use super::{EngineIo, ModelSpec, PlanError, RequestSpec};
use crate::ws::{BROADCAST_HEAD, MAX_PAYLOAD, SEQ_DIGITS};

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

/// A broadcast model needs a `websocket` section (its messages of at least their 32-byte head)
/// and runs over plain TCP on epoll; the other models are not checked here.
pub(super) fn check_broadcast(
    model: &ModelSpec,
    ws: Option<&WsSpec>,
    tls: bool,
    engine_io: EngineIo,
) -> Result<(), PlanError> {
    if !matches!(model, ModelSpec::Broadcast { .. }) {
        return Ok(());
    }
    let Some(ws) = ws else {
        return err("model broadcast needs a websocket section (its messages' size)");
    };
    if ws.message_bytes < BROADCAST_HEAD {
        return err(format!(
            "model broadcast: websocket.message_bytes must be >= {BROADCAST_HEAD} (each message carries its number and when it was due)"
        ));
    }
    if tls {
        return err("model broadcast runs over plain TCP here: no tls");
    }
    if engine_io == EngineIo::IoUring {
        return err("model broadcast runs on epoll: engine_io \"io_uring\" is not offered");
    }
    Ok(())
}
