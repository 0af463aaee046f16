//! Fuzzes the engine's incremental HTTP/1.x response parser (src/http.rs) with arbitrary bytes,
//! fed in pieces like a socket delivers them. Invariants: no panic, never more bytes consumed than
//! given, progress on every call that does not ask for more, and an answer at end of stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wsgibench_engine::http::{Event, ResponseParser};

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else { return };
    let step = (control as usize & 0x3f) + 1; // piece size 1..64
    let head_request = control & 0x40 != 0;
    let mut parser = ResponseParser::default();
    let mut pending: Vec<u8> = Vec::new();
    for piece in input.chunks(step) {
        pending.extend_from_slice(piece);
        let mut off = 0;
        let mut idle_calls = 0;
        loop {
            let rest = &pending[off..];
            let Ok((n, event)) = parser.advance(rest, head_request) else { return };
            assert!(n <= rest.len(), "consumed {n} of {} bytes", rest.len());
            off += n;
            match event {
                Event::NeedMore => break,
                Event::Body(b) => assert_eq!(b.len(), n.min(b.len())),
                Event::Head(_) | Event::Complete => {}
            }
            idle_calls = if n == 0 { idle_calls + 1 } else { 0 };
            assert!(idle_calls < 4, "parser makes no progress");
        }
        pending.drain(..off);
    }
    let _ = parser.on_eof();
});
