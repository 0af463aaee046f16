//! The `json` check of a reply body: values at dotted key paths of the parsed body.

use serde_json::{Number, Value};

/// One step of a path: an object key, which may also index an array when it is a number.
#[derive(Debug, Clone, PartialEq)]
struct Segment {
    key: String,
    index: Option<usize>,
}

/// A value the body must hold at a dotted path (`rows.19.id`).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonCheck {
    /// The path as written in the plan.
    pub path: String,
    segments: Vec<Segment>,
    pub want: Value,
}

impl JsonCheck {
    /// The check of `path` (segments separated by `.`, none empty); None when a segment is empty.
    pub fn new(path: &str, want: Value) -> Option<JsonCheck> {
        let segments = path
            .split('.')
            .map(|s| {
                let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                (!s.is_empty()).then(|| Segment {
                    key: s.to_owned(),
                    index: digits.then(|| s.parse().ok()).flatten(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(JsonCheck {
            path: path.to_owned(),
            segments,
            want,
        })
    }

    /// The value at the path in `doc`: a number segment indexes an array, any segment names a
    /// key of an object; None when the path leads nowhere.
    fn find<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        self.segments.iter().try_fold(doc, |v, s| match v {
            Value::Array(items) => items.get(s.index?),
            Value::Object(map) => map.get(&s.key),
            _ => None,
        })
    }

    /// The document holds the wanted value at the path.
    pub fn holds(&self, doc: &Value) -> bool {
        self.find(doc).is_some_and(|v| same(v, &self.want))
    }
}

/// Every check holds in `body`, which must parse as JSON.
pub fn all_hold(checks: &[JsonCheck], body: &[u8]) -> bool {
    match serde_json::from_slice::<Value>(body) {
        Ok(doc) => checks.iter().all(|c| c.holds(&doc)),
        Err(_) => false,
    }
}

/// The first `json` check that does not hold in `body`, and what the body had there.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonMiss {
    /// The body does not parse as JSON (serde_json's words).
    NotJson(String),
    /// The path leads nowhere in the body.
    Missing(usize),
    /// The body holds another value at the path.
    Differs(usize, Value),
}

/// Which check fails first, and how (None: every check holds).
pub fn first_miss(checks: &[JsonCheck], body: &[u8]) -> Option<JsonMiss> {
    let doc = match serde_json::from_slice::<Value>(body) {
        Ok(doc) => doc,
        Err(e) => return Some(JsonMiss::NotJson(e.to_string())),
    };
    checks
        .iter()
        .enumerate()
        .find_map(|(i, c)| match c.find(&doc) {
            None => Some(JsonMiss::Missing(i)),
            Some(v) if !same(v, &c.want) => Some(JsonMiss::Differs(i, v.clone())),
            Some(_) => None,
        })
}

/// JSON equality with numbers compared by value (1020 equals 1020.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn same_number(x: &Number, y: &Number) -> bool {
    if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
        return p == q;
    }
    if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
        return p == q;
    }
    x.as_f64() == y.as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const WORLD: &[u8] = br#"{"message": "Hello, World!", "ok": true, "none": null,
        "rows": [{"id": 1001, "n": 1.5}, {"id": 1002, "tags": ["a", "b"]}], "1": "one"}"#;

    fn holds(path: &str, want: Value) -> bool {
        all_hold(&[JsonCheck::new(path, want).unwrap()], WORLD)
    }

    #[test]
    fn object_keys_and_array_indexes() {
        assert!(holds("message", json!("Hello, World!")));
        assert!(holds("rows.1.id", json!(1002)));
        assert!(holds("rows.1.tags.0", json!("a")));
        assert!(holds("rows.1.tags", json!(["a", "b"])));
        assert!(holds("ok", json!(true)));
        assert!(holds("none", Value::Null));
        // A number segment names a key of an object.
        assert!(holds("1", json!("one")));
    }

    #[test]
    fn missing_paths_and_wrong_values_fail() {
        assert!(!holds("rows.2.id", json!(1003)), "no such row");
        assert!(!holds("rows.x", json!(1)), "a key on an array");
        assert!(!holds("message.length", json!(13)), "a key on a string");
        assert!(!holds("absent", Value::Null), "missing is not null");
        assert!(!holds("message", json!("Hello, World")));
        assert!(
            !holds("rows.0.id", json!("1001")),
            "a string is not a number"
        );
        assert!(!holds("ok", json!(1)), "a boolean is not a number");
        assert!(!holds("rows.1.tags", json!(["a"])));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(holds("rows.0.id", json!(1001.0)));
        assert!(holds("rows.0.n", json!(1.5)));
        assert!(!holds("rows.0.n", json!(1)));
        let big = json!(u64::MAX);
        assert!(same(&big, &json!(u64::MAX)));
        assert!(!same(&json!(-1), &big));
        assert!(same(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
    }

    #[test]
    fn an_object_with_a_key_more_or_fewer_differs() {
        // every key of one found in the other is not enough: the other may hold more
        assert!(holds("rows.0", json!({"id": 1001, "n": 1.5})));
        assert!(
            !holds("rows.0", json!({"id": 1001})),
            "the reply has a key more"
        );
        assert!(
            !holds("rows.0", json!({"id": 1001, "n": 1.5, "x": 0})),
            "the reply has a key fewer"
        );
        assert!(!same(&json!({}), &json!({"a": 1})));
        assert!(!same(&json!({"a": 1}), &json!({})));
    }

    #[test]
    fn a_body_that_is_not_json_fails() {
        let c = [JsonCheck::new("a", json!(1)).unwrap()];
        assert!(all_hold(&c, br#" {"a": 1} "#));
        assert!(!all_hold(&c, br#"{"a": 1"#));
        assert!(!all_hold(&c, br#"{"a": 1} x"#));
        assert!(!all_hold(&c, b""));
        assert!(!all_hold(&c, b"\xff"));
    }

    #[test]
    fn the_first_miss_is_named() {
        let c = |p: &str, v: Value| JsonCheck::new(p, v).unwrap();
        let checks = [
            c("rows.0.id", json!(1001)),
            c("rows.1.id", json!(8)),
            c("x", json!(1)),
        ];
        assert_eq!(
            first_miss(&checks, WORLD),
            Some(JsonMiss::Differs(1, json!(1002)))
        );
        assert_eq!(first_miss(&checks[2..], WORLD), Some(JsonMiss::Missing(0)));
        assert_eq!(first_miss(&checks[..1], WORLD), None);
        assert!(matches!(
            first_miss(&checks, b"{"),
            Some(JsonMiss::NotJson(_))
        ));
    }

    #[test]
    fn paths_have_no_empty_segment() {
        for bad in ["", ".a", "a.", "a..b"] {
            assert!(JsonCheck::new(bad, json!(1)).is_none(), "{bad:?}");
        }
        let huge = JsonCheck::new("99999999999999999999999", json!(1)).unwrap();
        assert!(!all_hold(&[huge], b"[1]"));
    }
}
