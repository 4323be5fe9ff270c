"""Block the network in every Python process that has this folder on PYTHONPATH.

Loaded by the lesson tests into the notebook kernel (and into any Python it starts), so a
lesson that tried to reach a web service (a CDN, mermaid.ink, a model API) fails loudly.
Loopback connections are refused too: a lesson has no server to talk to. Unix sockets stay
allowed (asyncio's self-pipe uses them); ZeroMQ, which carries the kernel's own messages, does
not go through Python's socket module.
"""

import socket

MESSAGE = "Réseau bloqué par les tests du cours"
_INET = (socket.AF_INET, socket.AF_INET6)
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto
_getaddrinfo = socket.getaddrinfo


def _refuser(what: object) -> None:
    raise ConnectionRefusedError(f"{MESSAGE} : {what!r}")


def connect(self, address):
    if self.family in _INET:
        _refuser(address)
    return _connect(self, address)


def connect_ex(self, address):
    if self.family in _INET:
        _refuser(address)
    return _connect_ex(self, address)


def sendto(self, *args):
    if self.family in _INET:
        _refuser(args[-1])
    return _sendto(self, *args)


def getaddrinfo(host, *args, **kwargs):
    if host not in (None, "localhost", "127.0.0.1", "::1"):
        raise socket.gaierror(f"{MESSAGE} : résolution de {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.socket.sendto = sendto
socket.getaddrinfo = getaddrinfo
socket.SANS_RESEAU = True
