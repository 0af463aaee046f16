"""Hypercorn in one process from its Python API, so that the settings its command line lacks are
set: no limit of requests per keep-alive connection, no server or date header, the backlog."""

import asyncio

import launchkit
from hypercorn.asyncio import serve
from hypercorn.config import Config


def _options(p):
    p.add_argument("--loop", default="asyncio")
    # "default" keeps Hypercorn's own limit of requests per keep-alive connection (1,000).
    p.add_argument("--keep-alive-max-requests", default=str(10**9))
    # TLS cells: the certificate and key (Hypercorn then offers h2 and HTTP/1.1 by ALPN).
    p.add_argument("--certfile")
    p.add_argument("--keyfile")


args = launchkit.parse(extra=_options)
app = launchkit.load_app(args)
config = Config()
config.bind = [f"{args.host}:{args.port}"]
config.backlog = args.backlog
config.accesslog = None
config.loglevel = "WARNING"
config.keep_alive_timeout = 75
if args.certfile:
    config.certfile, config.keyfile = args.certfile, args.keyfile
if args.keep_alive_max_requests != "default" and hasattr(config, "keep_alive_max_requests"):
    config.keep_alive_max_requests = int(args.keep_alive_max_requests)
for name, value in (
    ("include_server_header", False),
    ("include_date_header", False),
):
    if hasattr(config, name):  # settings of recent releases
        setattr(config, name, value)
if args.loop == "uvloop":
    import uvloop

    uvloop.run(serve(app, config))
else:
    asyncio.run(serve(app, config))
