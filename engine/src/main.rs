//! `wsgibench-engine` binary: parse the command line, run the plan, print the JSON result.

use std::io::Read;
use std::process::ExitCode;

use wsgibench_engine::cli::{self, Command};
use wsgibench_engine::RunError;

fn fail(code: u8, msg: &str) -> ExitCode {
    // One line, whatever the message holds.
    eprintln!("wsgibench-engine: {}", msg.replace('\n', " "));
    ExitCode::from(code)
}

fn read_source(src: &str) -> Result<String, String> {
    let text = if src == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map(|_| s)
    } else {
        std::fs::read_to_string(src)
    };
    text.map_err(|e| format!("cannot read plan {src}: {e}"))
}

/// `check`: validate a plan or an array of plans; print the errors found, run nothing.
fn check(src: &str) -> ExitCode {
    let value: serde_json::Value = match read_source(src)
        .and_then(|t| serde_json::from_str(&t).map_err(|e| format!("bad plan: not JSON: {e}")))
    {
        Ok(v) => v,
        Err(e) => return fail(2, &e),
    };
    let report = wsgibench_engine::check_plans(&value);
    println!("{report}");
    match report["errors"].as_array().and_then(|e| e.first()) {
        None => ExitCode::SUCCESS,
        Some(first) => fail(
            2,
            &format!(
                "bad plan {}: {}",
                first["index"],
                first["error"].as_str().unwrap_or("")
            ),
        ),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (plan_source, overrides, pretty, gated) = match cli::parse_args(&args) {
        Ok(Command::Version) => {
            println!("{}", wsgibench_engine::version_json());
            return ExitCode::SUCCESS;
        }
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Check { plan_source }) => return check(&plan_source),
        Ok(Command::Run {
            plan_source,
            overrides,
            pretty,
            gated,
        }) => (plan_source, overrides, pretty, gated),
        Err(e) => return fail(2, &format!("{e}; see --help")),
    };
    let mut plan = match plan_source.as_deref() {
        None if !overrides.iter().any(|(k, _)| k == "url") => {
            return fail(2, "give a plan (file or -) or --url; see --help")
        }
        None => cli::default_plan(),
        Some(src) => {
            let text = match read_source(src) {
                Ok(t) => t,
                Err(e) => return fail(2, &e),
            };
            match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => return fail(2, &format!("bad plan: not JSON: {e}")),
            }
        }
    };
    if let Err(e) = cli::apply_overrides(&mut plan, &overrides) {
        return fail(2, &format!("bad plan: {e}"));
    }
    match wsgibench_engine::run_value_gated(&plan, gated) {
        Ok(result) => {
            let text = if pretty {
                serde_json::to_string_pretty(&result)
            } else {
                serde_json::to_string(&result)
            };
            println!("{}", text.expect("JSON values serialise"));
            ExitCode::SUCCESS
        }
        Err(e @ RunError::Plan(_)) => fail(2, &e.to_string()),
        Err(e @ RunError::Io(_)) => fail(1, &e.to_string()),
    }
}
