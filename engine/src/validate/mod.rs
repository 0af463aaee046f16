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
mod reason;

pub use body::{Body, BodyCheck, BodyMiss};
pub use json::JsonCheck;
pub use reason::status_reason;

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
    /// The reply's media type, when it was not the expected one.
    wrong_type: Option<MediaType>,
}

/// Why a complete reply failed its checks (its reason is `Mismatch::reason`).
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// The reply's media type (`MediaType::NONE`: it had none).
    ContentType(MediaType),
    /// The body outgrew `BUFFER_CAP`, the most kept for `body_contains` and `json`.
    Overflow,
    Body(BodyMiss),
    Contains,
    /// A `json` value does not hold: the body, kept whole, says which.
    Json(Vec<u8>),
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
            wrong_type: (!type_ok).then_some(*media_type),
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

    /// Ok when the complete reply passed every check; else the first check it failed.
    pub fn finish(self, expect: &Expect) -> Result<(), Mismatch> {
        if let Some(got) = self.wrong_type {
            return Err(Mismatch::ContentType(got));
        }
        if self.overflow {
            return Err(Mismatch::Overflow);
        }
        self.body.finish(&expect.body).map_err(Mismatch::Body)?;
        let Some(kept) = self.kept else {
            return Ok(());
        };
        if !expect.contains.as_ref().is_none_or(|n| contains(&kept, n)) {
            return Err(Mismatch::Contains);
        }
        if !expect.json.is_empty() && !json::all_hold(&expect.json, &kept) {
            return Err(Mismatch::Json(kept));
        }
        Ok(())
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
