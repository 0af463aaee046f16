//! wsgibench-engine: the load generator of wsgibench, as a library (the binary is a thin CLI over it).

pub mod broadcast;
pub mod cli;
pub mod clock;
pub mod gate;
pub mod h2;
pub mod http;
pub mod models;
pub mod net;
pub mod plan;
pub mod reactor;
pub mod result;
pub mod rng;
pub mod runner;
pub mod saturation;
pub mod seconds;
pub mod stats;
pub mod sys;
pub mod tls;
pub mod validate;
pub mod wrong;
pub mod ws;

use serde_json::Value;

/// Why a run did not produce a result, and the exit code for it.
#[derive(Debug)]
pub enum RunError {
    /// The plan is invalid or refused (exit 2).
    Plan(plan::PlanError),
    /// The engine could not set itself up (exit 1).
    Io(std::io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Plan(e) => write!(f, "bad plan: {e}"),
            RunError::Io(e) => write!(f, "engine error: {e}"),
        }
    }
}

/// Run a plan given as JSON and return the result document.
pub fn run_value(plan_value: &Value) -> Result<Value, RunError> {
    run_value_gated(plan_value, false)
}

/// Run a plan; when `gated`, start only at the instant the controller gives (`gate.rs`).
pub fn run_value_gated(plan_value: &Value, gated: bool) -> Result<Value, RunError> {
    let plan = plan::Plan::from_value(plan_value).map_err(RunError::Plan)?;
    let outcome = if gated {
        runner::run_after(&plan, gate::wait_for_start)
    } else {
        runner::run(&plan)
    }
    .map_err(RunError::Io)?;
    Ok(result::build(&plan, plan_value, &outcome))
}

/// Validate a plan, or an array of plans, without running: `{"plans": N, "errors": [...]}`,
/// one entry per refused plan with its index and the reason `run` would give.
pub fn check_plans(value: &Value) -> Value {
    let plans: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let errors: Vec<Value> = plans
        .iter()
        .enumerate()
        .filter_map(|(index, p)| {
            plan::Plan::from_value(p)
                .err()
                .map(|e| serde_json::json!({"index": index, "error": e.0}))
        })
        .collect();
    serde_json::json!({"plans": plans.len(), "errors": errors})
}

pub fn version_json() -> Value {
    serde_json::json!({
        "engine_version": result::ENGINE_VERSION,
        "protocol_version": plan::PROTOCOL_VERSION,
        "format_version": result::FORMAT_VERSION,
    })
}
