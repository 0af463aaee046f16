//! The `trace` model's fields and its schedule file: each request's offset and kind, read once.
//!
//! The file is `WBTRACE1` then one little-endian u64 per request, ascending:
//! `offset_us << 16 | kind` (the offset in µs from the trace's start at speed 1, the kind an
//! index into the plan's `requests`).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::fields::{err, int, num, positive, req_int, req_num, string};
use super::PlanError;

/// The schedule file's first bytes.
pub const MAGIC: &[u8; 8] = b"WBTRACE1";
/// Bits of a record that hold the kind; the offset is above them.
pub const KIND_BITS: u32 = 16;
/// The most request kinds a schedule can name.
pub const MAX_KINDS: usize = 1 << KIND_BITS;

#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpec {
    /// 2.0: the same requests in half the time.
    pub speed: f64,
    /// Where the schedule was read from (for messages).
    pub path: String,
    /// The records, ascending by offset.
    pub records: Arc<[u64]>,
    /// The trace's span at speed 1: every offset is below it.
    pub span_s: f64,
    /// Only records with offsets below this are sent (a warm-up replays the start); None: all.
    pub duration_s: Option<f64>,
    /// A fixed pool of keep-alive connections carries the requests; None: a connection each.
    pub pool: Option<u64>,
    /// This load host's records: `first`, `first + stride`, … (one host: 0 and 1).
    pub first: u64,
    pub stride: u64,
}

impl TraceSpec {
    /// The measured window: the span replayed, at the speed.
    pub fn window_s(&self) -> f64 {
        self.duration_s.unwrap_or(self.span_s).min(self.span_s) / self.speed
    }

    /// The highest kind index the schedule names.
    pub fn max_kind(&self) -> Option<u64> {
        self.records.iter().map(|r| r & kind_mask()).max()
    }
}

pub fn kind_mask() -> u64 {
    (1 << KIND_BITS) - 1
}

pub(super) fn trace(m: &Map<String, Value>) -> Result<super::ModelSpec, PlanError> {
    const C: &str = "model";
    let speed = positive(req_num(m, "speed", C)?, "model.speed")?;
    let path = string(m, "schedule", C)?
        .ok_or_else(|| PlanError("model.schedule is required: the schedule file".into()))?;
    let requests = req_int(m, "schedule_requests", C)?;
    let span_s = positive(req_num(m, "span_s", C)?, "model.span_s")?;
    let duration_s = num(m, "duration_s", C)?
        .map(|d| positive(d, "model.duration_s"))
        .transpose()?;
    let pool = int(m, "pool", C)?;
    if pool == Some(0) {
        return err("model.pool must be >= 1");
    }
    let first = int(m, "first", C)?.unwrap_or(0);
    let stride = int(m, "stride", C)?.unwrap_or(1);
    if stride == 0 || first >= stride {
        return err("model.first must be below model.stride (>= 1)");
    }
    let records = read_schedule(path, requests, span_s)?;
    Ok(super::ModelSpec::Trace(TraceSpec {
        speed,
        path: path.to_owned(),
        records,
        span_s,
        duration_s,
        pool,
        first,
        stride,
    }))
}

/// The schedule file's records, checked: the magic, whole records, the count the plan says,
/// ascending offsets, all below the span.
fn read_schedule(path: &str, requests: u64, span_s: f64) -> Result<Arc<[u64]>, PlanError> {
    let bytes =
        std::fs::read(path).map_err(|e| PlanError(format!("model.schedule {path:?}: {e}")))?;
    let Some(body) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return err(format!(
            "model.schedule {path:?} is not a schedule (no WBTRACE1 head)"
        ));
    };
    if body.len() % 8 != 0 {
        return err(format!("model.schedule {path:?} ends within a record"));
    }
    let records: Arc<[u64]> = body
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if records.len() as u64 != requests {
        return err(format!(
            "model.schedule {path:?} holds {} requests, the plan says {requests}",
            records.len()
        ));
    }
    if records
        .windows(2)
        .any(|w| w[1] >> KIND_BITS < w[0] >> KIND_BITS)
    {
        return err(format!("model.schedule {path:?}: offsets not ascending"));
    }
    let last_us = records.last().map_or(0, |r| r >> KIND_BITS);
    if last_us as f64 >= span_s * 1e6 {
        return err(format!(
            "model.schedule {path:?}: an offset ({last_us} us) is not below span_s ({span_s})"
        ));
    }
    Ok(records)
}

/// Every kind the schedule names is one of the plan's `kinds` request kinds.
pub(super) fn check_kinds(model: &super::ModelSpec, kinds: usize) -> Result<(), PlanError> {
    let super::ModelSpec::Trace(t) = model else {
        return Ok(());
    };
    match t.max_kind() {
        Some(k) if k as usize >= kinds => err(format!(
            "model.schedule {:?} names request kind {k}; the plan has {kinds}",
            t.path
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(name: &str, records: &[u64]) -> String {
        let path =
            std::env::temp_dir().join(format!("wsgibench-trace-{name}-{}", std::process::id()));
        let mut bytes = MAGIC.to_vec();
        for r in records {
            bytes.extend_from_slice(&r.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn fields(path: &str, requests: u64) -> Map<String, Value> {
        json!({"kind": "trace", "speed": 2, "schedule": path, "schedule_requests": requests,
               "span_s": 2})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn reads_a_schedule_and_its_window() {
        let path = write("ok", &[5 << KIND_BITS, (1_500_000 << KIND_BITS) | 1]);
        let super::super::ModelSpec::Trace(t) = trace(&fields(&path, 2)).unwrap() else {
            panic!("not a trace")
        };
        assert_eq!(t.records.len(), 2);
        assert_eq!(t.max_kind(), Some(1));
        assert_eq!(t.window_s(), 1.0);
        assert_eq!((t.first, t.stride), (0, 1));
    }

    #[test]
    fn refuses_bad_schedules() {
        let cases: [(&[u64], u64, &str); 3] = [
            (&[5 << KIND_BITS], 2, "holds 1 requests"),
            (&[9 << KIND_BITS, 5 << KIND_BITS], 2, "not ascending"),
            (&[2_000_000 << KIND_BITS], 1, "not below span_s"),
        ];
        for (i, (records, n, needle)) in cases.iter().enumerate() {
            let path = write(&format!("bad{i}"), records);
            let e = trace(&fields(&path, *n)).unwrap_err().0;
            assert!(e.contains(needle), "{e} lacks {needle}");
        }
        let path = write("torn", &[]);
        std::fs::write(&path, b"WBTRACE1abc").unwrap();
        assert!(trace(&fields(&path, 0))
            .unwrap_err()
            .0
            .contains("within a record"));
        std::fs::write(&path, b"nothing").unwrap();
        assert!(trace(&fields(&path, 0))
            .unwrap_err()
            .0
            .contains("not a schedule"));
        let e = trace(&fields("/nonexistent/schedule", 1)).unwrap_err().0;
        assert!(e.contains("model.schedule"), "{e}");
    }
}
