//! The timing tests' window (common/quiet.rs) on a real process: a process that is not this test
//! is other work, counted by its own CPU time, and a bound that fails meanwhile fails as the
//! machine being busy; a bound that holds never panics.

use crate::common::Quiet;

use std::process::{Command, Stdio};
use std::time::Duration;

/// A process's CPU seconds so far, from /proc/PID/stat (utime and stime, fields 14 and 15).
fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / tick
}

#[test]
fn another_process_is_other_work_and_a_failed_bound_says_the_machine_was_busy() {
    let quiet = Quiet::start();
    quiet.bound(true, || unreachable!("a bound that holds says nothing"));
    let mut hog = Command::new("sha256sum")
        .arg("/dev/zero")
        .stdout(Stdio::null())
        .spawn()
        .expect("sha256sum");
    std::thread::sleep(Duration::from_millis(600));
    let used = cpu_s(hog.id());
    let work = quiet.so_far();
    hog.kill().unwrap();
    hog.wait().unwrap();
    // all of the hog's CPU time is other work (the clock ticks of /proc: 10 ms each)
    assert!(
        used > 0.1 && work.other_s >= used - 0.05,
        "{used} s used; {work}"
    );
    assert!(work.busy(), "{work}");
    let said = std::panic::catch_unwind(|| quiet.bound(false, || "1 ms over 2 ms".to_owned()))
        .expect_err("a failed bound panics");
    let said = said.downcast_ref::<String>().unwrap();
    assert!(
        said.starts_with("the machine was busy: other work took ")
            && said.ends_with("; the bound it broke: 1 ms over 2 ms"),
        "{said}"
    );
}
