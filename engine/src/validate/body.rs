//! The one check of a whole reply body (exact, length, SHA-256, float range), fed incrementally
//! so that the body is never buffered whole.

use sha2::{Digest, Sha256};

/// What a request kind's reply body must be, checked as it streams by.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    Exact(Vec<u8>),
    Len(u64),
    Sha256([u8; 32]),
    Float { min: f64, max: f64 },
}

/// Longest body a float check looks at; a float reply longer than this is wrong anyway.
const FLOAT_MAX_BYTES: usize = 64;

/// Running state of one reply's body check.
pub enum BodyCheck {
    /// Exact compare: bytes matched so far, or `usize::MAX` once a mismatch was seen.
    Exact(usize),
    Len(u64),
    Sha(Box<Sha256>),
    Float(Vec<u8>),
    None,
}

impl BodyCheck {
    pub fn new(expect: &Body) -> BodyCheck {
        match expect {
            Body::None => BodyCheck::None,
            Body::Exact(_) => BodyCheck::Exact(0),
            Body::Len(_) => BodyCheck::Len(0),
            Body::Sha256(_) => BodyCheck::Sha(Box::default()),
            Body::Float { .. } => BodyCheck::Float(Vec::new()),
        }
    }

    pub fn update(&mut self, expect: &Body, chunk: &[u8]) {
        match (self, expect) {
            (BodyCheck::Exact(pos), Body::Exact(want)) if *pos != usize::MAX => {
                let end = *pos + chunk.len();
                *pos = if end <= want.len() && want[*pos..end] == *chunk {
                    end
                } else {
                    usize::MAX
                };
            }
            (BodyCheck::Len(n), _) => *n += chunk.len() as u64,
            (BodyCheck::Sha(h), _) => h.update(chunk),
            (BodyCheck::Float(buf), _) => {
                let room = (FLOAT_MAX_BYTES + 1).saturating_sub(buf.len());
                buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            _ => {}
        }
    }

    /// True when the complete body passed.
    pub fn finish(self, expect: &Body) -> bool {
        match (self, expect) {
            (BodyCheck::Exact(pos), Body::Exact(want)) => pos == want.len(),
            (BodyCheck::Len(n), Body::Len(want)) => n == *want,
            (BodyCheck::Sha(h), Body::Sha256(want)) => h.finalize().as_slice() == want,
            (BodyCheck::Float(buf), Body::Float { min, max }) => {
                buf.len() <= FLOAT_MAX_BYTES
                    && std::str::from_utf8(&buf)
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .is_some_and(|x| x >= *min && x <= *max)
            }
            (BodyCheck::None, Body::None) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(expect: &Body, chunks: &[&[u8]]) -> bool {
        let mut c = BodyCheck::new(expect);
        for ch in chunks {
            c.update(expect, ch);
        }
        c.finish(expect)
    }

    #[test]
    fn exact_across_chunks() {
        let e = Body::Exact(b"Pong!".to_vec());
        assert!(check(&e, &[b"Po", b"ng!"]));
        assert!(!check(&e, &[b"Pong"]));
        assert!(!check(&e, &[b"Pong!", b"x"]));
        assert!(!check(&e, &[b"Ping!"]));
    }

    #[test]
    fn len_sha_float() {
        assert!(check(&Body::Len(3), &[b"ab", b"c"]));
        assert!(!check(&Body::Len(3), &[b"ab"]));
        let sha: [u8; 32] = Sha256::digest(b"hello").into();
        assert!(check(&Body::Sha256(sha), &[b"he", b"llo"]));
        assert!(!check(&Body::Sha256(sha), &[b"hello!"]));
        let f = Body::Float { min: 0.5, max: 1.5 };
        assert!(check(&f, &[b" 1.", b"25\n"]));
        assert!(!check(&f, &[b"2.0"]));
        assert!(!check(&f, &[b"nope"]));
        assert!(check(&Body::None, &[b"anything"]));
    }
}
