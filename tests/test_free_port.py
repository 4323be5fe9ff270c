"""The test ports: distinct within a run, outside the ports the OS and the hub hand out."""

from __future__ import annotations

import socket

import helpers
from helpers import PORT_FIRST, PORT_SLICE, free_port


def test_a_worker_never_gets_the_same_port_twice():
    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)


def test_the_ports_are_in_this_workers_slice_below_the_ephemeral_range(monkeypatch):
    for worker, index in (("gw0", 0), ("gw2", 2)):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        monkeypatch.setattr(helpers, "_next_port", [])
        first = PORT_FIRST + index * PORT_SLICE
        ports = {free_port() for _ in range(20)}
        assert all(first <= port < first + PORT_SLICE for port in ports), ports
        assert max(ports) < 20000  # the hub's user servers start there, the OS's at 32768


def test_a_port_something_else_holds_is_skipped(monkeypatch):
    monkeypatch.setattr(helpers, "_next_port", [])
    port = free_port()
    monkeypatch.setattr(helpers, "_next_port", [port])  # the next draw would be this one
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        assert free_port() != port
