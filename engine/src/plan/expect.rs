//! A request kind's `expect`: the status, at most one whole-body check, and the checks that
//! combine with it (`body_contains`, `json`, `content_type`).

use serde_json::{Map, Value};

use super::fields::{err, int, num, obj, req_int, string};
use super::PlanError;
use crate::http::MEDIA_TYPE_MAX;
use crate::validate::{Body, Expect, JsonCheck};

type Fields = Map<String, Value>;

/// (status, checks) of `requests[i].expect`; absent: status 200, any body.
pub(super) fn parse_expect(v: Option<&Value>, ctx: &str) -> Result<(u16, Expect), PlanError> {
    let Some(v) = v else {
        return Ok((200, Expect::NONE));
    };
    let c = format!("{ctx}.expect");
    let m = obj(v, &c)?;
    let status = req_int(m, "status", &c)?;
    if !(100..=999).contains(&status) {
        return err(format!("{c}.status must be an HTTP status code"));
    }
    let expect = Expect {
        body: parse_body(m, &c)?,
        contains: string(m, "body_contains", &c)?.map(|s| s.as_bytes().to_vec()),
        json: parse_json(m, &c)?,
        content_type: parse_content_type(m, &c)?,
    };
    Ok((status as u16, expect))
}

/// The one whole-body check: `body`, `body_len`, `body_sha256` or `body_float`.
fn parse_body(m: &Fields, c: &str) -> Result<Body, PlanError> {
    let mut checks = Vec::new();
    if let Some(b) = string(m, "body", c)? {
        checks.push(Body::Exact(b.as_bytes().to_vec()));
    }
    if let Some(n) = int(m, "body_len", c)? {
        checks.push(Body::Len(n));
    }
    if let Some(h) = string(m, "body_sha256", c)? {
        let bytes = decode_hex(h).filter(|b| b.len() == 32);
        match bytes {
            Some(b) => checks.push(Body::Sha256(b.try_into().expect("32 bytes"))),
            None => return err(format!("{c}.body_sha256 must be 64 hex digits")),
        }
    }
    if let Some(f) = m.get("body_float") {
        let fc = format!("{c}.body_float");
        let fm = obj(f, &fc)?;
        let min = num(fm, "min", &fc)?.unwrap_or(f64::NEG_INFINITY);
        let max = num(fm, "max", &fc)?.unwrap_or(f64::INFINITY);
        checks.push(Body::Float { min, max });
    }
    if checks.len() > 1 {
        return err(format!(
            "{c} may hold at most one of body, body_len, body_sha256, body_float"
        ));
    }
    Ok(checks.pop().unwrap_or(Body::None))
}

/// `json`: a non-empty object of dotted paths (no empty segment) to the values found there.
fn parse_json(m: &Fields, c: &str) -> Result<Vec<JsonCheck>, PlanError> {
    let paths = match m.get("json") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(paths)) if !paths.is_empty() => paths,
        Some(_) => return err(format!("{c}.json must be a non-empty object")),
    };
    paths
        .iter()
        .map(|(path, want)| {
            JsonCheck::new(path, want.clone()).map_or_else(
                || {
                    err(format!(
                        "{c}.json path {path:?} must be keys and array indexes joined by ., none empty"
                    ))
                },
                Ok,
            )
        })
        .collect()
}

/// `content_type`: a media type (`type/subtype`, no parameters), kept lowercased.
fn parse_content_type(m: &Fields, c: &str) -> Result<Option<Vec<u8>>, PlanError> {
    let Some(t) = string(m, "content_type", c)? else {
        return Ok(None);
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !b"/;,\"\\()<>@:=?[]{}".contains(&b))
    };
    match t.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) && t.len() <= MEDIA_TYPE_MAX => {
            Ok(Some(t.to_ascii_lowercase().into_bytes()))
        }
        _ => err(format!(
            "{c}.content_type must be a media type such as \"application/json\" \
             (no parameters, at most {MEDIA_TYPE_MAX} bytes), not {t:?}"
        )),
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(v: Value) -> Result<Expect, String> {
        parse_expect(Some(&v), "requests[0]")
            .map(|(_, e)| e)
            .map_err(|e| e.0)
    }

    #[test]
    fn the_new_checks_combine_with_a_body_check() {
        let e = expect(
            json!({"status": 200, "body_len": 27, "body_contains": "World",
            "json": {"message": "Hello, World!", "rows.19.id": 1020},
            "content_type": "Application/JSON"}),
        )
        .unwrap();
        assert_eq!(e.body, Body::Len(27));
        assert_eq!(e.contains.as_deref(), Some(&b"World"[..]));
        let paths: Vec<_> = e.json.iter().map(|j| (j.path.as_str(), &j.want)).collect();
        assert_eq!(
            paths,
            [
                ("message", &json!("Hello, World!")),
                ("rows.19.id", &json!(1020))
            ]
        );
        assert_eq!(e.content_type.as_deref(), Some(&b"application/json"[..]));
        let bare = expect(json!({"status": 204})).unwrap();
        assert_eq!(bare, Expect::NONE);
    }

    #[test]
    fn wrong_types_name_the_field() {
        let long = format!("a/{}", "b".repeat(MEDIA_TYPE_MAX));
        let cases = [
            (
                json!({"body_contains": 1}),
                "requests[0].expect.body_contains must be a string",
            ),
            (
                json!({"json": "message"}),
                "requests[0].expect.json must be a non-empty object",
            ),
            (
                json!({"json": {}}),
                "requests[0].expect.json must be a non-empty object",
            ),
            (
                json!({"json": ["a"]}),
                "requests[0].expect.json must be a non-empty object",
            ),
            (
                json!({"json": {"": 1}}),
                "requests[0].expect.json path \"\"",
            ),
            (
                json!({"json": {"rows..id": 1}}),
                "requests[0].expect.json path \"rows..id\"",
            ),
            (
                json!({"content_type": true}),
                "requests[0].expect.content_type must be a string",
            ),
            (
                json!({"content_type": "json"}),
                "content_type must be a media type",
            ),
            (
                json!({"content_type": "text/html; charset=utf-8"}),
                "no parameters",
            ),
            (
                json!({"content_type": "a/b/c"}),
                "content_type must be a media type",
            ),
            (
                json!({"content_type": " a/b"}),
                "content_type must be a media type",
            ),
            (json!({"content_type": long}), "at most 64 bytes"),
            (
                json!({"body": "x", "body_sha256": "00"}),
                "body_sha256 must be 64 hex digits",
            ),
        ];
        for (mut v, needle) in cases {
            v["status"] = json!(200);
            let e = expect(v.clone()).unwrap_err();
            assert!(e.contains(needle), "{v}: {e:?} lacks {needle:?}");
        }
    }
}
