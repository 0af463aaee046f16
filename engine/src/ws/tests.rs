//! Unit tests of the WebSocket codec.

use super::*;

fn unmask(frame: &[u8]) -> (u8, Vec<u8>) {
    let (len, head) = match frame[1] & 0x7f {
        126 => (u16::from_be_bytes([frame[2], frame[3]]) as usize, 4),
        127 => (
            u64::from_be_bytes(frame[2..10].try_into().unwrap()) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let mask = &frame[head..head + 4];
    let body = frame[head + 4..head + 4 + len]
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ mask[i & 3])
        .collect();
    (frame[0], body)
}

#[test]
fn accept_key_is_rfc_6455s_example() {
    // RFC 6455 §1.3: this key is answered with this accept value.
    assert_eq!(
        accept_for("dGhlIHNhbXBsZSBub25jZQ=="),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
    assert_eq!(key_for(*b"the sample nonce"), "dGhlIHNhbXBsZSBub25jZQ==");
}

#[test]
fn frames_are_masked_and_lengths_take_the_three_forms() {
    for len in [0usize, 125, 126, 65535, 65536] {
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut out = Vec::new();
        put_frame(&mut out, OP_BINARY, &payload, [1, 2, 3, 4]);
        assert_eq!(out[1] & 0x80, 0x80, "masked");
        let (b0, body) = unmask(&out);
        assert_eq!((b0, body), (0x80 | OP_BINARY, payload));
    }
}

#[test]
fn messages_are_known_by_their_number_and_nothing_else_is() {
    let mut m = Vec::new();
    message(0x1234, 64, &mut m);
    assert_eq!(m.len(), 64);
    assert_eq!(message_seq(&m, 64), Some(0x1234));
    assert!(is_message(&m, 0x1234, 64) && !is_message(&m, 0x1235, 64));
    let mut bad = m.clone();
    bad[40] = if bad[40] == b'z' { b'y' } else { b'z' };
    assert_eq!(message_seq(&bad, 64), None);
    assert_eq!(message_seq(&m[..20], 64), None);
    assert_eq!(message_seq(b"short", 64), None);
    let mut small = Vec::new();
    message(7, 4, &mut small);
    assert_eq!((small.len(), message_seq(&small, 4)), (SEQ_DIGITS, Some(7)));
}

#[test]
fn server_frames_parse_whole_or_wait_for_more() {
    let f = [0x81, 0x03, b'a', b'b', b'c', 0x89];
    let (frame, used) = parse_frame(&f).unwrap().unwrap();
    assert_eq!(
        (frame.fin, frame.opcode, frame.payload, used),
        (true, 1, &b"abc"[..], 5)
    );
    for cut in 0..5 {
        assert_eq!(parse_frame(&f[..cut]), Ok(None), "cut at {cut}");
    }
    let mut long = vec![0x02, 126, 0x01, 0x00];
    long.extend(vec![7u8; 256]);
    let (frame, used) = parse_frame(&long).unwrap().unwrap();
    assert_eq!(
        (frame.fin, frame.opcode, frame.payload.len(), used),
        (false, 2, 256, 260)
    );
}

#[test]
fn frames_a_client_must_refuse_are_errors() {
    assert_eq!(
        parse_frame(&[0x81, 0x81, 0, 0, 0, 0, 0]),
        Err(FrameError::Masked)
    );
    assert_eq!(parse_frame(&[0xC1, 0x00]), Err(FrameError::Reserved));
    assert_eq!(parse_frame(&[0x83, 0x00]), Err(FrameError::Opcode(3)));
    assert_eq!(parse_frame(&[0x09, 0x00]), Err(FrameError::BadControl));
    assert_eq!(
        parse_frame(&[0x89, 126, 0, 126]),
        Err(FrameError::BadControl)
    );
    assert_eq!(
        parse_frame(&[0x82, 127, 0, 0, 0, 0, 0x10, 0, 0, 1]),
        Err(FrameError::TooLong)
    );
}

#[test]
fn a_broadcast_message_carries_its_number_and_due_time_and_any_change_shows() {
    let mut out = Vec::new();
    put_broadcast(&mut out, 41, 123_456_789, 64, [1, 2, 3, 4]);
    let (_, body) = unmask(&out);
    assert_eq!(body.len(), 64);
    assert_eq!(broadcast_of(&body, 64), Some((41, 123_456_789)));
    assert_eq!(broadcast_of(&body, 65), None, "another length");
    for i in [0, 20, 40, 63] {
        let mut bad = body.clone();
        bad[i] = if bad[i] == b'z' { b'y' } else { b'z' };
        assert_eq!(broadcast_of(&bad, 64), None, "byte {i} altered");
    }
    let mut signed = body.clone();
    signed[0] = b'+';
    assert_eq!(broadcast_of(&signed, 64), None, "a sign is not a digit");
}

#[test]
fn fragments_join_and_a_stray_continuation_breaks_the_protocol() {
    let mut a = Assembler::default();
    let f = |fin, opcode, payload| Frame {
        fin,
        opcode,
        payload,
    };
    assert_eq!(a.add(&f(false, OP_TEXT, b"ab")), Ok(None));
    assert_eq!(a.add(&f(false, OP_CONTINUATION, b"cd")), Ok(None));
    assert_eq!(
        a.add(&f(true, OP_CONTINUATION, b"e")),
        Ok(Some((OP_TEXT, Some(b"abcde".to_vec()))))
    );
    assert_eq!(a.frames, 3);
    assert_eq!(a.add(&f(true, OP_TEXT, b"x")), Ok(Some((OP_TEXT, None))));
    assert_eq!(
        a.add(&f(true, OP_CONTINUATION, b"x")),
        Err("continuation_without_message")
    );
    assert_eq!(a.add(&f(false, OP_TEXT, b"x")), Ok(None));
    assert_eq!(a.add(&f(true, OP_BINARY, b"y")), Err("interleaved_message"));
}
