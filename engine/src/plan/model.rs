//! The plan's `model` section: which load model, with its parameters checked.

use serde_json::{Map, Value};

use super::fields::{boolean, err, int, num, obj, positive, req_int, req_num, string};
use super::trace::{trace, TraceSpec};
use super::PlanError;

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
        /// A fixed pool of this many keep-alive connections carries the arrivals, each one
        /// request (wrk2's `-c` with `-R`); None: a new connection per arrival (httperf).
        pool: Option<u64>,
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
    /// WebSocket fan-out: `subscribers` connections listen, one publisher sends
    /// `publish_rate` messages a second for `duration_s` (engine addition).
    Broadcast {
        subscribers: u64,
        publish_rate: f64,
        duration_s: f64,
    },
    /// Requests at the offsets of a schedule file, each of its kind, at a speed (engine
    /// addition: an access log replayed).
    Trace(TraceSpec),
}

impl ModelSpec {
    /// Open models measure latency from the intended send time (coordinated-omission corrected).
    pub fn is_open(&self) -> bool {
        matches!(
            self,
            ModelSpec::Rate { .. } | ModelSpec::Sessions { .. } | ModelSpec::Trace(_)
        )
    }

    /// The fixed pool of connections a rate or trace model sends on, if it has one.
    pub fn pool(&self) -> Option<u64> {
        match self {
            ModelSpec::Rate { pool, .. } => *pool,
            ModelSpec::Trace(t) => t.pool,
            _ => None,
        }
    }
}

type Fields = Map<String, Value>;

const C: &str = "model";

fn arrival(m: &Fields) -> Result<Arrival, PlanError> {
    match string(m, "arrival", C)? {
        None | Some("uniform") => Ok(Arrival::Uniform),
        Some("poisson") => Ok(Arrival::Poisson),
        Some(other) => err(format!(
            "model.arrival must be \"uniform\" or \"poisson\", not {other:?}"
        )),
    }
}

pub(super) fn parse_model(v: &Value) -> Result<ModelSpec, PlanError> {
    let m = obj(v, C)?;
    let kind = string(m, "kind", C)?.ok_or_else(|| PlanError("model.kind is required".into()))?;
    match kind {
        "closed" => closed(m),
        "rate" | "conn_rate" => rate(m),
        "sessions" => sessions(m),
        "count" => count(m),
        "broadcast" => broadcast(m),
        "trace" => trace(m),
        other => err(format!(
            "model.kind must be closed, rate, conn_rate, sessions, count, broadcast or trace, \
             not {other:?}"
        )),
    }
}

fn closed(m: &Fields) -> Result<ModelSpec, PlanError> {
    let connections = req_int(m, "connections", C)?;
    if connections == 0 {
        return err("model.connections must be >= 1");
    }
    let pipeline = int(m, "pipeline", C)?.unwrap_or(1);
    if !(1..=1024).contains(&pipeline) {
        return err("model.pipeline must be in 1..=1024");
    }
    Ok(ModelSpec::Closed {
        connections,
        duration_s: positive(req_num(m, "duration_s", C)?, "model.duration_s")?,
        pipeline: pipeline as u32,
    })
}

fn rate(m: &Fields) -> Result<ModelSpec, PlanError> {
    let duration_s = num(m, "duration_s", C)?;
    let connections_total = int(m, "connections_total", C)?;
    if duration_s.is_none() && connections_total.is_none() {
        return err("model rate needs duration_s or connections_total");
    }
    if let Some(d) = duration_s {
        positive(d, "model.duration_s")?;
    }
    let calls = int(m, "calls", C)?.unwrap_or(1);
    if calls == 0 {
        return err("model.calls must be >= 1");
    }
    let pipeline = match m.get("pipeline") {
        // `pipeline: 1` (a depth, as in closed) is accepted as "no pipelining".
        Some(Value::Number(n)) => n.as_f64().unwrap_or(1.0) > 1.0,
        _ => boolean(m, "pipeline", C)?.unwrap_or(false),
    };
    let pool = int(m, "pool", C)?;
    if let Some(n) = pool {
        if n == 0 {
            return err("model.pool must be >= 1");
        }
        if calls != 1 || pipeline || connections_total.is_some() {
            return err(
                "model.pool carries one request per arrival for duration_s: \
                 no calls, pipeline or connections_total with it",
            );
        }
    }
    Ok(ModelSpec::Rate {
        rate: positive(req_num(m, "rate", C)?, "model.rate")?,
        duration_s,
        connections_total,
        arrival: arrival(m)?,
        calls,
        pipeline,
        pool,
    })
}

/// A pool holds its connections open for the whole run, one HTTP/1 request at a time on each,
/// and every thread needs one of its own.
pub(super) fn check_pool(
    model: &ModelSpec,
    keep_alive: bool,
    streams: bool,
    threads: usize,
) -> Result<(), PlanError> {
    let Some(n) = model.pool() else {
        return Ok(());
    };
    if !keep_alive || streams {
        return err("model.pool needs HTTP/1.1 keep-alive (not WebSocket or HTTP/2)");
    }
    if (n as usize) < threads {
        return err(format!(
            "model.pool ({n}) must be at least the threads ({threads})"
        ));
    }
    Ok(())
}

fn sessions(m: &Fields) -> Result<ModelSpec, PlanError> {
    let requests = int(m, "requests", C)?.unwrap_or(1);
    if requests == 0 {
        return err("model.requests must be >= 1");
    }
    let think_s = num(m, "think_s", C)?.unwrap_or(0.0);
    if think_s < 0.0 {
        return err("model.think_s must be >= 0");
    }
    Ok(ModelSpec::Sessions {
        users_per_s: positive(req_num(m, "users_per_s", C)?, "model.users_per_s")?,
        duration_s: positive(req_num(m, "duration_s", C)?, "model.duration_s")?,
        requests,
        think_s,
        arrival: arrival(m)?,
    })
}

fn count(m: &Fields) -> Result<ModelSpec, PlanError> {
    let requests = req_int(m, "requests", C)?;
    let concurrency = req_int(m, "concurrency", C)?;
    if requests == 0 || concurrency == 0 {
        return err("model.requests and model.concurrency must be >= 1");
    }
    Ok(ModelSpec::Count {
        requests,
        concurrency,
    })
}

fn broadcast(m: &Fields) -> Result<ModelSpec, PlanError> {
    let subscribers = req_int(m, "subscribers", C)?;
    if subscribers == 0 {
        return err("model.subscribers must be >= 1");
    }
    Ok(ModelSpec::Broadcast {
        subscribers,
        publish_rate: positive(req_num(m, "publish_rate", C)?, "model.publish_rate")?,
        duration_s: positive(req_num(m, "duration_s", C)?, "model.duration_s")?,
    })
}
