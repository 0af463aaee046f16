"""waitress: asyncore-style I/O thread plus a pool of worker threads; one process."""

import logging

import launchkit
import waitress

args = launchkit.parse()
app = launchkit.load_app(args)
# Under load waitress warns "Task queue depth is N" for every queued request.
logging.getLogger("waitress.queue").disabled = True
# waitress sets TCP_NODELAY on its sockets itself and logs no access lines.
waitress.serve(
    app,
    host=args.host,
    port=args.port,
    threads=launchkit.pool_size(args, default=4),
    backlog=args.backlog,
    connection_limit=100000,
)
