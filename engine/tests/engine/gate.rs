//! The start gate's sleep (src/gate.rs): it ends at the instant asked, never before, and within
//! 5 ms of it on CPUs nothing else takes (its last 2 ms are spun).

use crate::common::Quiet;

use wsgibench_engine::gate::{sleep_until, unix_ns};

#[test]
fn sleeping_until_an_instant_ends_at_it_not_before() {
    let quiet = Quiet::start();
    for _ in 0..5 {
        let at = unix_ns() + 20_000_000;
        sleep_until(at);
        let now = unix_ns();
        assert!(now >= at, "woke {} ns early", at - now);
        let late = now - at;
        quiet.bound(late < 5_000_000, || format!("woke {late} ns late"));
    }
}
