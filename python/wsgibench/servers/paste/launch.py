"""paste.httpserver: http.server-based, a thread pool holding one connection per thread."""

import socket

import launchkit
from paste import httpserver

args = launchkit.parse()
app = launchkit.load_app(args)
# HTTP/1.1 for keep-alive (the handler default is HTTP/1.0: close after each reply);
# request_queue_size is the listen backlog (default 5). The handler logs nothing.
server = httpserver.serve(
    app,
    host=args.host,
    port=args.port,
    protocol_version="HTTP/1.1",
    threadpool_workers=launchkit.pool_size(args, default=10),
    request_queue_size=args.backlog,
    start_loop=False,
)
# Accepted sockets inherit TCP_NODELAY; without it every keep-alive reply stalls 40 ms.
server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
server.serve_forever()
