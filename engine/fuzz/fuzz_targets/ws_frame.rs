//! Fuzzes the engine's WebSocket frame parser (src/ws/frame.rs) and its echo matching with
//! arbitrary bytes. Invariants: no panic; a frame never claims more bytes than given, nor a
//! payload outside them; a complete frame stays complete with more bytes after it, and a prefix
//! of it is incomplete or the same error; a payload is a message of at most one number, and a
//! broadcast message of at most one number and due time; frames joined into messages never
//! hold more bytes than their frames gave.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wsgibench_engine::ws::{
    broadcast_of, message, message_seq, parse_frame, put_broadcast, Assembler,
};

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
        if let Some((seq, due)) = broadcast_of(frame.payload, frame.payload.len()) {
            let mut m = Vec::new();
            put_broadcast(&mut m, seq, due, frame.payload.len(), [0; 4]);
            assert!(m.ends_with(frame.payload), "one number and due time per broadcast");
        }
    }
    // Every frame in the bytes through one assembler: a whole message is at most what came.
    let (mut asm, mut off, mut total) = (Assembler::default(), 0, 0);
    while let Ok(Some((frame, used))) = parse_frame(&data[off..]) {
        off += used;
        total += frame.payload.len();
        if frame.opcode & 0x8 != 0 {
            continue;
        }
        match asm.add(&frame) {
            Ok(Some((_, Some(joined)))) => assert!(joined.len() <= total),
            Ok(_) => {}
            Err(_) => break,
        }
    }
});
