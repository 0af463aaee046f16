"""FastWSGI: libuv + llhttp C server; it forks its own workers, each binding the port."""

import fastwsgi
import launchkit

args = launchkit.parse()
app = launchkit.load_app(args)
server = fastwsgi.server
server.backlog = args.backlog
server.tcp_nodelay = 1  # off by default: Nagle would delay keep-alive replies
server.init(app, args.host, args.port, workers=args.workers)
server.run()
