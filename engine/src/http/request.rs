//! Request serialisation: the bytes one request kind puts on the wire.

/// Serialises one request. `minor` is the HTTP/1.x minor version.
pub fn build_request(
    method: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
    body: &[u8],
    minor: u8,
    keep_alive: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + body.len());
    out.extend_from_slice(format!("{method} {path} HTTP/1.{minor}\r\n").as_bytes());
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        out.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    if !has("connection") {
        // 1.1 persists unless told otherwise, 1.0 closes unless told otherwise.
        if minor == 1 && !keep_alive {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if minor == 0 && keep_alive {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
    }
    let needs_len = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_len && !has("content-length") {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    for (k, v) in headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_serialisation() {
        let r = build_request("GET", "/", "h:1", &[], b"", 1, true);
        assert_eq!(r, b"GET / HTTP/1.1\r\nHost: h:1\r\n\r\n");
        let r = build_request("GET", "/a", "h", &[], b"", 1, false);
        assert_eq!(
            r,
            b"GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
        );
        let r = build_request("GET", "/", "h", &[], b"", 0, false);
        assert_eq!(r, b"GET / HTTP/1.0\r\nHost: h\r\n\r\n");
        let r = build_request(
            "POST",
            "/",
            "h",
            &[("X-A".into(), "b".into())],
            b"hi",
            0,
            true,
        );
        assert_eq!(r, b"POST / HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\nContent-Length: 2\r\nX-A: b\r\n\r\nhi");
    }
}
