//! Tests of the response parser: framing, persistence, end of stream and garbage, with the input
//! fed in pieces as a socket delivers them.

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
                keep_alive: true,
                media_type: MediaType::NONE,
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
            keep_alive: false,
            ..
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
fn content_type_media_type() {
    let head = |extra: &str| {
        let r = format!("HTTP/1.1 200 OK\r\n{extra}Content-Length: 0\r\n\r\n");
        run(r.as_bytes(), r.len(), false).unwrap().0[0]
    };
    let json = head("Content-Type: Application/JSON ; charset=utf-8\r\n");
    assert_eq!(json.media_type.get(), Some(&b"application/json"[..]));
    // The first of two is kept.
    let two = head("content-type: text/plain\r\nContent-Type: text/html\r\n");
    assert_eq!(two.media_type.get(), Some(&b"text/plain"[..]));
    assert_eq!(head("").media_type.get(), None);
    assert_eq!(head("Content-Type: ;x=1\r\n").media_type.get(), None);
    let long = format!("Content-Type: a/{}\r\n", "b".repeat(MEDIA_TYPE_MAX));
    assert_eq!(head(&long).media_type.get(), None);
    let fits = format!("Content-Type: a/{}\r\n", "b".repeat(MEDIA_TYPE_MAX - 2));
    assert_eq!(
        head(&fits).media_type.get().map(<[u8]>::len),
        Some(MEDIA_TYPE_MAX)
    );
}
