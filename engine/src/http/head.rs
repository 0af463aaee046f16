//! Reading a response head: the status, how the body after it is delimited, and whether the
//! connection may carry another request.

use super::ParseError;

/// Largest response head accepted; beyond this the peer is not speaking HTTP to us.
const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

/// Longest media type a reply's Content-Type is kept with; a longer one matches no expectation.
pub const MEDIA_TYPE_MAX: usize = 64;

/// The media type of a reply's Content-Type (the part before any `;`, trimmed, lowercased), kept
/// inline so that reading it allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MediaType {
    /// Bytes used in `bytes`; `TOO_LONG` when the media type did not fit.
    len: u8,
    bytes: [u8; MEDIA_TYPE_MAX],
}

impl MediaType {
    const TOO_LONG: u8 = u8::MAX;

    /// No Content-Type.
    pub const NONE: MediaType = MediaType {
        len: 0,
        bytes: [0; MEDIA_TYPE_MAX],
    };

    /// The media type of a Content-Type value: before any `;`, trimmed, lowercased.
    pub fn from_header(value: &[u8]) -> MediaType {
        let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
        let media = value[..end].trim_ascii();
        let mut out = MediaType::NONE;
        if media.len() > MEDIA_TYPE_MAX {
            out.len = MediaType::TOO_LONG;
        } else {
            for (o, b) in out.bytes.iter_mut().zip(media) {
                *o = b.to_ascii_lowercase();
            }
            out.len = media.len() as u8;
        }
        out
    }

    /// The lowercased media type; None when the reply had none (or an empty or overlong one).
    pub fn get(&self) -> Option<&[u8]> {
        match self.len {
            0 | MediaType::TOO_LONG => None,
            n => Some(&self.bytes[..n as usize]),
        }
    }
}

/// The parts of a response head the engine acts on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head {
    pub status: u16,
    /// The connection may carry another request after this reply.
    pub keep_alive: bool,
    /// The Content-Type's media type; empty when the reply has none.
    pub media_type: MediaType,
}

/// How the body after a head is delimited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Framing {
    NoBody,
    /// Content-Length (more than 0).
    Length(u64),
    Chunked,
    /// The body ends when the connection closes.
    UntilClose,
}

/// A head read from the front of a buffer.
pub(super) enum Parsed {
    /// Not all of the head is there yet.
    Partial,
    /// An interim (1xx) response of this many bytes; the real one follows.
    Interim(usize),
    /// A final response head of `len` bytes.
    Final {
        len: usize,
        head: Head,
        framing: Framing,
    },
}

/// What the headers of a final response say about framing and persistence.
#[derive(Default)]
struct Headers {
    length: Option<u64>,
    chunked: bool,
    other_te: bool,
    conn_close: bool,
    conn_keep: bool,
    /// The first Content-Type.
    media_type: Option<MediaType>,
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

fn scan_headers(headers: &[httparse::Header]) -> Result<Headers, ParseError> {
    let mut out = Headers::default();
    for h in headers {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or(ParseError("bad Content-Length"))?;
            if out.length.is_some_and(|l| l != v) {
                return Err(ParseError("conflicting Content-Length"));
            }
            out.length = Some(v);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Only a final `chunked` coding frames the body.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            out.chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            out.other_te = !out.chunked;
        } else if h.name.eq_ignore_ascii_case("connection") {
            out.conn_close |= has_token(h.value, "close");
            out.conn_keep |= has_token(h.value, "keep-alive");
        } else if h.name.eq_ignore_ascii_case("content-type") && out.media_type.is_none() {
            out.media_type = Some(MediaType::from_header(h.value));
        }
    }
    Ok(out)
}

/// Reads the head at the front of `buf` (not empty). `head_request`: the request was HEAD, so
/// the reply has no body whatever its headers say.
pub(super) fn parse(buf: &[u8], head_request: bool) -> Result<Parsed, ParseError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            // httparse accepts a prefix of anything that might still become a status line.
            if buf.len() > MAX_HEAD_BYTES || !buf.starts_with(&b"HTTP/"[..buf.len().min(5)]) {
                return Err(ParseError("not an HTTP response"));
            }
            return Ok(Parsed::Partial);
        }
        Err(_) => return Err(ParseError("malformed response head")),
    };
    let status = resp.code.unwrap_or(0);
    let minor = resp.version.unwrap_or(0);
    if (100..200).contains(&status) && status != 101 {
        // Interim response (100 Continue): the real one follows.
        return Ok(Parsed::Interim(len));
    }
    let h = scan_headers(resp.headers)?;
    let no_body = head_request || status == 204 || status == 304 || status == 101;
    let framing = if no_body {
        Framing::NoBody
    } else if h.chunked {
        Framing::Chunked
    } else if h.other_te {
        Framing::UntilClose
    } else {
        match h.length {
            Some(0) => Framing::NoBody,
            Some(l) => Framing::Length(l),
            None => Framing::UntilClose,
        }
    };
    let keep_alive = framing != Framing::UntilClose
        && if minor >= 1 {
            !h.conn_close
        } else {
            h.conn_keep && !h.conn_close
        };
    Ok(Parsed::Final {
        len,
        head: Head {
            status,
            keep_alive,
            media_type: h.media_type.unwrap_or(MediaType::NONE),
        },
        framing,
    })
}
