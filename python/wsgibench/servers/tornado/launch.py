"""Tornado: WSGIContainer on the IOLoop thread behind tornado's HTTPServer."""

import asyncio
import logging

import launchkit
from tornado.httpserver import HTTPServer
from tornado.process import fork_processes
from tornado.wsgi import WSGIContainer

args = launchkit.parse()
sock = launchkit.listen_socket(args)
sock.setblocking(False)
if args.workers > 1:
    # Tornado's own pre-fork: the parent supervises, the children share the socket.
    fork_processes(args.workers, max_restarts=0)
app = launchkit.load_app(args)
# WSGIContainer logs every request on tornado.access.
logging.getLogger("tornado.access").disabled = True


async def main():
    server = HTTPServer(WSGIContainer(app))
    server.add_sockets([sock])
    await asyncio.Event().wait()


asyncio.run(main())
