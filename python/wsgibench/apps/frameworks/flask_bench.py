"""Flask (WSGI, `flask_bench:app`): the framework apps' endpoints on Flask's routing and responses.

/ping and /plaintext are Response objects (Flask adds `; charset=utf-8`), /json and /db use
jsonify (Flask's default JSON provider: compact outside debug mode, keys sorted, a trailing
newline), /echo answers request.get_data(). Kept from Flask's defaults: its 404 and 405 pages and
MAX_CONTENT_LENGTH's 413, set here to ECHO_MAX. No debug mode; Flask itself logs no requests.
"""

from flask import Flask, Response, jsonify, request
from fwdata import ECHO_MAX, HELLO, rows

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = ECHO_MAX


@app.get("/ping")
def ping():
    return Response("Pong!", mimetype="text/plain")


@app.get("/plaintext")
def plaintext():
    return Response(HELLO, mimetype="text/plain")


@app.get("/json")
def json_message():
    return jsonify(message=HELLO)


@app.get("/db")
def db():
    return jsonify(rows=rows())


@app.post("/echo")
def echo():
    return Response(request.get_data(), mimetype="application/octet-stream")


application = app
