"""A small shop of three kinds of requests, to replay its access log on every server (plain WSGI,
nothing to install): GET /items/ID (an item as JSON), GET /search?q=WORD (matching names), and
POST /orders (a JSON order, answered 201); GET /health for the probe."""

import json

NAMES = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]
ITEMS = {i: {"id": i, "name": f"{NAMES[i % len(NAMES)]} {i}", "cents": 25 * i} for i in range(1, 1001)}


def _reply(start_response, status, doc):
    body = json.dumps(doc).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    path, method = environ.get("PATH_INFO", "/"), environ["REQUEST_METHOD"]
    if path == "/health":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    if method == "GET" and path.startswith("/items/") and path[7:].isdigit():
        item = ITEMS.get(int(path[7:]))
        if item is None:
            return _reply(start_response, "404 Not Found", {"error": "no such item"})
        return _reply(start_response, "200 OK", item)
    if method == "GET" and path == "/search":
        query = environ.get("QUERY_STRING", "")
        word = dict(p.partition("=")[::2] for p in query.split("&")).get("q", "")
        found = [i for i in ITEMS.values() if word and word in i["name"]][:10]
        return _reply(start_response, "200 OK", {"q": word, "items": found})
    if method == "POST" and path == "/orders":
        size = int(environ.get("CONTENT_LENGTH") or 0)
        order = json.loads(environ["wsgi.input"].read(size) or b"{}")
        return _reply(start_response, "201 Created", {"ok": True, "lines": len(order.get("lines", []))})
    return _reply(start_response, "404 Not Found", {"error": "not found"})
