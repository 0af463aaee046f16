"""Checks a served framework app: every endpoint's status, body and Content-Type, the first wrong
reply named.

    python selfcheck.py http://127.0.0.1:8000

Standard library only. It states the expected replies itself (not importing fwdata), so it
checks the apps rather than repeating them. Exit status 0 when every reply is right, 1 naming
the first wrong one, 2 on a bad command line. check(base) returns that first problem, or None.
"""

import json
import os
import sys
import urllib.error
import urllib.request

HELLO = b"Hello, World!"
ECHO_SIZE = 1024
# The app is local: no proxy from the environment stands between.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def expected_rows():
    """The /db rows: ids 1001..1020, randomNumber = (id * 7919) % 10000 + 1."""
    return [{"id": i, "randomNumber": (i * 7919) % 10_000 + 1} for i in range(1001, 1021)]


def fetch(url, data=None, timeout=10.0):
    """(status, main content type, body) of one request; error statuses are replies too."""
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        request.add_header("Content-Type", "application/octet-stream")
    try:
        with _OPENER.open(request, timeout=timeout) as reply:
            status, headers, body = reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, error.headers, error.read()
    return status, headers.get_content_type(), body


def _json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


def _wrong(reply, status, ctype, body_ok, want_body):
    """What is wrong with one reply (status, content type, body), or None."""
    got_status, got_type, body = reply
    if got_status != status:
        return f"status {got_status}, want {status} (body {body[:80]!r})"
    if ctype and got_type != ctype:
        return f"Content-Type {got_type}, want {ctype}"
    if not body_ok(body):
        return f"body {body[:120]!r}{'...' if len(body) > 120 else ''}, want {want_body}"
    return None


def check(base, timeout=10.0):
    """The first wrong reply of the app served at base ("METHOD /path: what"), or None."""
    base = base.rstrip("/")
    sent = os.urandom(ECHO_SIZE)
    rows = expected_rows()
    cases = [
        ("GET", "/ping", None, 200, "text/plain", lambda b: b == b"Pong!", "b'Pong!'"),
        ("GET", "/plaintext", None, 200, "text/plain", lambda b: b == HELLO, repr(HELLO)),
        (
            "GET",
            "/json",
            None,
            200,
            "application/json",
            lambda b: _json(b) == {"message": HELLO.decode()},
            '{"message": "Hello, World!"}',
        ),
        (
            "GET",
            "/db",
            None,
            200,
            "application/json",
            lambda b: _json(b) == {"rows": rows},
            "20 rows, ids 1001..1020",
        ),
        (
            "POST",
            "/echo",
            sent,
            200,
            "application/octet-stream",
            lambda b: b == sent,
            f"the {ECHO_SIZE} bytes sent",
        ),
        ("GET", "/no-such-path", None, 404, "", lambda b: True, "anything"),
    ]
    for method, path, data, status, ctype, body_ok, want_body in cases:
        try:
            reply = fetch(base + path, data, timeout)
        except OSError as error:
            return f"{method} {path}: no reply ({error})"
        wrong = _wrong(reply, status, ctype, body_ok, want_body)
        if wrong:
            return f"{method} {path}: {wrong}"
    return None


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: selfcheck.py BASE_URL", file=sys.stderr)
        return 2
    problem = check(args[0])
    if problem:
        print(f"FAIL {problem}", file=sys.stderr)
        return 1
    print(f"ok {args[0]}: ping, plaintext, json, db, echo ({ECHO_SIZE} bytes), 404")
    return 0


if __name__ == "__main__":
    sys.exit(main())
