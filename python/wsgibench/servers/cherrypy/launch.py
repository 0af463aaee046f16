"""CherryPy: the app grafted onto cherrypy.tree, served by its engine (cheroot underneath)."""

import cherrypy
import launchkit

args = launchkit.parse()
app = launchkit.load_app(args)
cherrypy.tree.graft(app, "/")
cherrypy.config.update(
    {
        "server.socket_host": args.host,
        "server.socket_port": args.port,
        "server.thread_pool": launchkit.pool_size(args, default=10),
        "server.socket_queue_size": args.backlog,  # listen backlog, default 5
        "environment": "production",  # no autoreload, no checker
        "log.screen": False,
        "log.access_file": "",
        "log.error_file": "",
    }
)
# SIGTERM stops the engine cleanly.
cherrypy.engine.signals.subscribe()
cherrypy.engine.start()
cherrypy.engine.block()
