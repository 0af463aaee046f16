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


def _matches(body, want):
    """want: the exact bytes, None for any body, or the object the JSON body must decode to."""
    if want is None:
        return True
    if isinstance(want, bytes):
        return body == want
    return _json(body) == want


def _shown(want):
    if isinstance(want, bytes) and len(want) > 40:
        return f"the {len(want)} bytes sent"
    return repr(want) if isinstance(want, bytes) else json.dumps(want)[:100]


def _wrong(reply, status, ctype, want):
    """What is wrong with one reply (status, content type, body), or None."""
    got_status, got_type, body = reply
    if got_status != status:
        return f"status {got_status}, want {status} (body {body[:80]!r})"
    if ctype and got_type != ctype:
        return f"Content-Type {got_type}, want {ctype}"
    if not _matches(body, want):
        more = "..." if len(body) > 120 else ""
        return f"body {body[:120]!r}{more}, want {_shown(want)}"
    return None


def check(base, timeout=10.0):
    """The first wrong reply of the app served at base ("METHOD /path: what"), or None."""
    base = base.rstrip("/")
    sent = os.urandom(ECHO_SIZE)
    cases = [  # path, request body (POST when given), status, content type ("": any), body
        ("/ping", None, 200, "text/plain", b"Pong!"),
        ("/plaintext", None, 200, "text/plain", HELLO),
        ("/json", None, 200, "application/json", {"message": HELLO.decode()}),
        ("/db", None, 200, "application/json", {"rows": expected_rows()}),
        ("/echo", sent, 200, "application/octet-stream", sent),
        ("/no-such-path", None, 404, "", None),
    ]
    for path, data, status, ctype, want in cases:
        method = "GET" if data is None else "POST"
        try:
            reply = fetch(base + path, data, timeout)
        except OSError as error:
            return f"{method} {path}: no reply ({error})"
        wrong = _wrong(reply, status, ctype, want)
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
