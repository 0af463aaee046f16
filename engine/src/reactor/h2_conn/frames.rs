//! The server's frames on an HTTP/2 connection, taken one by one: replies completed (in any
//! order), streams reset, the connection's frames answered, and what breaks the protocol.

use super::{protocol_error, unpadded, word, H2Conn, Parsed, Taken};
use crate::clock::Stamp;
use crate::h2::{self, FrameHead};
use crate::http::MediaType;
use crate::reactor::conn::{Conn, InFlight};
use crate::reactor::{Config, KindConfig};
use crate::stats::{ErrorClass, ThreadStats};
use crate::validate::{status_reason, Mismatch, ReplyCheck};
use crate::wrong::WrongReply;

/// What a response head said.
struct Head {
    status: Option<u16>,
    media: MediaType,
    length: Option<u64>,
}

impl Conn {
    /// Parse `data` on an HTTP/2 connection, frame by frame. Returns bytes used and streams
    /// ended (answered or reset), as `parse` does for HTTP/1.
    pub(in crate::reactor) fn h2_parse(
        &mut self,
        data: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Parsed {
        let mut h = self.h2.take().expect("an HTTP/2 connection");
        let r = self.h2_frames(&mut h, data, cfg, stats, now, at);
        self.h2 = Some(h);
        r
    }

    fn h2_frames(
        &mut self,
        h: &mut H2Conn,
        data: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Parsed {
        let (mut off, mut ended) = (0, 0);
        while let Some(head) = h2::frame_head(&data[off..]) {
            if head.len > h2::MAX_FRAME {
                return Err(protocol_error(stats, "frame_size"));
            }
            let end = off + h2::FRAME_HEAD + head.len;
            if end > data.len() {
                break;
            }
            let p = &data[off + h2::FRAME_HEAD..end];
            off = end;
            if h.block.is_some() && head.kind != h2::CONTINUATION {
                return Err(protocol_error(stats, "interrupted_header_block"));
            }
            ended += self.h2_frame(h, head, p, cfg, stats, now, at)?;
        }
        Ok((off, ended))
    }

    #[allow(clippy::too_many_arguments)] // the parse's context, passed through
    fn h2_frame(
        &mut self,
        h: &mut H2Conn,
        head: FrameHead,
        p: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Taken {
        match head.kind {
            h2::DATA => self.h2_data(h, head, p, cfg, stats, now, at),
            h2::HEADERS | h2::CONTINUATION => self.h2_block(h, head, p, cfg, stats, now, at),
            h2::RST_STREAM => self.h2_reset(h, head, p, stats, now, at),
            h2::SETTINGS => h.settings(head, p, cfg, stats),
            h2::WINDOW_UPDATE => h.window_update(head, p, cfg, stats),
            h2::PING => {
                if head.stream != 0 || p.len() != 8 {
                    return Err(protocol_error(stats, "ping"));
                }
                if head.flags & h2::ACK == 0 {
                    stats.h2.pings += 1;
                    h2::put_frame(&mut h.ctrl, h2::PING, h2::ACK, 0, p);
                }
                Ok(0)
            }
            h2::GOAWAY => {
                if head.stream != 0 || p.len() < 8 {
                    return Err(protocol_error(stats, "goaway"));
                }
                let last = word(p) & 0x7fff_ffff;
                *stats.h2.goaways.entry(word(&p[4..])).or_default() += 1;
                h.goaway = Some(h.goaway.map_or(last, |l| l.min(last)));
                self.closing = true;
                Ok(0)
            }
            h2::PUSH_PROMISE => Err(protocol_error(stats, "push_promise")),
            _ => Ok(0), // PRIORITY and unknown frame types are ignored (RFC 9113 §4.1, §5.3.2)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn h2_data(
        &mut self,
        h: &mut H2Conn,
        head: FrameHead,
        p: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Taken {
        let body = unpadded(head, p, stats)?;
        let Some(mut s) = h.streams.remove(&head.stream) else {
            return Err(protocol_error(stats, "data_on_closed_stream"));
        };
        let end = head.flags & h2::END_STREAM != 0;
        let r = h.consumed(head.stream, &mut s, head.len as u32, end, stats);
        let Some(check) = s.check.as_mut().filter(|_| r.is_ok()) else {
            r?;
            return Err(protocol_error(stats, "data_before_headers"));
        };
        check.update(&cfg.kinds[s.kind as usize].expect, body);
        s.received += body.len() as u64;
        h.streams.insert(head.stream, s);
        if !end {
            return Ok(0);
        }
        self.h2_finish(h, head.stream, cfg, stats, now, at);
        Ok(1)
    }

    /// HEADERS or CONTINUATION: the block is kept until END_HEADERS, then decoded (always, so
    /// the decoder's table stays in step with the server's).
    #[allow(clippy::too_many_arguments)]
    fn h2_block(
        &mut self,
        h: &mut H2Conn,
        head: FrameHead,
        p: &[u8],
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Taken {
        if head.kind == h2::HEADERS {
            let fragment = unpadded(head, p, stats)?;
            h.block = Some((head.stream, head.flags & h2::END_STREAM != 0));
            h.block_bytes.clear();
            h.block_bytes.extend_from_slice(fragment);
        } else {
            match h.block {
                Some((id, _)) if id == head.stream => h.block_bytes.extend_from_slice(p),
                _ => return Err(protocol_error(stats, "stray_continuation")),
            }
        }
        if h.block_bytes.len() > 256 * 1024 {
            return Err(protocol_error(stats, "header_block_size"));
        }
        if head.flags & h2::END_HEADERS == 0 {
            return Ok(0);
        }
        let (id, end) = h.block.take().expect("a header block");
        let got = decode(h, stats)?;
        let Some(s) = h.streams.get_mut(&id) else {
            return Err(protocol_error(stats, "headers_on_closed_stream"));
        };
        if s.check.is_none() {
            let status = got
                .status
                .ok_or_else(|| protocol_error(stats, "no_status"))?;
            if (100..200).contains(&status) {
                // An interim response: the final one follows.
                return if end {
                    Err(protocol_error(stats, "interim_end_stream"))
                } else {
                    Ok(0)
                };
            }
            let kc = &cfg.kinds[s.kind as usize];
            s.status = status;
            s.content_length = got.length;
            s.check = Some(ReplyCheck::new(&kc.expect, &got.media));
        } else if !end {
            return Err(protocol_error(stats, "trailers_without_end_stream"));
        }
        if !end {
            return Ok(0);
        }
        self.h2_finish(h, id, cfg, stats, now, at);
        Ok(1)
    }

    /// RST_STREAM: the stream's request is a `stream_reset`, counted by code.
    fn h2_reset(
        &mut self,
        h: &mut H2Conn,
        head: FrameHead,
        p: &[u8],
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) -> Taken {
        if head.stream == 0 || p.len() != 4 {
            return Err(protocol_error(stats, "rst_stream"));
        }
        let Some(s) = h.close_stream(head.stream) else {
            return Ok(0); // a stream already answered: the server gave up reading its body
        };
        *stats.h2.rst_streams.entry(word(p)).or_default() += 1;
        let f = self.take_stream(head.stream);
        let waited = now.saturating_sub(f.intended_ns) / 1000;
        stats.error(s.kind as usize, ErrorClass::StreamReset, at, waited);
        Ok(1)
    }

    /// The stream ended with END_STREAM: account its reply.
    fn h2_finish(
        &mut self,
        h: &mut H2Conn,
        id: u32,
        cfg: &Config,
        stats: &mut ThreadStats,
        now: u64,
        at: Stamp,
    ) {
        let s = h.close_stream(id).expect("an open stream");
        let kc = &cfg.kinds[s.kind as usize];
        let length_ok = kc.head_request || s.content_length.is_none_or(|n| n == s.received);
        let checked = s.check.map(|c| c.finish(&kc.expect));
        let outcome = if !length_ok {
            Err(ErrorClass::ProtocolError)
        } else if s.status != kc.expect_status {
            Err(ErrorClass::BadStatus)
        } else if !matches!(checked, Some(Ok(()))) {
            Err(ErrorClass::BadBody)
        } else {
            Ok(())
        };
        if !length_ok {
            stats.h2.protocol_error("content_length");
        }
        if let Err(class) = outcome {
            quote_h2(stats, s.kind as usize, class, (s.status, kc), checked, now);
        }
        let pos = self.stream_pos(id);
        self.complete_at(pos, s.status, outcome, cfg, stats, now, at);
    }

    /// Where stream `id` is among the requests in flight.
    fn stream_pos(&self, id: u32) -> usize {
        self.inflight
            .iter()
            .position(|f| f.stream == id)
            .expect("an open stream is in flight")
    }

    /// Take stream `id` out of the requests in flight, unanswered.
    fn take_stream(&mut self, id: u32) -> InFlight {
        let pos = self.stream_pos(id);
        self.done_seq += 1;
        self.inflight.remove(pos).expect("the stream is in flight")
    }
}

/// A wrong HTTP/2 reply quoted by its status and reason (its bytes are not kept), when its kind
/// has none of its class yet.
fn quote_h2(
    stats: &mut ThreadStats,
    kind: usize,
    class: ErrorClass,
    (status, kc): (u16, &KindConfig),
    checked: Option<Result<(), Mismatch>>,
    now: u64,
) {
    if !stats.kinds[kind].wrong.wants(class) {
        return;
    }
    let reason = match (class, checked) {
        (ErrorClass::BadStatus, _) => status_reason(status, kc.expect_status),
        (ErrorClass::ProtocolError, _) => "body length not the Content-Length".to_owned(),
        (_, Some(Err(m))) => m.reason(&kc.expect),
        _ => "a reply with no head".to_owned(),
    };
    let w = WrongReply::bare(class, status, reason, now);
    stats.kinds[kind].wrong.keep(w);
}

/// Decode the header block at hand: the status, media type and length it gives.
fn decode(h: &mut H2Conn, stats: &mut ThreadStats) -> Result<Head, Option<ErrorClass>> {
    let mut got = Head {
        status: None,
        media: MediaType::NONE,
        length: None,
    };
    let mut bad = false;
    // httlib-hpack indexes past the end of a truncated integer or string: such a block is
    // refused before it is decoded.
    if !h2::hpack::well_formed(&h.block_bytes) {
        return Err(protocol_error(stats, "hpack"));
    }
    h.fields.clear();
    let r = h.decoder.decode(&mut h.block_bytes, &mut h.fields);
    for (k, v, _) in &h.fields {
        let num = || {
            std::str::from_utf8(v)
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
        };
        match k.as_slice() {
            b":status" => match num() {
                Some(n @ 100..=999) => got.status = Some(n as u16),
                _ => bad = true,
            },
            b"content-type" => got.media = MediaType::from_header(v),
            b"content-length" => match num() {
                Some(n) => got.length = Some(n),
                None => bad = true,
            },
            _ => {}
        }
    }
    if r.is_err() {
        return Err(protocol_error(stats, "hpack"));
    }
    if bad {
        return Err(protocol_error(stats, "malformed_headers"));
    }
    Ok(got)
}
