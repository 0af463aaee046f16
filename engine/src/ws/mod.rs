//! WebSocket (RFC 6455) on the client side: the upgrade request and the accept key it expects,
//! masked frames out, server frames in (`frame`), and the echo messages a load sends and checks.
//!
//! Each message carries its connection's sequence number (16 hex digits) and a filler derived
//! from it, so a reply is known for exactly one message: the one due, an earlier one (a
//! duplicate), a later one (those before it were lost), or none (corrupt).

mod assemble;
mod frame;
mod stats;
mod upgrade;

pub use assemble::{Assembler, Whole};
pub use frame::{parse_frame, Frame, FrameError, MAX_PAYLOAD};
pub use stats::{BroadcastStats, HandshakeFailure, WsStats};
pub use upgrade::{check_reply, Refused};

use base64::Engine as _;
use sha1::{Digest, Sha1};

pub const OP_CONTINUATION: u8 = 0x0;
pub const OP_TEXT: u8 = 0x1;
pub const OP_BINARY: u8 = 0x2;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// The GUID RFC 6455 §1.3 appends to the key.
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// Bytes of a message's sequence number (hex) at its start: the smallest message.
pub const SEQ_DIGITS: usize = 16;

/// The `Sec-WebSocket-Key` for 16 random bytes.
pub fn key_for(nonce: [u8; 16]) -> String {
    base64::engine::general_purpose::STANDARD.encode(nonce)
}

/// The `Sec-WebSocket-Accept` a server must answer `key` with.
pub fn accept_for(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(ACCEPT_GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// The upgrade request (HTTP/1.1 GET) for `path` on `host`, with the plan's extra headers.
pub fn upgrade_request(path: &str, host: &str, headers: &[(String, String)], key: &str) -> Vec<u8> {
    let mut r = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
    );
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("\r\n");
    r.into_bytes()
}

/// Append a final, masked frame of `opcode` carrying `payload` (RFC 6455 §5.2, §5.3).
pub fn put_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8], mask: [u8; 4]) {
    put_head(out, opcode, payload.len(), mask);
    let start = out.len();
    out.extend_from_slice(payload);
    mask_in_place(&mut out[start..], mask);
}

/// The head of a final, masked frame of `opcode` with `n` payload bytes: its length in one of
/// the three forms, then the mask key.
fn put_head(out: &mut Vec<u8>, opcode: u8, n: usize, mask: [u8; 4]) {
    out.push(0x80 | opcode);
    if n < 126 {
        out.push(0x80 | n as u8);
    } else if n <= u16::MAX as usize {
        out.push(0x80 | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
}

fn mask_in_place(payload: &mut [u8], mask: [u8; 4]) {
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= mask[i & 3];
    }
}

/// Append the frame of message `seq` (`len` bytes, text) masked with `mask`.
pub fn put_message(out: &mut Vec<u8>, seq: u64, len: usize, mask: [u8; 4]) {
    let len = len.max(SEQ_DIGITS);
    put_head(out, OP_TEXT, len, mask);
    let start = out.len();
    message(seq, len, out);
    mask_in_place(&mut out[start..], mask);
}

/// The hex digit `i` (0 the most significant) of `seq`'s 16.
fn hex_digit(seq: u64, i: usize) -> u8 {
    b"0123456789abcdef"[((seq >> (4 * (SEQ_DIGITS - 1 - i))) & 0xf) as usize]
}

/// Byte `i` of message `seq`: its number in hex, then letters that depend on it.
fn message_byte(seq: u64, i: usize) -> u8 {
    if i < SEQ_DIGITS {
        hex_digit(seq, i)
    } else {
        b'a' + ((seq as usize).wrapping_add(i) % 26) as u8
    }
}

/// Append the payload of message `seq` (`len` bytes, at least its number).
pub fn message(seq: u64, len: usize, out: &mut Vec<u8>) {
    out.extend((0..len.max(SEQ_DIGITS)).map(|i| message_byte(seq, i)));
}

/// Bytes of a broadcast message's head: its number, then when it was due to be published
/// (the engine's monotonic clock, ns), both in hex.
pub const BROADCAST_HEAD: usize = 2 * SEQ_DIGITS;

/// Append the frame of broadcast message `seq`, due at `due_ns`, `len` bytes, masked.
pub fn put_broadcast(out: &mut Vec<u8>, seq: u64, due_ns: u64, len: usize, mask: [u8; 4]) {
    let len = len.max(BROADCAST_HEAD);
    put_head(out, OP_TEXT, len, mask);
    let start = out.len();
    out.extend((0..SEQ_DIGITS).map(|i| hex_digit(seq, i)));
    out.extend((0..SEQ_DIGITS).map(|i| hex_digit(due_ns, i)));
    out.extend((BROADCAST_HEAD..len).map(|i| message_byte(seq ^ due_ns, i)));
    mask_in_place(&mut out[start..], mask);
}

/// The broadcast message of `len` bytes that `payload` is, whole and unaltered: its number and
/// when it was due; None when it is not one.
pub fn broadcast_of(payload: &[u8], len: usize) -> Option<(u64, u64)> {
    let len = len.max(BROADCAST_HEAD);
    if payload.len() != len {
        return None;
    }
    let hex = |b: &[u8]| u64::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok();
    let seq = hex(&payload[..SEQ_DIGITS])?;
    let due = hex(&payload[SEQ_DIGITS..BROADCAST_HEAD])?;
    let whole = payload.iter().enumerate().all(|(i, b)| match i {
        i if i < SEQ_DIGITS => *b == hex_digit(seq, i),
        i if i < BROADCAST_HEAD => *b == hex_digit(due, i - SEQ_DIGITS),
        i => *b == message_byte(seq ^ due, i),
    });
    whole.then_some((seq, due))
}

/// Whether `payload` is exactly message `seq` of `len` bytes.
pub fn is_message(payload: &[u8], seq: u64, len: usize) -> bool {
    payload.len() == len.max(SEQ_DIGITS)
        && payload
            .iter()
            .enumerate()
            .all(|(i, b)| *b == message_byte(seq, i))
}

/// The message of `len` bytes that `payload` is, whole and unaltered, if any.
pub fn message_seq(payload: &[u8], len: usize) -> Option<u64> {
    let digits = std::str::from_utf8(payload.get(..SEQ_DIGITS)?).ok()?;
    let seq = u64::from_str_radix(digits, 16).ok()?;
    is_message(payload, seq, len).then_some(seq)
}

#[cfg(test)]
mod tests;
