//! The engine's own limits have error classes of their own: a connect that fails for want of
//! a file descriptor is `fd_limit`, not a server's `connect_error`, and the result is saturated.

use crate::common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_wsgibench-engine");
const NOFILE: u64 = 12;
/// linux/capability.h
const CAP_SYS_RESOURCE: libc::c_ulong = 24;

/// Run the binary with `plan` under RLIMIT_NOFILE `NOFILE` that it can not raise.
fn run_with_few_fds(plan: &Value) -> Value {
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // As root the engine could lift the limit (CAP_SYS_RESOURCE): drop that first.
            // Without CAP_SETPCAP this fails, but then the process is not root either.
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_RESOURCE, 0, 0, 0);
            let lim = libc::rlimit {
                rlim_cur: NOFILE,
                rlim_max: NOFILE,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("engine binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(plan.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON result")
}

#[test]
fn connects_beyond_the_fd_limit_are_fd_limit_errors() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let p = plan(
        srv.port,
        json!({"kind": "count", "requests": 60, "concurrency": 20}),
    );
    let r = run_with_few_fds(&p);
    assert_eq!(r["cost"]["nofile_limit"], NOFILE, "the limit must hold");
    let fd = err(&r, "fd_limit");
    assert!(fd > 0, "{}", r["totals"]);
    assert_eq!(total(&r, "ok") + fd, 60, "{}", r["totals"]);
    assert_eq!(all_errors(&r), fd, "no connect_error: {}", r["totals"]);
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_accounting(&r);
    assert_eq!(r["saturated"], true);
    let reasons = r["saturation_reasons"].to_string();
    assert!(reasons.contains("file-descriptor limit"), "{reasons}");
}
