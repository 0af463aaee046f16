//! Fuzzes the engine's HTTP/2 reply parsing (src/reactor/h2_conn/frames.rs, HPACK included)
//! with arbitrary server bytes on a connection with 1 to 8 streams in flight (the first byte
//! says how many). Invariants (`check_replay`): no panic; every stream answered, reset or still
//! open, none twice; the same outcome whether the bytes come at once, byte by byte or in halves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wsgibench_engine::reactor::h2_replay::check_replay;

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    check_replay(rest, u32::from(n % 8) + 1);
});
