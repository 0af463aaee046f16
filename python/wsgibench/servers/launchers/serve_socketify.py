"""socketify.py: uWebSockets (C++) with its WSGI adapter; forks its own workers."""

import _common
from socketify import WSGI, AppListenOptions

args = _common.parse()
app = _common.load_app(args)
# uSockets fixes the listen backlog itself and sets TCP_NODELAY; it logs nothing per request.
WSGI(app).listen(AppListenOptions(port=args.port, host=args.host)).run(workers=args.workers)
