"""WebSocket broadcast as ASGI, through an in-process hub: one per worker process, so with
several workers a message reaches only the subscribers of the worker that received it (studies
run it on one worker). Every WebSocket connection joins the hub when it connects, before its
accept goes out, so a client that saw the upgrade succeed gets every later message; a message
received from one member is sent to every other member, one after another from the sender's
task (the pattern most apps deploy: a list of connections and a loop of awaited sends); a member
whose send fails leaves. /wsgibench-runtime answers as in asgi_ws_echo. Any HTTP request is
"Pong!"."""

import itertools

from asgi_ws_echo import outgoing, websocket_app

MEMBERS = {}  # member number -> its ASGI send
_NUMBERS = itertools.count()


async def fan_out(sender, message):
    out = outgoing(message)
    for number, send in list(MEMBERS.items()):
        if number == sender:
            continue
        try:
            await send(out)
        except Exception:  # the member is gone: it leaves the hub
            MEMBERS.pop(number, None)


async def member(receive, send):
    me = next(_NUMBERS)
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.connect":
                MEMBERS[me] = send
                await send({"type": "websocket.accept"})
            elif kind == "websocket.receive":
                await fan_out(me, message)
            elif kind == "websocket.disconnect":
                return
    finally:
        MEMBERS.pop(me, None)


app = application = websocket_app(member)
