"""The keys of a study's [[requests]] tables and their `expect`, of an own app's probes, and the
body values read as floats; see study/load_keys.py for [[load]]."""

from __future__ import annotations

from wsgibench.study.kinds import (
    EnvValue,
    Int,
    JsonPaths,
    Key,
    Number,
    Section,
    TableOf,
    Text,
)

REQUEST_KEYS: tuple[Key, ...] = (
    Key("name", Text(), '"pong"', "The kind's name: per-kind figures are stored under it."),
    Key("method", Text(what="an HTTP method"), '"GET"', "The request method."),
    Key("path", Text(what="a path starting with /"), '"/"', "The request target."),
    Key(
        "query",
        TableOf(EnvValue(), names="parameters"),
        "none",
        "Query parameters, encoded and appended to the path.",
        example='query = { page = 2, q = "pong" }',
    ),
    Key("weight", Number(low=0), "1", "Share of this kind in the mix (relative)."),
    Key("headers", TableOf(Text(), names="header names"), "none", "Extra request headers."),
    Key("body", Text(), '""', "The request body."),
    Key(
        "body_file",
        Text(what="a path"),
        "none",
        "The request body read from a file (relative to the study file); not with `body`.",
        example='body_file = "item.json"',
    ),
    Key(
        "expect",
        Section("[[requests]] expect"),
        '{ status = 200, body = "Pong!" }',
        "What a valid reply is; any other reply is an error of its class.",
    ),
)

EXPECT_KEYS: tuple[Key, ...] = (
    Key("status", Int(low=100, high=999), "(required)", "The exact status code."),
    Key(
        "body",
        Text(),
        "none",
        "The exact body (at most one of body, body_len, body_sha256, body_float).",
    ),
    Key("body_len", Int(low=0), "none", "The body's length.", "bytes"),
    Key("body_sha256", Text(what="64 hex digits"), "none", "The body's SHA-256."),
    Key(
        "body_float",
        TableOf(Number(), names="min, max"),
        "none",
        "The body is a number in [min, max] (the db app's sum).",
        example="body_float = { min = 30, max = 70 }",
    ),
    Key(
        "body_contains",
        Text(),
        "none",
        "The body contains this string. This key and the two below combine with each other and "
        "with any one check above; with this one or `json` the body is read whole, up to 1 MiB "
        "(a longer body fails).",
        example='body_contains = "Hello"',
    ),
    Key(
        "json",
        JsonPaths(),
        "none",
        "The body is JSON holding each value at its path: keys joined by dots (quote the path), "
        "a number indexes an array; numbers compare by value (1020 = 1020.0). A missing path, "
        "another value or a body that is not JSON fails.",
        example='json = { "message" = "Hello, World!", "rows.19.id" = 1020 }',
    ),
    Key(
        "content_type",
        Text(what="a media type (a string)"),
        "none",
        "The media type of the reply's Content-Type (before any `;`), compared without case; a "
        "reply without Content-Type fails.",
        example='content_type = "application/json"',
    ),
)

PROBE_KEYS: tuple[Key, ...] = (
    Key("path", Text(what="a path starting with /"), '"/ping"', "The probe's request target."),
    Key("status", Int(low=100, high=999), "200", "The status of a valid reply."),
    Key("body", Text(), "none (your app); Pong! (built-ins)", "The exact body of a valid reply."),
)

BODY_FLOAT_KEYS: tuple[Key, ...] = (
    Key("min", Number(), "no bound", "The smallest valid value."),
    Key("max", Number(), "no bound", "The largest valid value."),
)
