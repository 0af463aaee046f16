"""Each access-log format read line by line: the request, its time (to the second or finer),
status and size; a line the format does not read is a BadLine saying why."""

from __future__ import annotations

import pytest

from wsgibench.errors import UsageError
from wsgibench.traffic.formats import BadLine, detect, gunicorn_logformat, json_time, reader

T0 = 1741942800.0  # 14/Mar/2025:09:00:00 +0000
COMBINED = '10.0.0.1 - - [14/Mar/2025:09:00:00 +0000] "GET /items/7?x=1 HTTP/1.1" 200 51 "-" "ua"'
COMMON = '10.0.0.1 - frank [14/Mar/2025:11:00:02 +0200] "POST /orders HTTP/1.0" 201 -'


def test_combined_and_nginx_read_the_request_time_status_and_size():
    for fmt in ("combined", "nginx", "gunicorn"):
        r = reader(fmt)(COMBINED + "\n")
        assert (r.method, r.target, r.status, r.size) == ("GET", "/items/7?x=1", 200, 51)
        assert (r.time_s, r.precise) == (T0, False)


def test_common_takes_the_zone_and_a_dash_for_no_size():
    r = reader("common")(COMMON)
    assert (r.method, r.target, r.status, r.size) == ("POST", "/orders", 201, None)
    assert r.time_s == T0 + 2  # 11:00:02 at +02:00 is 09:00:02 UTC


def test_escapes_in_the_request_line_are_undone():
    line = COMBINED.replace("/items/7?x=1", "/a\\x22b")
    assert reader("combined")(line).target == '/a"b'


def test_an_absolute_url_is_its_path():
    line = COMBINED.replace("/items/7?x=1", "http://shop.example/items/7?x=1")
    assert reader("combined")(line).target == "/items/7?x=1"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("upstream timed out (110: Connection timed out)", "does not match"),
        (COMBINED.replace('"GET /items/7?x=1 HTTP/1.1"', '"-"'), "no request"),
        (COMBINED.replace("GET /items/7?x=1", "\\x16\\x03\\x01 garbage"), "no request"),
        (COMBINED.replace("/items/7?x=1", "*"), "not a path"),
        (COMBINED.replace("[14/Mar/2025:09:00:00 +0000]", "[yesterday]"), "does not read"),
        (COMBINED.replace(" 200 ", " 2x0 "), "does not match"),
    ],
)
def test_a_malformed_line_is_refused_with_why(line, why):
    with pytest.raises(BadLine, match=why):
        reader("combined")(line)


def test_a_logformat_string_with_microseconds_and_method_and_path_apart():
    fmt = '%h %{%Y-%m-%dT%H:%M:%S}t.%{usec_frac}t%{%z}t "%m %U%q %H" %>s %B %D'
    line = '10.0.0.1 2025-03-14T09:00:00.250000+0000 "GET /a?b=1 HTTP/1.1" 404 0 1234'
    r = reader(fmt)(line)
    assert (r.method, r.target, r.status, r.size) == ("GET", "/a?b=1", 404, 0)
    assert r.time_s == pytest.approx(T0 + 0.25) and r.precise


def test_gunicorns_own_format_is_read_through_its_logformat():
    fmt = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(D)s'
    assert gunicorn_logformat(fmt) == ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D')
    r = reader(fmt)(COMBINED + " 1500")
    assert (r.target, r.status) == ("/items/7?x=1", 200)
    with pytest.raises(UsageError, match=r"%\(q\)s"):
        reader('%(h)s %(t)s "%(r)s" %(q)s')


@pytest.mark.parametrize(
    ("fmt", "why"),
    [("%h %l %Q", "log format"), ("%h %>s %b", "needs the time"), ("tsv", "one of")],
)
def test_a_format_that_cannot_be_read_is_one_line(fmt, why):
    with pytest.raises(UsageError, match=why):
        reader(fmt)


def test_json_lines_by_usual_names_or_the_ones_given():
    read = reader("json")
    r = read('{"time": 1741942800.5, "method": "get", "path": "/a", "query": "b=1", "status": 200}')
    assert (r.method, r.target, r.status, r.size, r.precise) == ("GET", "/a?b=1", 200, None, True)
    r = read('{"@timestamp": "2025-03-14T09:00:00Z", "request": "PUT /x HTTP/1.1", "bytes": "9"}')
    assert (r.method, r.target, r.time_s, r.size, r.precise) == ("PUT", "/x", T0, 9, False)
    named = reader("json", {"time": "ts", "path": "u", "method": "m"})
    r = named('{"ts": "14/Mar/2025:09:00:00 +0000", "m": "GET", "u": "/z"}')
    assert (r.target, r.time_s) == ("/z", T0)
    with pytest.raises(UsageError, match="no part colour"):
        reader("json", {"colour": "c"})


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"method": "GET", "path": "/a"}', "no time"),
        ('{"time": "2025-03-14T09:00:00", "method": "GET", "path": "/a"}', "no zone"),
        ('{"time": "soon", "method": "GET", "path": "/a"}', "not understood"),
        ('{"time": 1, "status": 200}', "no method and path"),
    ],
)
def test_a_malformed_json_line_is_refused_with_why(line, why):
    with pytest.raises(BadLine, match=why):
        reader("json")(line)


def test_json_time_takes_numbers_as_text_too():
    assert json_time("1741942800") == (T0, False)
    assert json_time("1741942800.125") == (T0 + 0.125, True)


def test_detect_picks_the_format_that_reads_the_most_lines():
    assert detect([COMBINED, COMBINED, "junk"]) == "combined"
    assert detect([COMMON, COMMON]) == "common"
    assert detect(['{"time": 1, "method": "GET", "path": "/"}']) == "json"
    with pytest.raises(UsageError, match="name its format"):
        detect(["junk", "", "more junk"])
