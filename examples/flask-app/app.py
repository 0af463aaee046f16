"""A small Flask app of one's own, to benchmark with wsgibench: a health check and a JSON list."""

from flask import Flask, jsonify, request

app = Flask(__name__)
ITEMS = [{"id": i, "name": f"item {i}", "price_cents": 100 * i} for i in range(1, 101)]


@app.get("/health")
def health():
    return "ok"


@app.get("/api/items")
def items():
    limit = min(int(request.args.get("limit", 10)), len(ITEMS))
    return jsonify(items=ITEMS[:limit], count=limit)
