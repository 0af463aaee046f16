"""socketify.py: uWebSockets (C++) with its WSGI adapter; forks its own workers."""

import launchkit
from socketify import WSGI, AppListenOptions

args = launchkit.parse()
app = launchkit.load_app(args)
# uSockets fixes the listen backlog itself and sets TCP_NODELAY; it logs nothing per request.
WSGI(app).listen(AppListenOptions(port=args.port, host=args.host)).run(workers=args.workers)
