"""bjoern: libev C server, one thread; extra workers are forked after listen, as bjoern documents."""

import os

import bjoern
import launchkit

args = launchkit.parse()
app = launchkit.load_app(args)
# Our own socket: bjoern's listen() has no backlog option in every release, and TCP_NODELAY.
sock = launchkit.listen_socket(args)
for _ in range(args.workers - 1):
    if os.fork() == 0:  # children stay in the process group, so stopping the group stops them
        break
bjoern.server_run(sock, app)
