//! A wrong reply's reason in words: which check failed and what the reply had instead
//! ("json items.4.id: got 7, expected 8"), bounded, its bytes escaped.

use super::json::{first_miss, JsonMiss};
use super::{Body, BodyMiss, Expect, Mismatch};

/// Most characters of a value or of bytes a reason quotes.
const QUOTE_MAX: usize = 80;

/// The reason of a reply whose status was not the expected one.
pub fn status_reason(got: u16, want: u16) -> String {
    format!("status {got}, expected {want}")
}

/// `bytes` as a quoted string: printable ASCII as is, the rest escaped (`\n`, `\x00`), cut
/// after `QUOTE_MAX` characters with "…".
pub fn quote(bytes: &[u8]) -> String {
    let escaped: String = bytes.escape_ascii().to_string();
    let mut out: String = escaped.chars().take(QUOTE_MAX).collect();
    if out.len() < escaped.len() {
        out.push('…');
    }
    format!("\"{out}\"")
}

/// A JSON value as its text, cut after `QUOTE_MAX` characters.
fn value(v: &serde_json::Value) -> String {
    let text = v.to_string();
    let mut out: String = text.chars().take(QUOTE_MAX).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

impl Mismatch {
    /// What was wrong, in one line.
    pub fn reason(&self, expect: &Expect) -> String {
        match self {
            Mismatch::ContentType(got) => {
                let want = quote(expect.content_type.as_deref().unwrap_or_default());
                match got.get() {
                    Some(t) => format!("Content-Type {}, expected {want}", quote(t)),
                    None => format!("no Content-Type, expected {want}"),
                }
            }
            Mismatch::Overflow => format!(
                "body over {} MiB, the most kept for body_contains and json",
                super::BUFFER_CAP >> 20
            ),
            Mismatch::Body(miss) => body_reason(miss, &expect.body),
            Mismatch::Contains => format!(
                "body does not contain {}",
                quote(expect.contains.as_deref().unwrap_or_default())
            ),
            Mismatch::Json(kept) => json_reason(expect, kept),
        }
    }
}

fn body_reason(miss: &BodyMiss, want: &Body) -> String {
    match (miss, want) {
        (BodyMiss::Exact { seen, differs_at }, Body::Exact(w)) => {
            let (n, shown) = (w.len(), quote(w));
            if differs_at == seen && seen < &n {
                format!("body of {seen} bytes, the first of the expected {shown} ({n} bytes)")
            } else if *differs_at == n {
                format!("body of {seen} bytes, the expected {shown} ({n} bytes) and more")
            } else {
                format!(
                    "body differs from the expected {shown} at byte {differs_at} ({seen} bytes)"
                )
            }
        }
        (BodyMiss::Len(got), Body::Len(w)) => format!("body of {got} bytes, expected {w}"),
        (BodyMiss::Sha, _) => "body's SHA-256 is not the expected one".to_owned(),
        (BodyMiss::Float(got), Body::Float { min, max }) => {
            format!("body {} is not a number in [{min}, {max}]", quote(got))
        }
        _ => "body is not the expected one".to_owned(),
    }
}

fn json_reason(expect: &Expect, kept: &[u8]) -> String {
    let want = |i: usize| value(&expect.json[i].want);
    let path = |i: usize| &expect.json[i].path;
    match first_miss(&expect.json, kept) {
        Some(JsonMiss::NotJson(e)) => format!("body is not JSON ({e})"),
        Some(JsonMiss::Missing(i)) => format!("json {}: missing, expected {}", path(i), want(i)),
        Some(JsonMiss::Differs(i, got)) => {
            format!(
                "json {}: got {}, expected {}",
                path(i),
                value(&got),
                want(i)
            )
        }
        None => "json: every value holds".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::MediaType;
    use crate::validate::JsonCheck;
    use serde_json::json;

    fn exact(miss: BodyMiss) -> String {
        Mismatch::Body(miss).reason(&Expect::from(Body::Exact(b"Pong!".to_vec())))
    }

    #[test]
    fn reasons_say_what_was_instead() {
        let e = Expect {
            json: vec![JsonCheck::new("items.4.id", json!(8)).unwrap()],
            ..Expect::NONE
        };
        let body = br#"{"items": [1, 2, 3, 4, {"id": 7}]}"#.to_vec();
        assert_eq!(
            Mismatch::Json(body).reason(&e),
            "json items.4.id: got 7, expected 8"
        );
        assert_eq!(
            Mismatch::Json(b"{}".to_vec()).reason(&e),
            "json items.4.id: missing, expected 8"
        );
        assert!(Mismatch::Json(b"<html>".to_vec())
            .reason(&e)
            .starts_with("body is not JSON ("));
        assert_eq!(status_reason(500, 200), "status 500, expected 200");
        let d = |seen, differs_at| BodyMiss::Exact { seen, differs_at };
        assert_eq!(
            exact(d(5, 1)),
            "body differs from the expected \"Pong!\" at byte 1 (5 bytes)"
        );
        assert_eq!(
            exact(d(3, 3)),
            "body of 3 bytes, the first of the expected \"Pong!\" (5 bytes)"
        );
        assert_eq!(
            exact(d(9, 5)),
            "body of 9 bytes, the expected \"Pong!\" (5 bytes) and more"
        );
        let typed = Expect {
            content_type: Some(b"application/json".to_vec()),
            ..Expect::NONE
        };
        let html = MediaType::from_header(b"text/html; charset=utf-8");
        assert_eq!(
            Mismatch::ContentType(html).reason(&typed),
            "Content-Type \"text/html\", expected \"application/json\""
        );
    }

    #[test]
    fn quoted_bytes_are_escaped_and_bounded() {
        assert_eq!(quote(b"a\x1b[2Jb\n"), "\"a\\x1b[2Jb\\n\"");
        let long = quote(&[b'x'; 500]);
        assert!(long.chars().count() <= QUOTE_MAX + 3 && long.ends_with("…\""));
        let got = json!("x".repeat(500));
        assert!(value(&got).ends_with('…'));
    }
}
