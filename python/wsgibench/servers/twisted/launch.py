"""Twisted Web: WSGIResource runs the app in the reactor's thread pool; one process."""

import socket

import launchkit

args = launchkit.parse()
# Made before the reactor; accepted sockets inherit its TCP_NODELAY.
sock = launchkit.listen_socket(args)
sock.setblocking(False)

from twisted.internet import reactor  # noqa: E402
from twisted.web import server, wsgi  # noqa: E402

app = launchkit.load_app(args)


class QuietSite(server.Site):
    def log(self, request):
        """Twisted (and `twistd web --wsgi`) writes one access line per request otherwise."""


reactor.suggestThreadPoolSize(launchkit.pool_size(args, default=10))
resource = wsgi.WSGIResource(reactor, reactor.getThreadPool(), app)
reactor.adoptStreamPort(sock.fileno(), socket.AF_INET, QuietSite(resource))
sock.close()  # the reactor holds its own duplicate
reactor.run()
