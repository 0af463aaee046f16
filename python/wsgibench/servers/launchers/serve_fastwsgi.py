"""FastWSGI: libuv + llhttp C server; it forks its own workers, each binding the port."""

import _common
import fastwsgi

args = _common.parse()
app = _common.load_app(args)
server = fastwsgi.server
server.backlog = args.backlog
server.tcp_nodelay = 1  # off by default: Nagle would delay keep-alive replies
server.init(app, args.host, args.port, workers=args.workers)
server.run()
