//! Tests of a reply's checks together: each alone, combined, across chunk boundaries, and the cap
//! on the body kept.

use super::*;
use serde_json::json;

fn media(value: &str) -> MediaType {
    MediaType::from_header(value.as_bytes())
}

/// The verdict on a reply of `chunks` under `media_type`.
fn check_typed(expect: &Expect, media_type: &MediaType, chunks: &[&[u8]]) -> bool {
    let mut c = ReplyCheck::new(expect, media_type);
    for ch in chunks {
        c.update(expect, ch);
    }
    c.finish(expect).is_ok()
}

fn check(expect: &Expect, chunks: &[&[u8]]) -> bool {
    check_typed(expect, &MediaType::NONE, chunks)
}

fn contains(needle: &str) -> Expect {
    Expect {
        contains: Some(needle.as_bytes().to_vec()),
        ..Expect::NONE
    }
}

fn json_paths(paths: &[(&str, serde_json::Value)]) -> Expect {
    Expect {
        json: paths
            .iter()
            .map(|(p, v)| JsonCheck::new(p, v.clone()).unwrap())
            .collect(),
        ..Expect::NONE
    }
}

fn content_type(want: &str) -> Expect {
    Expect {
        content_type: Some(want.as_bytes().to_vec()),
        ..Expect::NONE
    }
}

#[test]
fn body_check_alone_keeps_nothing() {
    let e = Expect::from(Body::Exact(b"Pong!".to_vec()));
    let c = ReplyCheck::new(&e, &MediaType::NONE);
    assert!(c.kept.is_none());
    assert!(check(&e, &[b"Po", b"ng!"]));
    assert!(!check(&e, &[b"Pong"]));
    assert!(check(&Expect::NONE, &[b"anything"]));
    assert!(ReplyCheck::new(&Expect::NONE, &MediaType::NONE)
        .kept
        .is_none());
}

#[test]
fn contains_across_chunk_boundaries() {
    let e = contains("World");
    let body = b"Hello, World!";
    for cut in 0..=body.len() {
        let (a, b) = body.split_at(cut);
        assert!(check(&e, &[a, b]), "cut at {cut}");
    }
    assert!(check(&e, &[b"W", b"o", b"r", b"l", b"d"]));
    assert!(!check(&e, &[b"Hello, Worl", b"D!"]));
    assert!(!check(&e, &[b"Worl"]));
    assert!(!check(&e, &[]));
    assert!(check(&contains(""), &[]));
    assert!(check(&contains("World"), &[b"World"]));
}

#[test]
fn json_fed_in_pieces() {
    let e = json_paths(&[
        ("message", json!("Hello, World!")),
        ("rows.19.id", json!(1020)),
    ]);
    let rows: Vec<_> = (1001..=1020).map(|id| json!({"id": id})).collect();
    let doc = json!({"message": "Hello, World!", "rows": rows}).to_string();
    let pieces: Vec<&[u8]> = doc.as_bytes().chunks(7).collect();
    assert!(check(&e, &pieces));
    let short = json!({"message": "Hello, World!", "rows": &rows[..19]}).to_string();
    assert!(!check(&e, &[short.as_bytes()]), "no row 19");
    assert!(!check(&e, &[&doc.as_bytes()[..doc.len() - 1]]), "cut short");
}

#[test]
fn content_type_compares_the_media_type() {
    let e = content_type("application/json");
    assert!(check_typed(
        &e,
        &media("application/json; charset=utf-8"),
        &[b"{}"]
    ));
    assert!(check_typed(&e, &media("Application/JSON"), &[]));
    assert!(!check_typed(&e, &media("text/html; charset=utf-8"), &[]));
    assert!(!check_typed(&e, &media("application/json-seq"), &[]));
    assert!(!check(&e, &[b"{}"]), "no Content-Type");
    assert!(!check_typed(&e, &media(""), &[]));
    // Without the check any Content-Type, or none, will do.
    assert!(check_typed(&Expect::NONE, &media("text/html"), &[]));
}

#[test]
fn every_check_set_must_pass() {
    let e = Expect {
        body: Body::Len(27),
        contains: Some(b"World".to_vec()),
        content_type: Some(b"application/json".to_vec()),
        ..json_paths(&[("message", json!("Hello, World!"))])
    };
    let body: &[u8] = br#"{"message":"Hello, World!"}"#;
    let ct = media("application/json");
    assert!(check_typed(&e, &ct, &[body]));
    assert!(!check_typed(&e, &media("text/plain"), &[body]));
    let other: &[u8] = br#"{"message":"Hello, world!"}"#;
    assert!(!check_typed(&e, &ct, &[other]), "contains and json fail");
    let longer: &[u8] = br#"{"message": "Hello, World!"}"#;
    assert!(!check_typed(&e, &ct, &[longer]), "body_len fails");
}

#[test]
fn a_body_beyond_the_cap_fails() {
    let e = contains("x");
    let full = vec![b'x'; BUFFER_CAP];
    assert!(check(
        &e,
        &[&full[..BUFFER_CAP / 2], &full[BUFFER_CAP / 2..]]
    ));
    assert!(!check(&e, &[&full, b"x"]));
    let mut c = ReplyCheck::new(&e, &MediaType::NONE);
    c.update(&e, &full);
    c.update(&e, b"xx");
    assert_eq!(c.kept.as_ref().map(Vec::capacity), Some(0), "freed");
    c.update(&e, b"x");
    assert_eq!(c.finish(&e), Err(Mismatch::Overflow));
    let first_is_1 = json_paths(&[("0", json!(1))]);
    let mut padded = vec![b' '; BUFFER_CAP - 3];
    padded.extend_from_slice(b"[1]");
    assert!(check(&first_is_1, &[&padded]));
    padded.push(b' ');
    assert!(!check(&first_is_1, &[&padded]));
}
