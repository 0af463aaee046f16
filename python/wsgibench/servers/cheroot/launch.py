"""cheroot: CherryPy's HTTP server on its own, a thread pool; one process."""

import launchkit
from cheroot import wsgi

args = launchkit.parse()
app = launchkit.load_app(args)
# request_queue_size is the listen backlog (default 5); cheroot sets TCP_NODELAY itself.
server = wsgi.Server(
    (args.host, args.port),
    app,
    numthreads=launchkit.pool_size(args, default=10),
    request_queue_size=args.backlog,
)
server.start()
