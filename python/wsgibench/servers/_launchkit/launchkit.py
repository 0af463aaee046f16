"""What every launcher script shares: option parsing, the app, the listen socket. Runs inside a
server's own venv (the standard library only), found through PYTHONPATH (see servers.recipe)."""

import argparse
import importlib
import os
import socket
import sys


def parse(argv=None, extra=None):
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--app-dir", required=True)
    p.add_argument("--app", default="pong")
    p.add_argument("--callable", default="app")
    p.add_argument("--backlog", type=int, default=2048)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    # --threads 1 means one thread (a tuning trial), not the server's own default pool.
    p.add_argument("--exact-threads", action="store_true")
    if extra:
        extra(p)
    return p.parse_args(argv)


def load_app(args):
    """Import the callable from the app module; the app dir goes first so every server sees the
    same file."""
    sys.path.insert(0, args.app_dir)
    return getattr(importlib.import_module(args.app), args.callable)


def listen_socket(args, nodelay=None):
    """A bound, listening socket with the study's backlog, for servers that accept one."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.host, args.port))
    s.listen(args.backlog)
    if nodelay is None:
        # A study may switch it off on purpose, to show what Nagle does (`tcp_nodelay = false`).
        nodelay = os.environ.get("WSGIBENCH_TCP_NODELAY", "1") != "0"
    if nodelay:
        # Accepted sockets inherit TCP_NODELAY on Linux; servers that never set it stall
        # 40 ms per keep-alive reply on Nagle vs delayed ACK.
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def pool_size(args, default):
    """Worker threads for thread-pool servers: --threads when above 1, else the server's default."""
    return args.threads if args.threads > 1 or args.exact_threads else default
