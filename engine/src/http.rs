//! HTTP/1.x on the wire, sans IO: request serialisation and an incremental response parser.

/// Largest response head accepted; beyond this the peer is not speaking HTTP to us.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest chunk-size or trailer line accepted.
const MAX_LINE_BYTES: usize = 4096;
const MAX_HEADERS: usize = 64;

/// Serialises one request. `minor` is the HTTP/1.x minor version.
pub fn build_request(
    method: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
    body: &[u8],
    minor: u8,
    keep_alive: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + body.len());
    out.extend_from_slice(format!("{method} {path} HTTP/1.{minor}\r\n").as_bytes());
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        out.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    if !has("connection") {
        // 1.1 persists unless told otherwise, 1.0 closes unless told otherwise.
        if minor == 1 && !keep_alive {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if minor == 0 && keep_alive {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
    }
    let needs_len = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_len && !has("content-length") {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    for (k, v) in headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// The parts of a response head the engine acts on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head {
    pub status: u16,
    /// The connection may carry another request after this reply.
    pub keep_alive: bool,
}

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

#[derive(Debug, Default)]
pub struct ResponseParser {
    state: State,
    /// A byte of the current response was seen (tells closed-before-response from truncation).
    started: bool,
}

fn find_line(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

impl ResponseParser {
    pub fn started(&self) -> bool {
        self.started || self.state != State::Head
    }

    /// Parses from `buf`; returns bytes consumed and what they were. `head_request`: the
    /// request was HEAD, so the reply has no body whatever its headers say.
    pub fn advance<'a>(
        &mut self,
        buf: &'a [u8],
        head_request: bool,
    ) -> Result<(usize, Event<'a>), ParseError> {
        match self.state {
            State::Head => self.parse_head(buf, head_request),
            State::Length(rem) | State::ChunkData(rem) => {
                if buf.is_empty() {
                    return Ok((0, Event::NeedMore));
                }
                let take = rem.min(buf.len() as u64) as usize;
                let left = rem - take as u64;
                self.state = match (self.state, left) {
                    (State::Length(_), 0) => State::Done,
                    (State::Length(_), _) => State::Length(left),
                    (_, 0) => State::ChunkDataEnd,
                    _ => State::ChunkData(left),
                };
                Ok((take, Event::Body(&buf[..take])))
            }
            State::ChunkSize => {
                let Some(nl) = find_line(buf) else {
                    return self.need_line(buf);
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
            State::ChunkDataEnd => match buf {
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
            },
            State::Trailers => {
                let Some(nl) = find_line(buf) else {
                    return self.need_line(buf);
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

    fn need_line<'a>(&self, buf: &[u8]) -> Result<(usize, Event<'a>), ParseError> {
        if buf.len() > MAX_LINE_BYTES {
            Err(ParseError("chunk line too long"))
        } else {
            Ok((0, Event::NeedMore))
        }
    }

    fn parse_head<'a>(
        &mut self,
        buf: &'a [u8],
        head_request: bool,
    ) -> Result<(usize, Event<'a>), ParseError> {
        if buf.is_empty() {
            return Ok((0, Event::NeedMore));
        }
        self.started = true;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                // httparse accepts a prefix of anything that might still become a status line.
                if buf.len() > MAX_HEAD_BYTES || !buf.starts_with(&b"HTTP/"[..buf.len().min(5)]) {
                    return Err(ParseError("not an HTTP response"));
                }
                return Ok((0, Event::NeedMore));
            }
            Err(_) => return Err(ParseError("malformed response head")),
        };
        let status = resp.code.unwrap_or(0);
        let minor = resp.version.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            // Interim response (100 Continue): the real one follows.
            self.started = false;
            return Ok((n, Event::Body(&[])));
        }
        let (mut length, mut chunked, mut other_te) = (None, false, false);
        let (mut conn_close, mut conn_keep) = (false, false);
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .ok_or(ParseError("bad Content-Length"))?;
                if length.is_some_and(|l| l != v) {
                    return Err(ParseError("conflicting Content-Length"));
                }
                length = Some(v);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                // Only a final `chunked` coding frames the body.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
                chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
                other_te = !chunked;
            } else if h.name.eq_ignore_ascii_case("connection") {
                conn_close |= has_token(h.value, "close");
                conn_keep |= has_token(h.value, "keep-alive");
            }
        }
        let mut keep_alive = if minor >= 1 {
            !conn_close
        } else {
            conn_keep && !conn_close
        };
        let no_body = head_request || status == 204 || status == 304 || status == 101;
        self.state = if no_body {
            State::Done
        } else if chunked {
            State::ChunkSize
        } else if other_te {
            State::UntilClose
        } else {
            match length {
                Some(0) => State::Done,
                Some(l) => State::Length(l),
                None => State::UntilClose,
            }
        };
        if self.state == State::UntilClose {
            keep_alive = false;
        }
        Ok((n, Event::Head(Head { status, keep_alive })))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces of `step` bytes, like a socket would; returns (head, body, completes).
    fn run(
        input: &[u8],
        step: usize,
        head_request: bool,
    ) -> Result<(Vec<Head>, Vec<u8>, usize, usize), ParseError> {
        let mut p = ResponseParser::default();
        let (mut heads, mut body, mut done) = (Vec::new(), Vec::new(), 0);
        let mut pending: Vec<u8> = Vec::new();
        for piece in input.chunks(step.max(1)) {
            pending.extend_from_slice(piece);
            let mut off = 0;
            loop {
                let (n, ev) = p.advance(&pending[off..], head_request)?;
                off += n;
                match ev {
                    Event::NeedMore => break,
                    Event::Head(h) => heads.push(h),
                    Event::Body(b) => body.extend_from_slice(b),
                    Event::Complete => done += 1,
                }
            }
            pending.drain(..off);
        }
        Ok((heads, body, done, pending.len()))
    }

    #[test]
    fn content_length_any_split() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nPong!";
        for step in 1..r.len() + 1 {
            let (heads, body, done, left) = run(r, step, false).unwrap();
            assert_eq!(
                heads,
                vec![Head {
                    status: 200,
                    keep_alive: true
                }]
            );
            assert_eq!((body.as_slice(), done, left), (&b"Pong!"[..], 1, 0));
        }
    }

    #[test]
    fn chunked_with_extensions_and_trailers_any_split() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=1\r\nPo\r\n3\r\nng!\r\n0\r\nX-T: 1\r\n\r\n";
        for step in 1..r.len() + 1 {
            let (heads, body, done, left) = run(r, step, false).unwrap();
            assert_eq!(heads[0].status, 200);
            assert_eq!(
                (body.as_slice(), done, left),
                (&b"Pong!"[..], 1, 0),
                "step {step}"
            );
        }
    }

    #[test]
    fn pipelined_responses_in_one_buffer() {
        let one = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
        let many: Vec<u8> = one
            .iter()
            .chain(one.iter())
            .chain(b"HTTP/1.1 204 No Content\r\n\r\n".iter())
            .copied()
            .collect();
        let (heads, body, done, _) = run(&many, many.len(), false).unwrap();
        assert_eq!(
            heads.iter().map(|h| h.status).collect::<Vec<_>>(),
            vec![200, 200, 204]
        );
        assert_eq!((body.as_slice(), done), (&b"aa"[..], 3));
    }

    #[test]
    fn no_body_for_head_204_304() {
        let (_, body, done, _) =
            run(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 100, true).unwrap();
        assert_eq!((body.len(), done), (0, 1));
        let (_, _, done, _) = run(
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
            100,
            false,
        )
        .unwrap();
        assert_eq!(done, 1);
    }

    #[test]
    fn keep_alive_semantics() {
        let ka = |r: &[u8]| run(r, r.len(), false).unwrap().0[0].keep_alive;
        assert!(ka(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(!ka(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(ka(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(
            !ka(b"HTTP/1.1 200 OK\r\n\r\n"),
            "read-until-close body can not persist"
        );
    }

    #[test]
    fn read_until_close_body() {
        let mut p = ResponseParser::default();
        let r = b"HTTP/1.0 200 OK\r\n\r\nPong!";
        let (n, ev) = p.advance(r, false).unwrap();
        assert!(matches!(
            ev,
            Event::Head(Head {
                status: 200,
                keep_alive: false
            })
        ));
        assert_eq!(
            p.advance(&r[n..], false).unwrap(),
            (5, Event::Body(b"Pong!"))
        );
        assert_eq!(p.on_eof(), EofOutcome::Complete);
        assert_eq!(p.advance(&[], false).unwrap(), (0, Event::Complete));
        assert_eq!(p.on_eof(), EofOutcome::Idle);
    }

    #[test]
    fn truncation_and_garbage() {
        let mut p = ResponseParser::default();
        let (n, _) = p
            .advance(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nPo", false)
            .unwrap();
        assert!(n > 0);
        let _ = p.advance(b"Po", false).unwrap();
        assert_eq!(p.on_eof(), EofOutcome::Truncated);
        let mut p = ResponseParser::default();
        assert_eq!(
            p.advance(b"HTTP/1.1 2", false).unwrap(),
            (0, Event::NeedMore)
        );
        assert_eq!(
            p.on_eof(),
            EofOutcome::Truncated,
            "partial head is a started response"
        );
        assert!(run(b"garbage\r\n\r\n", 100, false).is_err());
        assert!(
            run(b"xyz", 100, false).is_err(),
            "non-HTTP prefix is rejected without waiting"
        );
        assert!(run(b"HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n", 100, false).is_err());
        assert!(run(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            100,
            false
        )
        .is_err());
    }

    #[test]
    fn interim_100_continue_is_skipped() {
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
        let (heads, body, done, _) = run(r, 7, false).unwrap();
        assert_eq!(
            (heads.len(), heads[0].status, body.as_slice(), done),
            (1, 200, &b"x"[..], 1)
        );
    }

    #[test]
    fn request_serialisation() {
        let r = build_request("GET", "/", "h:1", &[], b"", 1, true);
        assert_eq!(r, b"GET / HTTP/1.1\r\nHost: h:1\r\n\r\n");
        let r = build_request("GET", "/a", "h", &[], b"", 1, false);
        assert_eq!(
            r,
            b"GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
        );
        let r = build_request("GET", "/", "h", &[], b"", 0, false);
        assert_eq!(r, b"GET / HTTP/1.0\r\nHost: h\r\n\r\n");
        let r = build_request(
            "POST",
            "/",
            "h",
            &[("X-A".into(), "b".into())],
            b"hi",
            0,
            true,
        );
        assert_eq!(r, b"POST / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\nContent-Length: 2\r\nX-A: b\r\n\r\nhi");
    }
}
