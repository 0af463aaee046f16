"""gevent.pywsgi: a greenlet per connection; --spawn none (seed 000) or a pool size N instead."""

from gevent import monkey

# Before anything else is imported, so the app's blocking calls (time.sleep, sockets) cooperate.
monkey.patch_all()

import socket  # noqa: E402

import launchkit  # noqa: E402
from gevent.pool import Pool  # noqa: E402
from gevent.pywsgi import WSGIServer  # noqa: E402

args = launchkit.parse(extra=lambda p: p.add_argument("--spawn", default="default"))
# pywsgi never sets TCP_NODELAY: without it every keep-alive reply stalls 40 ms.
sock = launchkit.listen_socket(args)
app = launchkit.load_app(args)
# spawn=None runs each connection inside the accept callback of the event loop, where gevent
# (since 1.0) refuses to block: a read that has to wait fails with BlockingSwitchOutError.
if args.spawn == "none":
    spawn = None
    # The kernel hands over a connection only once its request has arrived, so the accept
    # callback can read it without waiting; a keep-alive connection still ends after its first
    # reply (reading the next request would have to wait), which the behaviour checks record.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 5)
elif args.spawn == "default":
    spawn = "default"
else:
    spawn = Pool(int(args.spawn))
# log=None: pywsgi writes one access line per request otherwise.
WSGIServer(sock, app, log=None, spawn=spawn).serve_forever()
