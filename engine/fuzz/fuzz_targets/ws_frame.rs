//! Fuzzes the engine's WebSocket frame parser (src/ws/frame.rs) and its echo matching with
//! arbitrary bytes. Invariants: no panic; a frame never claims more bytes than given, nor a
//! payload outside them; a complete frame stays complete with more bytes after it, and a prefix
//! of it is incomplete or the same error; a payload is a message of at most one number.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wsgibench_engine::ws::{message, message_seq, parse_frame};

fuzz_target!(|data: &[u8]| {
    let parsed = parse_frame(data);
    if let Ok(Some((frame, used))) = &parsed {
        assert!(*used <= data.len() && frame.payload.len() <= *used);
        let mut longer = data[..*used].to_vec();
        longer.extend_from_slice(b"\x81\x00");
        let again = parse_frame(&longer).expect("the same frame").expect("complete");
        assert_eq!((again.0.payload, again.1), (frame.payload, *used));
        for cut in 0..*used {
            match parse_frame(&data[..cut]) {
                Ok(None) | Err(_) => {}
                Ok(Some(_)) => panic!("a prefix of {cut} bytes made a whole frame"),
            }
        }
        if let Some(seq) = message_seq(frame.payload, frame.payload.len()) {
            let mut m = Vec::new();
            message(seq, frame.payload.len(), &mut m);
            assert_eq!(m, frame.payload, "a message is known by exactly one number");
        }
    }
});
