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
            let text = if src == "-" {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s).map(|_| s)
            } else {
                std::fs::read_to_string(src)
            };
            let text = match text {
                Ok(t) => t,
                Err(e) => return fail(2, &format!("cannot read plan {src}: {e}")),
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
