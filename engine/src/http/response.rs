//! The incremental response parser: walks each response through its head, body framing
//! (length, chunks, read-until-close) and completion, reporting events as bytes arrive.

use super::head::{self, Framing, Head, Parsed};

/// Largest chunk-size or trailer line accepted.
const MAX_LINE_BYTES: usize = 4096;

#[derive(Debug, PartialEq)]
pub enum Event<'a> {
    /// Nothing more can be parsed from the bytes given; keep the unconsumed rest.
    NeedMore,
    Head(Head),
    /// Body bytes (possibly empty, when only framing was consumed).
    Body(&'a [u8]),
    /// The response is complete; the parser is ready for the next one.
    Complete,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParseError(pub &'static str);

/// What the end of the stream means for the response in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EofOutcome {
    /// No byte of a response was seen.
    Idle,
    /// A read-until-close body ended: the response is complete.
    Complete,
    /// The stream ended inside a response.
    Truncated,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum State {
    #[default]
    Head,
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkDataEnd,
    Trailers,
    UntilClose,
    Done,
}

type Step<'a> = Result<(usize, Event<'a>), ParseError>;

#[derive(Debug, Default)]
pub struct ResponseParser {
    state: State,
    /// A byte of the current response was seen (tells closed-before-response from truncation).
    started: bool,
}

fn find_line(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The line at the front of `buf` is incomplete: wait for more, unless it is already too long.
fn need_line<'a>(buf: &[u8]) -> Step<'a> {
    if buf.len() > MAX_LINE_BYTES {
        Err(ParseError("chunk line too long"))
    } else {
        Ok((0, Event::NeedMore))
    }
}

impl ResponseParser {
    /// Parses from `buf`; returns bytes consumed and what they were. `head_request`: the
    /// request was HEAD, so the reply has no body whatever its headers say.
    pub fn advance<'a>(&mut self, buf: &'a [u8], head_request: bool) -> Step<'a> {
        match self.state {
            State::Head => self.parse_head(buf, head_request),
            State::Length(rem) | State::ChunkData(rem) => Ok(self.counted_body(buf, rem)),
            State::ChunkSize => self.chunk_size(buf),
            State::ChunkDataEnd => self.chunk_data_end(buf),
            State::Trailers => self.trailer(buf),
            State::UntilClose => {
                if buf.is_empty() {
                    Ok((0, Event::NeedMore))
                } else {
                    Ok((buf.len(), Event::Body(buf)))
                }
            }
            State::Done => {
                self.state = State::Head;
                self.started = false;
                Ok((0, Event::Complete))
            }
        }
    }

    fn parse_head<'a>(&mut self, buf: &'a [u8], head_request: bool) -> Step<'a> {
        if buf.is_empty() {
            return Ok((0, Event::NeedMore));
        }
        self.started = true;
        match head::parse(buf, head_request)? {
            Parsed::Partial => Ok((0, Event::NeedMore)),
            Parsed::Interim(len) => {
                self.started = false;
                Ok((len, Event::Body(&[])))
            }
            Parsed::Final { len, head, framing } => {
                self.state = match framing {
                    Framing::NoBody => State::Done,
                    Framing::Length(l) => State::Length(l),
                    Framing::Chunked => State::ChunkSize,
                    Framing::UntilClose => State::UntilClose,
                };
                Ok((len, Event::Head(head)))
            }
        }
    }

    /// Body bytes of a Content-Length body or a chunk, `rem` of them still due.
    fn counted_body<'a>(&mut self, buf: &'a [u8], rem: u64) -> (usize, Event<'a>) {
        if buf.is_empty() {
            return (0, Event::NeedMore);
        }
        let take = rem.min(buf.len() as u64) as usize;
        let left = rem - take as u64;
        self.state = match (self.state, left) {
            (State::Length(_), 0) => State::Done,
            (State::Length(_), _) => State::Length(left),
            (_, 0) => State::ChunkDataEnd,
            _ => State::ChunkData(left),
        };
        (take, Event::Body(&buf[..take]))
    }

    fn chunk_size<'a>(&mut self, buf: &'a [u8]) -> Step<'a> {
        let Some(nl) = find_line(buf) else {
            return need_line(buf);
        };
        let line = buf[..nl].strip_suffix(b"\r").unwrap_or(&buf[..nl]);
        let digits = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(digits)
            .ok()
            .filter(|s| !s.is_empty() && s.len() <= 15)
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .ok_or(ParseError("bad chunk size"))?;
        self.state = if size == 0 {
            State::Trailers
        } else {
            State::ChunkData(size)
        };
        Ok((nl + 1, Event::Body(&[])))
    }

    fn chunk_data_end<'a>(&mut self, buf: &'a [u8]) -> Step<'a> {
        match buf {
            [] | [b'\r'] => Ok((0, Event::NeedMore)),
            [b'\r', b'\n', ..] => {
                self.state = State::ChunkSize;
                Ok((2, Event::Body(&[])))
            }
            [b'\n', ..] => {
                self.state = State::ChunkSize;
                Ok((1, Event::Body(&[])))
            }
            _ => Err(ParseError("chunk not followed by CRLF")),
        }
    }

    fn trailer<'a>(&mut self, buf: &'a [u8]) -> Step<'a> {
        let Some(nl) = find_line(buf) else {
            return need_line(buf);
        };
        if buf[..nl]
            .strip_suffix(b"\r")
            .unwrap_or(&buf[..nl])
            .is_empty()
        {
            self.state = State::Done;
        }
        Ok((nl + 1, Event::Body(&[])))
    }

    /// No byte of a response has been seen since the last one completed (or since the start).
    pub fn is_idle(&self) -> bool {
        self.state == State::Head && !self.started
    }

    /// The stream ended: what that means for the response in progress.
    pub fn on_eof(&mut self) -> EofOutcome {
        match self.state {
            State::Head if !self.started => EofOutcome::Idle,
            State::UntilClose | State::Done => {
                self.state = State::Done;
                EofOutcome::Complete
            }
            _ => EofOutcome::Truncated,
        }
    }
}
