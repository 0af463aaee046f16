"""Werkzeug's development server (run_simple's), threaded: one thread per connection."""

import logging

import launchkit
from werkzeug.serving import make_server

args = launchkit.parse()
app = launchkit.load_app(args)
# Werkzeug logs every request on its logger.
logging.getLogger("werkzeug").disabled = True
# Its own socket listens with a backlog of 128; hand it ours (backlog, TCP_NODELAY).
sock = launchkit.listen_socket(args)
make_server(args.host, args.port, app, threaded=True, fd=sock.fileno()).serve_forever()
