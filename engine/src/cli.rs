//! Command line: `run PLAN|-` with flags that override plan fields, and `version`.

use serde_json::{json, Map, Value};

pub const USAGE: &str = "\
usage: wsgibench-engine run [PLAN.json|-] [options]
       wsgibench-engine check PLAN.json|-
       wsgibench-engine version
`check` validates a plan, or a JSON array of plans, without running anything: it prints
{\"plans\": N, \"errors\": [{\"index\": I, \"error\": \"...\"}]} and exits 2 when any is refused.
Without a plan file, options build one (default: closed, 10 connections, 10 s, GET / expecting 200).
options (each overrides the plan):
  --url http://127.0.0.1:8080/path   target host, port and request path
  --model closed|rate|conn_rate|sessions|count
  --connections N  --duration S  --pipeline N            (closed)
  --rate R  --connections-total N  --calls K  --arrival uniform|poisson  (rate)
  --pool N         a fixed pool of N keep-alive connections, one request per arrival (rate)
  --users-per-s U  --requests N  --think S               (sessions; --requests also for count)
  --concurrency C                                         (count)
  --http 1.0|1.1  --keep-alive | --no-keep-alive
  --method M  --expect-status N  --expect-body TEXT
  --timeout S  --connect-timeout S  --threads N  --cpus 1[,2..]  --seed N
  --allow-remote  --no-spread-source  --linger-zero  --pretty
  --gate   say `ready` on stderr, start at `start UNIX_NS` read on stdin; `stop` or the end
           of stdin ends the engine (exit 4): a load host's synchronized start";

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Version,
    Help,
    /// Validate a plan (or an array of plans) and run nothing.
    Check {
        plan_source: String,
    },
    Run {
        plan_source: Option<String>,
        overrides: Vec<(String, String)>,
        pretty: bool,
        /// Wait for `start UNIX_NS` on stdin after saying `ready` (a load host's start gate).
        gated: bool,
    },
}

const VALUE_FLAGS: &[&str] = &[
    "url",
    "model",
    "connections",
    "duration",
    "pipeline",
    "rate",
    "connections-total",
    "calls",
    "pool",
    "arrival",
    "users-per-s",
    "requests",
    "think",
    "concurrency",
    "http",
    "method",
    "expect-status",
    "expect-body",
    "timeout",
    "connect-timeout",
    "threads",
    "cpus",
    "seed",
];
const BOOL_FLAGS: &[&str] = &[
    "keep-alive",
    "no-keep-alive",
    "allow-remote",
    "no-spread-source",
    "linger-zero",
];

fn parse_check(args: &[String]) -> Result<Command, String> {
    match args {
        [source] if !source.starts_with("--") => Ok(Command::Check {
            plan_source: source.clone(),
        }),
        _ => Err("check takes one argument: a plan file, or - for stdin".into()),
    }
}

pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let Some(cmd) = args.first() else {
        return Err("missing command (run, check or version)".into());
    };
    match cmd.as_str() {
        "version" | "--version" | "-V" => return Ok(Command::Version),
        "help" | "--help" | "-h" => return Ok(Command::Help),
        "run" => {}
        "check" => return parse_check(&args[1..]),
        other => return Err(format!("unknown command {other:?} (run, check or version)")),
    }
    let (mut plan_source, mut overrides, mut pretty, mut gated) = (None, Vec::new(), false, false);
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        if let Some(flag) = a.strip_prefix("--") {
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (flag, None),
            };
            if name == "pretty" {
                pretty = true;
            } else if name == "gate" {
                gated = true;
            } else if BOOL_FLAGS.contains(&name) {
                overrides.push((name.to_owned(), String::new()));
            } else if VALUE_FLAGS.contains(&name) {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("--{name} needs a value"))?,
                };
                overrides.push((name.to_owned(), v));
            } else {
                return Err(format!("unknown option --{name}"));
            }
        } else if plan_source.is_none() {
            plan_source = Some(a.clone());
        } else {
            return Err(format!("unexpected argument {a:?}"));
        }
    }
    if gated && plan_source.as_deref() == Some("-") {
        return Err("--gate reads the start on stdin: give the plan as a file".into());
    }
    Ok(Command::Run {
        plan_source,
        overrides,
        pretty,
        gated,
    })
}

pub fn default_plan() -> Value {
    json!({
        "protocol_version": 1,
        "target": {"host": "127.0.0.1", "port": 80},
        "model": {"kind": "closed", "connections": 10, "duration_s": 10.0},
        "http": {"version": "1.1", "keep_alive": true},
        "requests": [{"name": "default", "method": "GET", "path": "/", "weight": 1, "expect": {"status": 200}}],
        "timeout_s": 5.0,
        "connect_timeout_s": 5.0,
        "threads": 1,
        "seed": 1
    })
}

fn number(flag: &str, v: &str) -> Result<Value, String> {
    let x: f64 = v
        .parse()
        .map_err(|_| format!("--{flag} needs a number, not {v:?}"))?;
    if x.fract() == 0.0 && (0.0..1e15).contains(&x) {
        Ok(json!(x as u64))
    } else {
        Ok(json!(x))
    }
}

fn section<'a>(plan: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let v = plan.entry(key.to_owned()).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut().expect("object")
}

/// Splits http://host:port/path; only plain http is spoken.
fn parse_url(url: &str) -> Result<(String, u16, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--url must start with http://, not {url:?}"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_owned()),
        None => (rest, "/".to_owned()),
    };
    let (host, port) = if let Some(h) = authority.strip_prefix('[') {
        let (h, p) = h.split_once(']').ok_or("bad IPv6 address in --url")?;
        (h.to_owned(), p.strip_prefix(':').unwrap_or("80"))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), p),
            None => (authority.to_owned(), "80"),
        }
    };
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("bad port in --url {url:?}"))?;
    Ok((host, port, path))
}

/// Apply command-line overrides to a plan value.
pub fn apply_overrides(plan: &mut Value, overrides: &[(String, String)]) -> Result<(), String> {
    let p = plan.as_object_mut().ok_or("plan must be a JSON object")?;
    // --model first, so that model fields land in the right object.
    if let Some((_, kind)) = overrides.iter().rfind(|(k, _)| k == "model") {
        let m = section(p, "model");
        if m.get("kind").and_then(Value::as_str) != Some(kind) {
            m.clear();
        }
        m.insert("kind".into(), json!(kind));
    }
    for (flag, v) in overrides {
        if let Some(key) = model_key(flag) {
            let val = number(flag, v)?;
            section(p, "model").insert(key.into(), val);
        } else {
            apply_flag(p, flag, v)?;
        }
    }
    Ok(())
}

/// The model field a numeric model flag sets.
fn model_key(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "connections" => "connections",
        "duration" => "duration_s",
        "pipeline" => "pipeline",
        "rate" => "rate",
        "connections-total" => "connections_total",
        "calls" => "calls",
        "pool" => "pool",
        "users-per-s" => "users_per_s",
        "requests" => "requests",
        "think" => "think_s",
        "concurrency" => "concurrency",
        _ => return None,
    })
}

/// Apply one flag that is not a numeric model field.
fn apply_flag(p: &mut Map<String, Value>, flag: &str, v: &str) -> Result<(), String> {
    match flag {
        "model" => {}
        "arrival" => {
            section(p, "model").insert("arrival".into(), json!(v));
        }
        "url" => {
            let (host, port, path) = parse_url(v)?;
            let t = section(p, "target");
            t.insert("host".into(), json!(host));
            t.insert("port".into(), json!(port));
            for r in requests_mut(p) {
                r.insert("path".into(), json!(path));
            }
        }
        "http" => {
            section(p, "http").insert("version".into(), json!(v));
        }
        "keep-alive" | "no-keep-alive" => {
            section(p, "http").insert("keep_alive".into(), json!(flag == "keep-alive"));
        }
        "method" => {
            for r in requests_mut(p) {
                r.insert("method".into(), json!(v));
            }
        }
        "expect-status" => set_expect(p, "status", number(flag, v)?),
        "expect-body" => set_expect(p, "body", json!(v)),
        "timeout" => {
            p.insert("timeout_s".into(), number(flag, v)?);
        }
        "connect-timeout" => {
            p.insert("connect_timeout_s".into(), number(flag, v)?);
        }
        "threads" | "seed" => {
            p.insert(flag.to_owned(), number(flag, v)?);
        }
        "cpus" => {
            p.insert("cpus".into(), json!(parse_cpus(v)?));
        }
        "allow-remote" => {
            p.insert("allow_remote".into(), json!(true));
        }
        "no-spread-source" => {
            p.insert("spread_source".into(), json!(false));
        }
        "linger-zero" => {
            p.insert("linger_zero".into(), json!(true));
        }
        other => return Err(format!("unknown option --{other}")),
    }
    Ok(())
}

/// Set `expect.key` of every request; an expected body replaces any other body check.
fn set_expect(p: &mut Map<String, Value>, key: &str, val: Value) {
    for r in requests_mut(p) {
        let e = r.entry("expect").or_insert_with(|| json!({"status": 200}));
        if let Some(e) = e.as_object_mut() {
            if key == "body" {
                for other in ["body_len", "body_sha256", "body_float"] {
                    e.remove(other);
                }
            }
            e.insert(key.into(), val.clone());
        }
    }
}

fn parse_cpus(v: &str) -> Result<Vec<u64>, String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("--cpus takes CPU numbers like 1 or 0,1, not {v:?}"))
        })
        .collect()
}

fn requests_mut(p: &mut Map<String, Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    p.get_mut("requests")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags_build_a_plan() {
        let Command::Run { plan_source, overrides, .. } =
            parse_args(&args("run --url http://127.0.0.1:8080/ping --model rate --rate 50 --duration 2 --calls 10 --http 1.0 --expect-body Pong! --cpus 1"))
                .unwrap()
        else {
            panic!("not run")
        };
        assert!(plan_source.is_none());
        let mut plan = default_plan();
        apply_overrides(&mut plan, &overrides).unwrap();
        assert_eq!(
            plan["model"],
            json!({"kind": "rate", "rate": 50, "duration_s": 2, "calls": 10})
        );
        assert_eq!(plan["target"], json!({"host": "127.0.0.1", "port": 8080}));
        assert_eq!(plan["requests"][0]["path"], json!("/ping"));
        assert_eq!(plan["requests"][0]["expect"]["body"], json!("Pong!"));
        assert_eq!(plan["http"]["version"], json!("1.0"));
        assert_eq!(plan["cpus"], json!([1]));
        crate::plan::Plan::from_value(&plan).unwrap();
    }

    #[test]
    fn bad_args_are_errors() {
        assert!(parse_args(&args("run --bogus")).is_err());
        assert!(parse_args(&args("run --connections")).is_err());
        assert!(parse_args(&args("fly")).is_err());
        let mut plan = default_plan();
        assert!(apply_overrides(&mut plan, &[("connections".into(), "many".into())]).is_err());
        assert!(parse_url("https://x/").is_err());
        assert_eq!(
            parse_url("http://[::1]:81/a").unwrap(),
            ("::1".into(), 81, "/a".into())
        );
    }
}
