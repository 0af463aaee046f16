"""eventlet.wsgi: one green thread per connection; one process."""

import eventlet

# Before anything else is imported, so the app's blocking calls (time.sleep, sockets) cooperate.
eventlet.monkey_patch()

import launchkit  # noqa: E402
from eventlet import wsgi  # noqa: E402

args = launchkit.parse()
sock = launchkit.listen_socket(args)  # a green socket after the patch; backlog and TCP_NODELAY
app = launchkit.load_app(args)
# max_size: concurrent connections (default 1024), 10000 like the gunicorn greenlet workers.
wsgi.server(sock, app, log_output=False, max_size=10000)
