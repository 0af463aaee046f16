//! Wrong replies quoted: per request kind, the first reply of each error class that has one
//! (bad_status, bad_body, protocol_error), with its status, head and first body bytes, bounded,
//! and the reason its check gave; the result's `wrong_replies`.

use serde_json::{json, Value};

use crate::stats::{ErrorClass, ERROR_NAMES};

/// Most bytes of a wrong reply's head kept.
pub const HEAD_KEEP: usize = 2048;
/// Most bytes after a wrong reply's head kept (the body as sent, chunk framing included).
pub const BODY_KEEP: usize = 512;

/// One wrong reply, as quoted.
#[derive(Debug, Clone, PartialEq)]
pub struct WrongReply {
    pub class: ErrorClass,
    /// Its status (0: none was read, as for bytes that are not HTTP).
    pub status: u16,
    pub reason: String,
    /// Its head as received, at most `HEAD_KEEP` bytes (None: not kept, as on HTTP/2).
    pub head: Option<Vec<u8>>,
    /// The bytes after its head, at most `BODY_KEEP` (None: not kept).
    pub body: Option<Vec<u8>>,
    /// The head or body was longer than what is kept.
    pub head_cut: bool,
    pub body_cut: bool,
    /// When it ended (the engine's clock, ns): across threads the first is kept.
    pub at_ns: u64,
}

impl WrongReply {
    /// A reply quoted by its status and reason only (no bytes kept).
    pub fn bare(class: ErrorClass, status: u16, reason: String, at_ns: u64) -> WrongReply {
        WrongReply {
            class,
            status,
            reason,
            head: None,
            body: None,
            head_cut: false,
            body_cut: false,
            at_ns,
        }
    }

    /// With `head` and `body` kept, each cut to its bound.
    pub fn with_bytes(mut self, head: &[u8], body: &[u8]) -> WrongReply {
        self.head_cut = head.len() > HEAD_KEEP;
        self.body_cut = body.len() > BODY_KEEP;
        self.head = Some(head[..head.len().min(HEAD_KEEP)].to_vec());
        self.body = Some(body[..body.len().min(BODY_KEEP)].to_vec());
        self
    }

    fn to_json(&self) -> Value {
        let text = |b: &Option<Vec<u8>>| {
            b.as_ref()
                .map(|b| Value::String(String::from_utf8_lossy(b).into_owned()))
        };
        json!({
            "error": ERROR_NAMES[self.class as usize],
            "status": self.status,
            "reason": self.reason,
            "head": text(&self.head),
            "head_cut": self.head_cut,
            "body": text(&self.body),
            "body_cut": self.body_cut,
        })
    }
}

/// A kind's wrong replies: at most one per error class, the first.
#[derive(Debug, Default, Clone)]
pub struct WrongReplies(Vec<WrongReply>);

impl WrongReplies {
    /// No reply of `class` is quoted yet.
    pub fn wants(&self, class: ErrorClass) -> bool {
        !self.0.iter().any(|w| w.class == class)
    }

    /// Some class a reply may fail with has no reply quoted yet.
    pub fn wants_any(&self) -> bool {
        self.wants(ErrorClass::BadStatus) || self.wants(ErrorClass::BadBody)
    }

    /// Keep `w` unless its class has a reply that came before it.
    pub fn keep(&mut self, w: WrongReply) {
        match self.0.iter_mut().find(|o| o.class == w.class) {
            Some(o) if w.at_ns < o.at_ns => *o = w,
            Some(_) => {}
            None => {
                self.0.push(w);
                self.0.sort_by_key(|w| w.class as usize);
            }
        }
    }

    pub fn merge(&mut self, o: &WrongReplies) {
        for w in &o.0 {
            self.keep(w.clone());
        }
    }

    pub fn to_json(&self) -> Value {
        Value::Array(self.0.iter().map(WrongReply::to_json).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(class: ErrorClass, at_ns: u64) -> WrongReply {
        WrongReply::bare(class, 500, format!("at {at_ns}"), at_ns)
    }

    #[test]
    fn the_first_of_each_class_is_kept() {
        let mut a = WrongReplies::default();
        assert!(a.wants(ErrorClass::BadBody) && a.wants_any());
        a.keep(at(ErrorClass::BadBody, 5));
        a.keep(at(ErrorClass::BadBody, 9));
        let mut b = WrongReplies::default();
        b.keep(at(ErrorClass::BadBody, 2));
        b.keep(at(ErrorClass::BadStatus, 7));
        a.merge(&b);
        assert!(!a.wants_any());
        let doc = a.to_json();
        assert_eq!(doc[0]["error"], "bad_status");
        assert_eq!(doc[1]["reason"], "at 2");
        assert_eq!(doc.as_array().unwrap().len(), 2);
    }

    #[test]
    fn bytes_are_bounded_and_lossless_where_text() {
        let head = vec![b'h'; HEAD_KEEP + 1];
        let w = at(ErrorClass::BadStatus, 1).with_bytes(&head, b"caf\xc3\xa9\xff");
        let doc = w.to_json();
        assert_eq!(doc["head"].as_str().unwrap().len(), HEAD_KEEP);
        assert_eq!(doc["head_cut"], true);
        assert_eq!(doc["body"], "café\u{fffd}");
        assert_eq!(doc["body_cut"], false);
        assert_eq!(at(ErrorClass::BadBody, 1).to_json()["head"], Value::Null);
    }
}
