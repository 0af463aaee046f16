"""FastPySGI: FastWSGI's successor, a libuv + llhttp C server for WSGI and ASGI apps (it tells the
two apart itself); it forks its own workers, each binding the port."""

import fastpysgi
import launchkit

args = launchkit.parse(extra=lambda p: p.add_argument("--interface", default="wsgi"))
app = launchkit.load_app(args)
server = fastpysgi.server
server.backlog = args.backlog
server.tcp_nodelay = 1  # off by default: Nagle would delay keep-alive replies
if args.interface == "asgi":
    server.lifespan = 1  # on: its default "auto" would go on without it if the startup failed
    server.lifespan_fose = 1  # a failed startup stops the server instead of being logged
# Its default log level (errors) logs no requests; its Server and Date headers are kept.
server.init(app, args.host, args.port, workers=args.workers)
server.run()
