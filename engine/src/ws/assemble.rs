//! Data messages put together from their frames: a first frame without FIN starts a message,
//! continuations add to it, FIN ends it; a continuation with no message, or a new message
//! before the last ended, breaks the protocol.

use super::{Frame, MAX_PAYLOAD, OP_CONTINUATION};

/// A message being put together, and how many frames the last whole one came in.
#[derive(Default)]
pub struct Assembler {
    op: Option<u8>,
    bytes: Vec<u8>,
    /// Frames of the message being assembled, or of the last one completed.
    pub frames: u32,
}

/// A whole message: its opcode and, when it came in fragments, its joined bytes (None: the
/// frame's payload is the message).
pub type Whole = (u8, Option<Vec<u8>>);

impl Assembler {
    /// Add data frame `frame`: Ok(None) while its message is incomplete, else the message; Err
    /// names what broke the protocol.
    pub fn add(&mut self, frame: &Frame<'_>) -> Result<Option<Whole>, &'static str> {
        match (frame.opcode, self.op) {
            (OP_CONTINUATION, None) => Err("continuation_without_message"),
            (OP_CONTINUATION, Some(op)) => {
                self.bytes.extend_from_slice(frame.payload);
                self.frames += 1;
                if self.bytes.len() as u64 > MAX_PAYLOAD {
                    return Err("too_long");
                }
                if !frame.fin {
                    return Ok(None);
                }
                self.op = None;
                Ok(Some((op, Some(std::mem::take(&mut self.bytes)))))
            }
            (_, Some(_)) => Err("interleaved_message"),
            (op, None) if !frame.fin => {
                self.op = Some(op);
                self.frames = 1;
                self.bytes = frame.payload.to_vec();
                Ok(None)
            }
            (op, None) => {
                self.frames = 1;
                Ok(Some((op, None)))
            }
        }
    }
}
