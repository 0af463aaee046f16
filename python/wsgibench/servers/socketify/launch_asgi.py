"""socketify.py's ASGI adapter: uWebSockets (C++) driving an asyncio loop through libuv; forks its
own workers."""

import launchkit
from socketify import ASGI, AppListenOptions

args = launchkit.parse()
app = launchkit.load_app(args)
# websocket=False: HTTP only, as every other server here; lifespan on (its default), the app's
# startup runs before the port is listened on. uSockets fixes the backlog and sets TCP_NODELAY.
server = ASGI(app, websocket=False, lifespan=True)
server.listen(AppListenOptions(port=args.port, host=args.host)).run(workers=args.workers)
