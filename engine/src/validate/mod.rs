//! Reply checks beyond the status: what a request kind's reply must be, and the running check of
//! one reply.
//!
//! - `body`: the one whole-body check (exact, length, SHA-256, float range), fed as it streams;
//! - `json`: values at dotted key paths of a JSON body.
//!
//! `body_contains` and `json` need the body whole: only when one of them is set is the body kept,
//! up to `BUFFER_CAP` bytes (a longer body fails them). The Content-Type is read with the head.

mod body;
mod json;

pub use body::{Body, BodyCheck};
pub use json::JsonCheck;

use crate::http::MediaType;

/// Most body bytes kept for `body_contains` and `json`; a longer body fails those checks.
pub const BUFFER_CAP: usize = 1 << 20;

/// What a request kind's reply must be, besides its status; every check set must pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub body: Body,
    /// The body contains these bytes.
    pub contains: Option<Vec<u8>>,
    /// The body is JSON holding these values (empty: no JSON check).
    pub json: Vec<JsonCheck>,
    /// The reply's Content-Type media type, lowercased.
    pub content_type: Option<Vec<u8>>,
}

impl Expect {
    /// Any status and body will do.
    pub const NONE: Expect = Expect {
        body: Body::None,
        contains: None,
        json: Vec::new(),
        content_type: None,
    };

    /// The whole body must be kept for a check.
    fn buffers(&self) -> bool {
        self.contains.is_some() || !self.json.is_empty()
    }
}

impl From<Body> for Expect {
    fn from(body: Body) -> Expect {
        Expect {
            body,
            ..Expect::NONE
        }
    }
}

/// Running state of one reply's checks, from its head to its end.
pub struct ReplyCheck {
    body: BodyCheck,
    /// The body so far, only when `body_contains` or `json` is set.
    kept: Option<Vec<u8>>,
    /// The body outgrew `BUFFER_CAP`.
    overflow: bool,
    type_ok: bool,
}

impl ReplyCheck {
    /// The check of a reply whose head declared `media_type`.
    pub fn new(expect: &Expect, media_type: &MediaType) -> ReplyCheck {
        let type_ok = match &expect.content_type {
            None => true,
            Some(want) => media_type.get() == Some(want.as_slice()),
        };
        ReplyCheck {
            body: BodyCheck::new(&expect.body),
            kept: expect.buffers().then(Vec::new),
            overflow: false,
            type_ok,
        }
    }

    pub fn update(&mut self, expect: &Expect, chunk: &[u8]) {
        self.body.update(&expect.body, chunk);
        if let Some(kept) = self.kept.as_mut() {
            if self.overflow || kept.len() + chunk.len() > BUFFER_CAP {
                self.overflow = true;
                *kept = Vec::new();
            } else {
                kept.extend_from_slice(chunk);
            }
        }
    }

    /// True when the complete reply passed every check.
    pub fn finish(self, expect: &Expect) -> bool {
        if !self.type_ok || self.overflow || !self.body.finish(&expect.body) {
            return false;
        }
        let Some(kept) = self.kept else {
            return true;
        };
        expect.contains.as_ref().is_none_or(|n| contains(&kept, n))
            && (expect.json.is_empty() || json::all_hold(&expect.json, &kept))
    }
}

/// `hay` holds `needle` somewhere (an empty needle is everywhere).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let last = match hay.len().checked_sub(needle.len()) {
        Some(last) => last,
        None => return false,
    };
    (0..=last).any(|i| hay[i] == first && hay[i + 1..i + needle.len()] == *rest)
}

#[cfg(test)]
mod tests;
