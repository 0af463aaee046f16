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
    /// Exact compare: bytes seen so far, and where the body first left the expected one.
    Exact {
        seen: usize,
        differs_at: Option<usize>,
    },
    Len(u64),
    Sha(Box<Sha256>),
    Float(Vec<u8>),
    None,
}

impl BodyCheck {
    pub fn new(expect: &Body) -> BodyCheck {
        match expect {
            Body::None => BodyCheck::None,
            Body::Exact(_) => BodyCheck::Exact {
                seen: 0,
                differs_at: None,
            },
            Body::Len(_) => BodyCheck::Len(0),
            Body::Sha256(_) => BodyCheck::Sha(Box::default()),
            Body::Float { .. } => BodyCheck::Float(Vec::new()),
        }
    }

    pub fn update(&mut self, expect: &Body, chunk: &[u8]) {
        match (self, expect) {
            (BodyCheck::Exact { seen, differs_at }, Body::Exact(want)) => {
                let end = *seen + chunk.len();
                if differs_at.is_none() && !(end <= want.len() && want[*seen..end] == *chunk) {
                    let rest = want.get(*seen..).unwrap_or_default();
                    let same = chunk.iter().zip(rest).take_while(|(a, b)| a == b).count();
                    *differs_at = Some(*seen + same);
                }
                *seen = end;
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

    /// Ok when the complete body passed; else what it was instead.
    pub fn finish(self, expect: &Body) -> Result<(), BodyMiss> {
        let miss = match (self, expect) {
            (BodyCheck::Exact { seen, differs_at }, Body::Exact(want)) => {
                if differs_at.is_none() && seen == want.len() {
                    return Ok(());
                }
                BodyMiss::Exact {
                    seen,
                    differs_at: differs_at.unwrap_or(seen.min(want.len())),
                }
            }
            (BodyCheck::Len(n), Body::Len(want)) if n == *want => return Ok(()),
            (BodyCheck::Len(n), _) => BodyMiss::Len(n),
            (BodyCheck::Sha(h), Body::Sha256(want)) => {
                if h.finalize().as_slice() == want {
                    return Ok(());
                }
                BodyMiss::Sha
            }
            (BodyCheck::Float(buf), Body::Float { min, max }) => {
                let x = std::str::from_utf8(&buf)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok());
                if buf.len() <= FLOAT_MAX_BYTES && x.is_some_and(|x| x >= *min && x <= *max) {
                    return Ok(());
                }
                BodyMiss::Float(buf)
            }
            (BodyCheck::None, Body::None) => return Ok(()),
            // A check made for another expectation than the one given: never passes.
            _ => BodyMiss::Other,
        };
        Err(miss)
    }
}

/// How a complete body failed its check: what the reason of a wrong reply is made of.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyMiss {
    /// `seen` bytes, the first differing from the expected body at `differs_at` (the expected
    /// body's length when it was only longer or shorter).
    Exact {
        seen: usize,
        differs_at: usize,
    },
    Len(u64),
    Sha,
    /// The bytes looked at (at most one more than a float check reads).
    Float(Vec<u8>),
    /// The check was made for another expectation (never happens: both come from one plan).
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(expect: &Body, chunks: &[&[u8]]) -> bool {
        let mut c = BodyCheck::new(expect);
        for ch in chunks {
            c.update(expect, ch);
        }
        c.finish(expect).is_ok()
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

    #[test]
    fn an_exact_miss_says_where() {
        let e = Body::Exact(b"Pong!".to_vec());
        let miss = |chunks: &[&[u8]]| {
            let mut c = BodyCheck::new(&e);
            for ch in chunks {
                c.update(&e, ch);
            }
            c.finish(&e).unwrap_err()
        };
        let at = |seen, differs_at| BodyMiss::Exact { seen, differs_at };
        assert_eq!(miss(&[b"Po", b"nk!"]), at(5, 3));
        assert_eq!(miss(&[b"Pong"]), at(4, 4));
        assert_eq!(miss(&[b"Pong!", b"!!"]), at(7, 5));
        assert_eq!(miss(&[b"Pong!!", b"x"]), at(7, 5));
        assert_eq!(miss(&[b"x"]), at(1, 0));
        let mut len = BodyCheck::new(&Body::Len(3));
        len.update(&Body::Len(3), b"ab");
        assert_eq!(len.finish(&Body::Len(3)), Err(BodyMiss::Len(2)));
    }

    #[test]
    fn a_float_body_longer_than_64_bytes_fails_however_it_is_cut() {
        let f = Body::Float { min: 0.5, max: 1.5 };
        // 64 bytes: still read whole, and in range
        let at_most = format!("1.{}", "0".repeat(FLOAT_MAX_BYTES - 2));
        assert!(check(&f, &[at_most.as_bytes()]));
        // 65 and 70 bytes of the same value: too long, whether in one chunk or in many
        for len in [FLOAT_MAX_BYTES + 1, FLOAT_MAX_BYTES + 6] {
            let long = format!("1.{}", "0".repeat(len - 2));
            assert!(!check(&f, &[long.as_bytes()]), "{len} bytes");
            let halves = long.as_bytes().split_at(len / 2);
            assert!(!check(&f, &[halves.0, halves.1]), "{len} bytes in two");
        }
    }
}
