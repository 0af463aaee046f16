"""Count established TCP connections on a local port through netlink sock_diag: the kernel filters
by state, so TIME_WAIT rows (tens of thousands under connection-per-request load) never reach us,
which reading /proc/net/tcp would make us format and parse every second."""

from __future__ import annotations

import socket
import struct

_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST, _NLM_F_DUMP = 0x1, 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_TCP_ESTABLISHED = 1
_NETLINK_SOCK_DIAG = 4  # linux/netlink.h; not exported by the socket module
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_REQUEST = struct.Struct("=BBBxI48x")  # inet_diag_req_v2: family, protocol, ext, states, sockid
_SPORT_OFFSET = _HEADER.size + 4  # inet_diag_msg: family, state, timer, retrans, then id.sport


def _dump(family: int) -> list[bytes]:
    """Every inet_diag_msg the kernel returns for established TCP sockets of one family."""
    body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 1 << _TCP_ESTABLISHED)
    header = _HEADER.pack(
        _HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0
    )
    messages: list[bytes] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as s:
        s.sendall(header + body)
        while True:
            data = s.recv(1 << 16)
            offset = 0
            while offset + _HEADER.size <= len(data):
                length, kind, _, _, _ = _HEADER.unpack_from(data, offset)
                if kind == _NLMSG_DONE:
                    return messages
                if kind == _NLMSG_ERROR or length < _HEADER.size:
                    raise OSError("sock_diag dump refused")
                messages.append(data[offset : offset + length])
                offset += (length + 3) & ~3


def established_on_port(port: int, families: tuple[int, ...] = (socket.AF_INET,)) -> int:
    """Established sockets whose local port is `port` (the server's side of each connection).
    IPv4 only by default: servers listen on 127.0.0.1, and each dump walks every socket of its
    family on the machine (a few ms with tens of thousands in TIME_WAIT)."""
    wanted = struct.pack("!H", port)
    count = 0
    for family in families:
        count += sum(1 for m in _dump(family) if m[_SPORT_OFFSET : _SPORT_OFFSET + 2] == wanted)
    return count
