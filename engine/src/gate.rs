//! The start gate of a load host: after the plan is loaded the engine says `ready` on stderr,
//! waits for `start UNIX_NS` on stdin (an instant in this host's own clock), sleeps until then
//! and runs; afterwards stdin is watched, and `stop` or its end (the controller is gone) ends
//! the engine at once, so no load outlives the cell that asked for it.

use std::io::{self, BufRead, Write};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Exit code of an engine stopped through its gate.
pub const STOPPED_EXIT: i32 = 4;
/// How far ahead of the start instant the sleep ends and the last stretch is spun.
const SPIN_NS: u64 = 2_000_000;

/// CLOCK_REALTIME in ns: the clock the controller's start instant is given in.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Parse `start NS`; anything else is an error naming the line.
pub fn parse_start(line: &str) -> Result<u64, String> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("start"), Some(ns), None) => ns
            .parse::<u64>()
            .map_err(|_| format!("start instant {ns:?} is not a number of nanoseconds")),
        _ => Err(format!(
            "expected `start UNIX_NS` on stdin, got {:?}",
            line.trim()
        )),
    }
}

/// Say ready, read the start instant, watch stdin from then on, and return at the instant.
pub fn wait_for_start() -> io::Result<()> {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    {
        let mut err = io::stderr().lock();
        writeln!(err, "ready {}", unix_ns())?;
        err.flush()?;
    }
    let line = match lines.next() {
        Some(line) => line?,
        None => std::process::exit(STOPPED_EXIT), // the controller went away before the start
    };
    if line.trim() == "stop" {
        std::process::exit(STOPPED_EXIT);
    }
    let at = parse_start(&line).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    drop(lines);
    thread::spawn(watch_stdin);
    sleep_until(at);
    Ok(())
}

/// Ends the process when stdin says `stop` or closes.
fn watch_stdin() {
    for line in io::stdin().lock().lines() {
        match line {
            Ok(l) if l.trim() == "stop" => break,
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    std::process::exit(STOPPED_EXIT);
}

/// Sleep until the wall-clock instant `at` (ns), spinning its last 2 ms for precision.
pub fn sleep_until(at: u64) {
    loop {
        let now = unix_ns();
        if now >= at {
            return;
        }
        let left = at - now;
        if left > SPIN_NS {
            thread::sleep(Duration::from_nanos(left - SPIN_NS));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_lines_are_parsed_or_refused() {
        assert_eq!(
            parse_start("start 1700000000000000000\n"),
            Ok(1_700_000_000_000_000_000)
        );
        assert!(parse_start("start soon").is_err());
        assert!(parse_start("go 12").is_err());
        assert!(parse_start("start 1 2").is_err());
    }
}
