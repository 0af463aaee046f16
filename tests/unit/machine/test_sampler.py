"""Connection counting on real loopback sockets: netlink sock_diag and the /proc fallback agree."""

import re
import socket

from wsgibench.machine import sockdiag as _sockdiag


def _proc_count(port: int) -> int:
    pattern = re.compile(rb"[0-9A-F]+:%04X [0-9A-F]+:[0-9A-F]{4} 01 " % port)
    return sum(
        len(pattern.findall(open(n, "rb").read())) for n in ("/proc/net/tcp", "/proc/net/tcp6")
    )


def test_counts_the_server_side_of_established_connections():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        port = server.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(23)]
        accepted = [server.accept()[0] for _ in clients]
        try:
            assert _sockdiag.established_on_port(port) == 23 == _proc_count(port)
            for s in clients[:5]:
                s.close()
            for s in accepted[:5]:
                s.close()
            assert _sockdiag.established_on_port(port) == 18
        finally:
            for s in clients + accepted:
                s.close()
