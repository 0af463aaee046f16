//! Server-to-client WebSocket frames parsed from a byte buffer, with RFC 6455's rules for what a
//! client must refuse: masked frames, reserved bits without an extension, unknown opcodes, and
//! control frames that are fragmented or longer than 125 bytes.

use super::{OP_BINARY, OP_CLOSE, OP_CONTINUATION, OP_PING, OP_PONG, OP_TEXT};

/// The largest payload the engine accepts in one frame (a reply larger is a protocol error).
pub const MAX_PAYLOAD: u64 = 16 << 20;

/// One complete frame, its payload unmasked (servers do not mask).
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub fin: bool,
    pub opcode: u8,
    pub payload: &'a [u8],
}

/// Why a frame breaks the protocol (the connection is then failed, RFC 6455 §7.1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    Masked,
    Reserved,
    Opcode(u8),
    BadControl,
    TooLong,
}

impl FrameError {
    /// The name a result counts it by (`websocket.protocol_errors`).
    pub fn name(self) -> &'static str {
        match self {
            FrameError::Masked => "masked_frame",
            FrameError::Reserved => "reserved_bits",
            FrameError::Opcode(_) => "unknown_opcode",
            FrameError::BadControl => "bad_control_frame",
            FrameError::TooLong => "too_long",
        }
    }
}

/// The first frame in `data`: Ok(None) while it is incomplete, else the frame and its length.
pub fn parse_frame(data: &[u8]) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
    let [b0, b1, ..] = *data else {
        return Ok(None);
    };
    let (fin, opcode) = (b0 & 0x80 != 0, b0 & 0x0f);
    if b0 & 0x70 != 0 {
        return Err(FrameError::Reserved);
    }
    if b1 & 0x80 != 0 {
        return Err(FrameError::Masked);
    }
    let control = opcode & 0x8 != 0;
    match opcode {
        OP_CONTINUATION | OP_TEXT | OP_BINARY | OP_CLOSE | OP_PING | OP_PONG => {}
        other => return Err(FrameError::Opcode(other)),
    }
    let (len, head) = match b1 & 0x7f {
        126 => match data.get(2..4) {
            Some(b) => (u16::from_be_bytes([b[0], b[1]]) as u64, 4),
            None => return Ok(None),
        },
        127 => match data.get(2..10) {
            Some(b) => (u64::from_be_bytes(b.try_into().expect("8 bytes")), 10),
            None => return Ok(None),
        },
        n => (n as u64, 2),
    };
    if control && (!fin || len > 125) {
        return Err(FrameError::BadControl);
    }
    if len > MAX_PAYLOAD {
        return Err(FrameError::TooLong);
    }
    let end = head + len as usize;
    let Some(payload) = data.get(head..end) else {
        return Ok(None);
    };
    Ok(Some((
        Frame {
            fin,
            opcode,
            payload,
        },
        end,
    )))
}
