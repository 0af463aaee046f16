"""cheroot: CherryPy's HTTP server on its own, a thread pool; one process."""

import _common
from cheroot import wsgi

args = _common.parse()
app = _common.load_app(args)
# request_queue_size is the listen backlog (default 5); cheroot sets TCP_NODELAY itself.
server = wsgi.Server((args.host, args.port), app, numthreads=_common.pool_size(args, default=10),
                     request_queue_size=args.backlog)
server.start()
