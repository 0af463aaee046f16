import pytest

from wsgibench.run import http as _http


def test_content_length_response_and_leftover():
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nPong!HTTP/1.1"
    resp, used = _http.parse(raw)
    assert (resp.status, resp.body, resp.headers["content-type"]) == (200, b"Pong!", "text/plain")
    assert raw[used:] == b"HTTP/1.1"
    assert not resp.closes


def test_chunked_body_is_joined():
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nPon\r\n2\r\ng!\r\n0\r\n\r\n"
    resp, used = _http.parse(raw)
    assert resp.body == b"Pong!" and used == len(raw)


def test_incomplete_until_whole():
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nPo"
    with pytest.raises(_http.IncompleteResponse):
        _http.parse(raw)


def test_http10_body_until_close():
    raw = b"HTTP/1.0 200 OK\r\n\r\nPong!"
    with pytest.raises(_http.IncompleteResponse):
        _http.parse(raw)
    resp, _ = _http.parse(raw, eof=True)
    assert resp.body == b"Pong!" and resp.closes


def test_garbage_is_bad():
    with pytest.raises(_http.BadResponse):
        _http.parse(b"SSH-2.0-OpenSSH\r\n\r\n")


def test_connection_close_header():
    resp, _ = _http.parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
    assert resp.closes


def test_a_reply_only_a_close_could_end_is_named_when_its_end_never_came():
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhi"
    said = _http.unframed(head)
    assert said.startswith("status 200 with neither Content-Length nor chunked encoding"), said
    for framed in (
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhi",  # merely not all there yet
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n",  # its head not all there
        b"garbage\r\n\r\n",
        b"",
    ):
        assert _http.unframed(framed) == "", framed
