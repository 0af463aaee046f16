//! Unit tests of the HTTP/2 codec: frame headers, the opening and request header blocks.

use super::*;

#[test]
fn frame_heads_round_trip_and_drop_the_reserved_bit() {
    let mut out = Vec::new();
    put_head(
        &mut out,
        0x01_02_03,
        HEADERS,
        END_HEADERS | END_STREAM,
        0x8000_0005,
    );
    assert_eq!(out, [1, 2, 3, 1, 5, 0, 0, 0, 5]);
    let h = frame_head(&out).unwrap();
    assert_eq!(
        h,
        FrameHead {
            len: 0x01_02_03,
            kind: HEADERS,
            flags: 5,
            stream: 5
        }
    );
    assert_eq!(frame_head(&out[..8]), None);
}

#[test]
fn the_opening_offers_no_push_and_raises_the_connection_window() {
    let o = opening(1 << 20);
    assert!(o.starts_with(PREFACE));
    let s = frame_head(&o[PREFACE.len()..]).unwrap();
    assert_eq!((s.kind, s.len, s.stream), (SETTINGS, 12, 0));
    let w = &o[PREFACE.len() + FRAME_HEAD + 12..];
    let wh = frame_head(w).unwrap();
    assert_eq!((wh.kind, wh.len), (WINDOW_UPDATE, 4));
    assert_eq!(
        u32::from_be_bytes(w[9..13].try_into().unwrap()),
        (1 << 20) - 65_535
    );
    // The default window needs no update.
    assert_eq!(opening(65_535).len(), PREFACE.len() + FRAME_HEAD + 12);
}

#[test]
fn request_blocks_decode_to_the_request() {
    let headers = vec![
        ("Host".to_owned(), "example.test".to_owned()),
        ("Connection".to_owned(), "keep-alive".to_owned()),
        ("X-Long".to_owned(), "v".repeat(300)),
        ("Accept".to_owned(), "text/plain".to_owned()),
    ];
    let block = request_block("DELETE", "http", "/items/7?x=1", "127.0.0.1:80", &headers);
    let got = loona_hpack::Decoder::new().decode(&block).unwrap();
    let got: Vec<(String, String)> = got
        .into_iter()
        .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect();
    let want = [
        (":method", "DELETE".to_owned()),
        (":scheme", "http".to_owned()),
        (":path", "/items/7?x=1".to_owned()),
        (":authority", "example.test".to_owned()),
        ("x-long", "v".repeat(300)),
        ("accept", "text/plain".to_owned()),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    assert_eq!(got, want);
    let get = loona_hpack::Decoder::new()
        .decode(&request_block("GET", "https", "/", "h:1", &[]))
        .unwrap();
    assert_eq!(get[0], (b":method".to_vec(), b"GET".to_vec()));
    assert_eq!(get[1], (b":scheme".to_vec(), b"https".to_vec()));
    assert_eq!(get[2], (b":path".to_vec(), b"/".to_vec()));
    assert_eq!(get[3], (b":authority".to_vec(), b"h:1".to_vec()));
}

#[test]
fn a_header_block_over_the_frame_size_goes_on_in_continuation_frames() {
    let block: Vec<u8> = (0..25u8).collect();
    let mut out = Vec::new();
    put_block(&mut out, 3, &block, true, 10);
    let mut frames = Vec::new();
    let mut rest = &out[..];
    while let Some(h) = frame_head(rest) {
        frames.push((h.kind, h.flags, h.stream, rest[9..9 + h.len].to_vec()));
        rest = &rest[9 + h.len..];
    }
    assert!(rest.is_empty());
    assert_eq!(
        frames,
        [
            (HEADERS, END_STREAM, 3, block[..10].to_vec()),
            (CONTINUATION, 0, 3, block[10..20].to_vec()),
            (CONTINUATION, END_HEADERS, 3, block[20..].to_vec()),
        ]
    );
    // A block that fits is one HEADERS frame; an empty one too.
    for (b, flags) in [
        (&block[..10], END_HEADERS),
        (&[][..], END_HEADERS | END_STREAM),
    ] {
        let mut one = Vec::new();
        put_block(&mut one, 1, b, flags & END_STREAM != 0, 10);
        assert_eq!(
            frame_head(&one).map(|h| (h.kind, h.flags, h.len)),
            Some((HEADERS, flags, b.len()))
        );
        assert_eq!(one.len(), 9 + b.len());
    }
}
