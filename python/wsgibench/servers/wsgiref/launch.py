"""wsgiref.simple_server: the standard library's reference server, one request at a time."""

from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import launchkit

args = launchkit.parse()
app = launchkit.load_app(args)


class Server(WSGIServer):
    request_queue_size = args.backlog  # socketserver's default listen backlog is 5


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        """One line per request on stderr otherwise."""


make_server(args.host, args.port, app, Server, QuietHandler).serve_forever()
