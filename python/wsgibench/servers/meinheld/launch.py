"""meinheld: picoev C server; one process (it has no multi-process mode of its own)."""

import launchkit
from meinheld import server

# No meinheld.patch: like bjoern it is run as a plain C server, so a blocking app blocks it.
args = launchkit.parse(extra=lambda p: p.add_argument("--keepalive", type=int, default=75))
app = launchkit.load_app(args)
# meinheld logs every request unless told not to.
server.set_access_logger(None)
# Keep-alive is off unless given a timeout (seconds; nginx's keepalive_timeout here); 0 leaves
# it off, as meinheld's own example on its site runs (seed 004 ran that example).
if args.keepalive:
    server.set_keepalive(args.keepalive)
# listen()'s second argument is not the backlog: set it first.
server.set_backlog(args.backlog)
server.listen((args.host, args.port))
server.run(app)
