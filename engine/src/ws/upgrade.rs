//! The server's reply to a WebSocket upgrade, checked: 101, `Upgrade: websocket`, `Connection:
//! upgrade`, the accept value the key asks for, and no extension or subprotocol (none offered).

use super::HandshakeFailure;

/// Why the reply did not open a WebSocket, with the status when that was the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub why: HandshakeFailure,
    pub status: Option<u16>,
}

fn refused(why: HandshakeFailure) -> Result<Option<usize>, Refused> {
    Err(Refused { why, status: None })
}

/// The upgrade's reply at the start of `data`: Ok(None) while incomplete, Ok(Some(n)) when the
/// WebSocket is open (`n` bytes were the reply), Err when the server refused or garbled it.
pub fn check_reply(data: &[u8], accept: &str) -> Result<Option<usize>, Refused> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut r = httparse::Response::new(&mut headers);
    let used = match r.parse(data) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if data.len() < 64 * 1024 => return Ok(None),
        _ => return refused(HandshakeFailure::Garbled),
    };
    let code = r.code.unwrap_or(0);
    if code != 101 {
        return Err(Refused {
            why: HandshakeFailure::Status,
            status: Some(code),
        });
    }
    let value = |name: &str| {
        r.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
    };
    let upgrade = value("upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let connection = value("connection").is_some_and(|v| {
        v.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    });
    if !upgrade || !connection {
        return refused(HandshakeFailure::Headers);
    }
    if value("sec-websocket-accept").as_deref() != Some(accept) {
        return refused(HandshakeFailure::Accept);
    }
    if value("sec-websocket-extensions").is_some() || value("sec-websocket-protocol").is_some() {
        return refused(HandshakeFailure::Unoffered);
    }
    Ok(Some(used))
}
