//! HTTP/2 (RFC 9113) on the client side, cleartext with prior knowledge (h2c): the connection
//! preface, frame headers in and out, and the settings the engine offers and honours. Request
//! header blocks are encoded per connection with a dynamic table (`encoder.rs`); HPACK decoding
//! of replies is `httlib-hpack`'s, behind a check of each block's structure (`hpack.rs`).

pub mod encoder;
pub mod hpack;
mod stats;

pub use stats::H2Stats;

/// What a client sends first (RFC 9113 §3.4), before its SETTINGS.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// The frame size every peer must accept, and the largest the engine accepts.
pub const MAX_FRAME: usize = 16_384;
/// The window every flow-control window starts with until SETTINGS or WINDOW_UPDATE change it.
pub const DEFAULT_WINDOW: i64 = 65_535;
/// The largest window RFC 9113 allows.
pub const MAX_WINDOW: i64 = (1 << 31) - 1;
/// Bytes of a frame header.
pub const FRAME_HEAD: usize = 9;

/// A frame's 9-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

/// The frame header at the start of `b`, when all 9 bytes are there.
pub fn frame_head(b: &[u8]) -> Option<FrameHead> {
    let h: &[u8; FRAME_HEAD] = b.get(..FRAME_HEAD)?.try_into().ok()?;
    Some(FrameHead {
        len: (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]),
        kind: h[3],
        flags: h[4],
        stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
    })
}

/// Append a frame header.
pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Append a whole frame.
pub fn put_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    put_head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

/// Append a header block as one HEADERS frame and as many CONTINUATION frames as `max_frame`
/// needs, back to back (RFC 9113 §4.3, §6.10); END_STREAM goes on the HEADERS frame.
pub fn put_block(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame: usize) {
    let max_frame = max_frame.max(1);
    let (first, mut rest) = block.split_at(block.len().min(max_frame));
    let end_headers = |rest: &[u8]| if rest.is_empty() { END_HEADERS } else { 0 };
    let es = if end_stream { END_STREAM } else { 0 };
    put_frame(out, HEADERS, es | end_headers(rest), stream, first);
    while !rest.is_empty() {
        let (part, after) = rest.split_at(rest.len().min(max_frame));
        rest = after;
        put_frame(out, CONTINUATION, end_headers(rest), stream, part);
    }
}

/// Append a SETTINGS frame with `pairs`.
pub fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_head(out, pairs.len() * 6, SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Append a WINDOW_UPDATE of `increment` (1..=2^31-1) for `stream` (0: the connection).
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_frame(out, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

/// The client's opening: the preface, its SETTINGS (no push, `window` for every stream) and
/// the connection window raised to `window` too.
pub fn opening(window: u32) -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    put_settings(
        &mut out,
        &[
            (SETTINGS_ENABLE_PUSH, 0),
            (SETTINGS_INITIAL_WINDOW_SIZE, window),
        ],
    );
    if i64::from(window) > DEFAULT_WINDOW {
        put_window_update(&mut out, 0, window - DEFAULT_WINDOW as u32);
    }
    out
}

/// A request's header block as a connection with no dynamic table sends it: every field the
/// static table does not hold whole as a literal without indexing (see `encoder`).
pub fn request_block(
    method: &str,
    scheme: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
) -> Vec<u8> {
    let mut table = encoder::FieldTable::default();
    let items = table.request(method, scheme, path, host, headers);
    let mut out = Vec::new();
    encoder::Encoder::new(table.len(), 0).encode(&items, &table, &mut out);
    out
}

#[cfg(test)]
mod encoder_tests;
#[cfg(test)]
mod tests;
