//! The plan's `http2` section: requests go as HTTP/2 streams over cleartext connections opened
//! with prior knowledge (h2c), `streams` of them at once on each connection (engine addition).

use serde_json::Value;

use super::fields::{err, int, obj};
use super::{ModelSpec, PlanError, RequestSpec};
use crate::h2::MAX_WINDOW;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H2Spec {
    /// Concurrent streams per connection (fewer when the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS is lower).
    pub streams: u32,
    /// The receive window the engine offers for each stream and for the connection.
    pub window_bytes: u32,
}

/// Most concurrent streams a plan may ask for on one connection.
pub const MAX_STREAMS: u64 = 1000;
/// The receive window offered unless the plan says otherwise (h2load's default too).
pub const DEFAULT_WINDOW: u64 = (1 << 30) - 1;

/// `http2`, checked against the rest of the plan: HTTP/1.1 keep-alive semantics (one connection
/// carries many requests), no WebSocket, no pipelining (streams replace it).
pub(super) fn parse_http2(
    v: Option<&Value>,
    model: &ModelSpec,
    keep_alive: bool,
    websocket: bool,
    requests: &[RequestSpec],
) -> Result<Option<H2Spec>, PlanError> {
    let h = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(h) => obj(h, "http2")?,
    };
    let streams = int(h, "streams", "http2")?.unwrap_or(1);
    if !(1..=MAX_STREAMS).contains(&streams) {
        return err(format!("http2.streams must be in 1..={MAX_STREAMS}"));
    }
    let window = int(h, "window_bytes", "http2")?.unwrap_or(DEFAULT_WINDOW);
    if !(1024..=MAX_WINDOW as u64).contains(&window) {
        return err(format!("http2.window_bytes must be in 1024..={MAX_WINDOW}"));
    }
    if websocket {
        return err("http2 and websocket exclude each other");
    }
    if !keep_alive {
        return err("http2 needs keep_alive: a connection carries many streams");
    }
    let pipelined = match model {
        ModelSpec::Closed { pipeline, .. } => *pipeline > 1,
        ModelSpec::Rate { pipeline, .. } => *pipeline,
        _ => false,
    };
    if pipelined {
        return err("http2 takes http2.streams, not model.pipeline");
    }
    if let Some(r) = requests
        .iter()
        .find(|r| r.method.eq_ignore_ascii_case("CONNECT"))
    {
        return err(format!("http2 cannot send {} (CONNECT)", r.name));
    }
    Ok(Some(H2Spec {
        streams: streams as u32,
        window_bytes: window as u32,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::plan::Plan;

    fn base() -> serde_json::Value {
        json!({
            "protocol_version": 1,
            "target": {"host": "127.0.0.1", "port": 8000},
            "model": {"kind": "closed", "connections": 2, "duration_s": 1},
            "requests": [{"path": "/"}],
        })
    }

    #[test]
    fn http2_plans_take_streams_and_a_window() {
        let mut v = base();
        v["http2"] = json!({"streams": 10});
        let h = Plan::from_value(&v).unwrap().http2.unwrap();
        assert_eq!((h.streams, h.window_bytes), (10, (1 << 30) - 1));
        v["http2"] = json!({"window_bytes": 4096});
        let h = Plan::from_value(&v).unwrap().http2.unwrap();
        assert_eq!((h.streams, h.window_bytes), (1, 4096));
        assert!(Plan::from_value(&base()).unwrap().http2.is_none());
    }

    #[test]
    fn http2_plans_refuse_what_they_cannot_do() {
        let refused = [
            ("http2", json!({"streams": 0}), "streams"),
            ("http2", json!({"streams": 1001}), "streams"),
            ("http2", json!({"window_bytes": 10}), "window_bytes"),
            ("websocket", json!({}), "websocket"),
            ("http", json!({"keep_alive": false}), "keep_alive"),
            (
                "model",
                json!({"kind": "closed", "connections": 1, "duration_s": 1, "pipeline": 4}),
                "pipeline",
            ),
        ];
        for (key, val, needle) in refused {
            let mut v = base();
            v["http2"] = json!({"streams": 2});
            v[key] = val;
            let e = Plan::from_value(&v).unwrap_err().0;
            assert!(e.contains(needle), "{key}: {e}");
        }
    }
}
