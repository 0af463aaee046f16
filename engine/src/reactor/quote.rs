//! The bytes of the reply in progress on an HTTP/1 connection, kept only in case it turns out
//! wrong: while it lies whole in the buffer being parsed nothing is copied (where it was is
//! noted); a reply that spans reads is copied, bounded, and only while its kind still wants a
//! wrong reply quoted. A wrong reply then becomes a `WrongReply`.

use std::ops::Range;

use crate::stats::ErrorClass;
use crate::validate::{status_reason, Expect, Mismatch};
use crate::wrong::{WrongReply, BODY_KEEP, HEAD_KEEP};

#[derive(Default)]
pub(super) struct Quote {
    /// The reply's head in the buffer being parsed (while `in_buffer`).
    head: Range<usize>,
    /// Where the bytes after the head not copied yet begin in the buffer being parsed.
    from: usize,
    /// The head is in the buffer being parsed: its range is good.
    in_buffer: bool,
    /// The head and the body so far, copied when the reply spanned reads (`copied`).
    head_copy: Vec<u8>,
    body_copy: Vec<u8>,
    copied: bool,
}

impl Quote {
    /// A reply's head was parsed at `head` of the buffer being parsed.
    pub fn begin(&mut self, head: Range<usize>) {
        self.from = head.end;
        self.head = head;
        self.in_buffer = true;
        self.copied = false;
    }

    /// The parse of `data` stops at `off` inside the reply: what its bytes will need later is
    /// copied when `wanted` (its kind wants a wrong reply quoted), else forgotten.
    pub fn carry(&mut self, data: &[u8], off: usize, wanted: bool) {
        if !wanted {
            self.in_buffer = false;
            self.copied = false;
            return;
        }
        if self.in_buffer {
            self.head_copy.clear();
            let head = &data[self.head.clone()];
            self.head_copy
                .extend_from_slice(&head[..head.len().min(HEAD_KEEP + 1)]);
            self.body_copy.clear();
            self.in_buffer = false;
            self.copied = true;
        }
        if self.copied {
            let room = (BODY_KEEP + 1).saturating_sub(self.body_copy.len());
            let more = &data[self.from.min(off)..off];
            self.body_copy
                .extend_from_slice(&more[..more.len().min(room)]);
        }
        self.from = 0;
    }

    /// The reply's head and its bytes after the head, ending at `end` of `data` (None: not
    /// kept).
    fn bytes<'a>(&'a self, data: &'a [u8], end: usize) -> Option<(&'a [u8], Vec<u8>)> {
        let rest = data.get(self.from.min(end)..end).unwrap_or_default();
        if self.in_buffer {
            let body = &rest[..rest.len().min(BODY_KEEP + 1)];
            return Some((&data[self.head.clone()], body.to_vec()));
        }
        if !self.copied {
            return None;
        }
        let mut body = self.body_copy.clone();
        let room = (BODY_KEEP + 1).saturating_sub(body.len());
        body.extend_from_slice(&rest[..rest.len().min(room)]);
        Some((&self.head_copy, body))
    }

    /// The wrong reply (of `class`, its `status`, its checks' verdict `checked`: None when it
    /// had no head) ending at `end` of `data`, quoted.
    #[allow(clippy::too_many_arguments)] // the reply's parts, each from where it is known
    pub fn wrong(
        &self,
        class: ErrorClass,
        status: (u16, u16),
        checked: Option<Result<(), Mismatch>>,
        expect: &Expect,
        data: &[u8],
        end: usize,
        now: u64,
    ) -> WrongReply {
        let reason = match (&checked, class) {
            (_, ErrorClass::BadStatus) => status_reason(status.0, status.1),
            (Some(Err(m)), _) => m.reason(expect),
            _ => "a reply with no head".to_owned(),
        };
        let bare = WrongReply::bare(class, status.0, reason, now);
        match self.bytes(data, end) {
            Some((head, body)) => bare.with_bytes(head, &body),
            None => bare,
        }
    }
}

/// Bytes that are not HTTP (`why`, the parser's words), from where parsing failed, quoted.
pub(super) fn not_http(why: &str, rest: &[u8], now: u64) -> WrongReply {
    let w = WrongReply::bare(
        ErrorClass::ProtocolError,
        0,
        format!("not HTTP: {why}"),
        now,
    );
    let mut w = w.with_bytes(&[], rest);
    w.head = None;
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Body;

    const REPLY: &[u8] = b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\nboom";

    fn wrong(q: &Quote, data: &[u8], end: usize) -> WrongReply {
        let e = Expect::from(Body::Exact(b"Pong!".to_vec()));
        q.wrong(ErrorClass::BadStatus, (500, 200), None, &e, data, end, 1)
    }

    #[test]
    fn a_reply_in_one_buffer_is_quoted_without_copies() {
        let mut q = Quote::default();
        let data = [b"xx".as_slice(), REPLY].concat();
        q.begin(2..REPLY.len() - 2);
        let w = wrong(&q, &data, data.len());
        assert_eq!(w.reason, "status 500, expected 200");
        assert_eq!(w.head.as_deref(), Some(&REPLY[..REPLY.len() - 4]));
        assert_eq!(w.body.as_deref(), Some(b"boom".as_slice()));
        assert!(q.head_copy.is_empty());
    }

    #[test]
    fn a_reply_over_reads_is_copied_only_when_wanted() {
        let split = REPLY.len() - 2;
        let mut q = Quote::default();
        q.begin(0..REPLY.len() - 4);
        q.carry(&REPLY[..split], split, true);
        let w = wrong(&q, b"om", 2);
        assert_eq!(w.head.as_deref(), Some(&REPLY[..REPLY.len() - 4]));
        assert_eq!(w.body.as_deref(), Some(b"boom".as_slice()));
        q.begin(0..REPLY.len() - 4);
        q.carry(&REPLY[..split], split, false);
        assert_eq!(wrong(&q, b"om", 2).head, None);
    }

    #[test]
    fn long_bodies_are_cut() {
        let mut q = Quote::default();
        let body = vec![b'b'; 3 * BODY_KEEP];
        let data = [b"H\r\n\r\n".as_slice(), &body].concat();
        q.begin(0..5);
        q.carry(&data[..BODY_KEEP], BODY_KEEP, true);
        let w = wrong(&q, &data[BODY_KEEP..], 2 * BODY_KEEP);
        assert_eq!(w.body.as_ref().map(Vec::len), Some(BODY_KEEP));
        assert!(w.body_cut && !w.head_cut);
        let garbage = not_http("bad status line", b"\x00\x01garbage", 1);
        assert_eq!(garbage.reason, "not HTTP: bad status line");
        assert_eq!(garbage.body.as_deref(), Some(b"\x00\x01garbage".as_slice()));
    }
}
