"""Tornado's own RequestHandlers (no WSGI): seed 001's pair, a blocking and a coroutine sleep.

Paths as the sleep and mixed apps: /ping and /fast answer `Pong!`, / and /slow sleep
WSGIBENCH_SLEEP_S seconds then answer `Slept`; --mode sync sleeps with time.sleep (the IOLoop
stops), --mode async with `await asyncio.sleep` (the IOLoop serves others meanwhile).
"""

import asyncio
import logging
import os
import time

import launchkit
from tornado.httpserver import HTTPServer
from tornado.process import fork_processes
from tornado.web import Application, RequestHandler

SLEEP_S = float(os.environ.get("WSGIBENCH_SLEEP_S", "1"))

args = launchkit.parse(
    extra=lambda p: p.add_argument("--mode", choices=("sync", "async"), required=True)
)
sock = launchkit.listen_socket(args)
sock.setblocking(False)
if args.workers > 1:
    fork_processes(args.workers, max_restarts=0)
logging.getLogger("tornado.access").disabled = True


class Base(RequestHandler):
    def reply(self, body):
        self.set_header("Content-Type", "text/plain")
        self.finish(body)

    def compute_etag(self):
        return None  # as the WSGI apps: no ETag hashing of each body


class Pong(Base):
    def get(self):
        self.reply(b"Pong!")


class SyncSleep(Base):
    def get(self):
        time.sleep(SLEEP_S)
        self.reply(b"Slept")


class AsyncSleep(Base):
    async def get(self):
        await asyncio.sleep(SLEEP_S)
        self.reply(b"Slept")


async def main():
    sleep = SyncSleep if args.mode == "sync" else AsyncSleep
    app = Application([(r"/ping", Pong), (r"/fast", Pong), (r"/slow", sleep), (r"/", sleep)])
    server = HTTPServer(app)
    server.add_sockets([sock])
    await asyncio.Event().wait()


asyncio.run(main())
