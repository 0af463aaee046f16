//! Replies, resets and broken frames replayed through one HTTP/2 connection: exact outcomes,
//! then the invariants of `check_replay` over pseudo-random mutations of valid transcripts (the
//! fuzz target's checks, run by `cargo test` on every backend's suite).

use super::*;
use crate::h2::{CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PADDED, PING};
use crate::rng::Rng;

/// HPACK: `:status 200` from the static table.
const STATUS_200: u8 = 0x88;

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    h2::put_frame(out, kind, flags, stream, payload);
}

/// A whole reply on `stream`: HEADERS then DATA with `body`.
fn reply(out: &mut Vec<u8>, stream: u32, body: &[u8]) {
    frame(out, HEADERS, END_HEADERS, stream, &[STATUS_200]);
    frame(out, DATA, END_STREAM, stream, body);
}

/// Streams 1, 3 and 5 answered out of order: one head split over CONTINUATION frames, one body
/// padded, one body in two frames, and the server's SETTINGS and a PING between them.
fn transcript() -> Vec<u8> {
    let mut t = Vec::new();
    h2::put_settings(&mut t, &[(h2::SETTINGS_MAX_CONCURRENT_STREAMS, 100)]);
    // Stream 5: `:status 200` as a literal (name index 8, value "200") split over 3 frames.
    frame(&mut t, HEADERS, 0, 5, &[0x08, 0x03]);
    frame(&mut t, CONTINUATION, 0, 5, b"20");
    frame(&mut t, CONTINUATION, END_HEADERS, 5, b"0");
    frame(&mut t, PING, 0, 0, b"12345678");
    frame(&mut t, DATA, END_STREAM, 5, REPLAY_BODY);
    // Stream 3: the body padded with 4 bytes.
    frame(&mut t, HEADERS, END_HEADERS, 3, &[STATUS_200]);
    let mut padded = vec![4];
    padded.extend_from_slice(REPLAY_BODY);
    padded.extend_from_slice(&[0; 4]);
    frame(&mut t, DATA, PADDED | END_STREAM, 3, &padded);
    // Stream 1: the body in two frames.
    frame(&mut t, HEADERS, END_HEADERS, 1, &[STATUS_200]);
    frame(&mut t, DATA, 0, 1, &REPLAY_BODY[..2]);
    frame(&mut t, DATA, END_STREAM, 1, &REPLAY_BODY[2..]);
    t
}

#[test]
fn replies_in_any_order_and_over_continuation_are_each_answered_once() {
    let r = check_replay(&transcript(), 3);
    assert_eq!((r.answered, r.ok, r.reset, r.open), (3, 3, 0, 0), "{r:?}");
    assert_eq!((r.failed, r.pending), (None, 0));
    // The SETTINGS acknowledged and the PING answered with its own payload, in that order.
    let mut want = Vec::new();
    frame(&mut want, h2::SETTINGS, h2::ACK, 0, &[]);
    frame(&mut want, PING, h2::ACK, 0, b"12345678");
    assert!(r.sent_back.starts_with(&want), "{:?}", r.sent_back);
}

#[test]
fn a_reset_stream_a_wrong_body_and_an_unanswered_stream_are_told_apart() {
    let mut t = Vec::new();
    frame(&mut t, h2::RST_STREAM, 0, 3, &2u32.to_be_bytes());
    reply(&mut t, 1, b"Pang!");
    frame(&mut t, HEADERS, END_HEADERS, 5, &[STATUS_200]); // a head, then nothing
    let r = check_replay(&t, 3);
    assert_eq!((r.answered, r.ok, r.reset, r.open), (1, 0, 1, 1), "{r:?}");
    assert_eq!(r.errors[ErrorClass::BadBody as usize], 1);
    assert_eq!(r.errors[ErrorClass::StreamReset as usize], 1);
    assert_eq!(r.failed, None);
}

#[test]
fn an_incomplete_frame_waits_for_the_rest() {
    let mut t = Vec::new();
    reply(&mut t, 1, REPLAY_BODY);
    let r = check_replay(&t[..t.len() - 2], 1);
    assert_eq!((r.answered, r.open, r.pending), (0, 1, 9 + 3));
}

#[test]
fn broken_framing_fails_the_connection_by_name() {
    let cases: [(&str, Vec<u8>); 4] = [
        ("interrupted_header_block", {
            let mut t = Vec::new();
            frame(&mut t, HEADERS, 0, 1, &[STATUS_200]);
            frame(&mut t, DATA, END_STREAM, 1, REPLAY_BODY);
            t
        }),
        ("frame_size", {
            let mut t = Vec::new();
            h2::put_head(&mut t, h2::MAX_FRAME + 1, DATA, 0, 1);
            t
        }),
        ("stray_continuation", {
            let mut t = Vec::new();
            frame(&mut t, CONTINUATION, END_HEADERS, 1, &[STATUS_200]);
            t
        }),
        ("data_on_closed_stream", {
            let mut t = Vec::new();
            frame(&mut t, DATA, END_STREAM, 7, REPLAY_BODY);
            t
        }),
    ];
    for (name, t) in cases {
        let r = check_replay(&t, 2);
        assert_eq!(
            r.failed,
            Some(Some(ErrorClass::ProtocolError)),
            "{name}: {r:?}"
        );
        assert_eq!(r.protocol_errors.get(name), Some(&1), "{name}: {r:?}");
        assert_eq!(r.open, 2, "{name}");
    }
}

#[test]
fn a_goaway_is_kept_with_its_last_stream() {
    let mut t = Vec::new();
    reply(&mut t, 1, REPLAY_BODY);
    let mut p = 1u32.to_be_bytes().to_vec();
    p.extend_from_slice(&0u32.to_be_bytes());
    frame(&mut t, GOAWAY, 0, 0, &p);
    let r = check_replay(&t, 2);
    assert_eq!((r.answered, r.open, r.goaway), (1, 1, Some(1)), "{r:?}");
}

/// One pseudo-random change: a byte altered, a range cut out or repeated, bytes inserted.
fn mutate(t: &mut Vec<u8>, rng: &mut Rng) {
    let at = (rng.next_u64() as usize) % t.len().max(1);
    match rng.next_u64() % 4 {
        0 if !t.is_empty() => t[at] ^= 1 << (rng.next_u64() % 8),
        1 => {
            let end = (at + 1 + (rng.next_u64() as usize) % 12).min(t.len());
            t.drain(at.min(end)..end);
        }
        2 => {
            let end = (at + 1 + (rng.next_u64() as usize) % 24).min(t.len());
            let copy = t[at.min(end)..end].to_vec();
            t.splice(at..at, copy);
        }
        _ => {
            let n = 1 + rng.next_u64() % 4;
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            t.splice(at..at, bytes);
        }
    }
}

#[test]
fn mutated_transcripts_never_break_the_invariants() {
    let mut rng = Rng::new(27);
    let mut failed = 0;
    for i in 0..2000 {
        let mut t = transcript();
        for _ in 0..1 + i % 3 {
            mutate(&mut t, &mut rng);
        }
        failed += u32::from(check_replay(&t, 3).failed.is_some());
    }
    // The mutations reach both sides: connections that fail and connections that stand.
    assert!((1..2000).contains(&failed), "{failed} of 2000 failed");
}
