#!/usr/bin/env python3
"""A foreign node scheduler: speaks MS-FSCMT frames with the standard
library's marshal module (version 2) to a duplicate server.

usage: ppdup_client.py HOST PORT

Sends PPDUP_SET_CONFIG, then PPDUP_ADD for one checksum from two nodes,
and prints one line per answer: the command code and the answer's keys.
Keys are bytes so that marshal writes them as 's' strings (pyfastmarshal.md
B.6).
"""
import hashlib
import marshal
import socket
import struct
import sys

PPDUP_ADD_OK, PPDUP_ERROR, PPDUP_ADD, PPDUP_SET_CONFIG, PPDUP_CONFIG_ACK = 50, 51, 52, 59, 60


def send(sock, msg, prio):
    body = marshal.dumps((msg, prio), 2)
    sock.sendall(struct.pack(">I", len(body)) + body)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def recv(sock):
    (n,) = struct.unpack(">I", recv_exact(sock, 4))
    msg, prio = marshal.loads(recv_exact(sock, n))
    return msg, prio


def answer(sock):
    while True:
        msg, prio = recv(sock)
        if msg[b"cm"] not in (55, 56):  # keep-alives
            return msg, prio


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    sock = socket.create_connection((host, port), timeout=10)
    cs = hashlib.md5(b"<html>python</html>").digest()
    send(sock, {b"dn": b"pycoll", b"vc": 7, b"cm": PPDUP_SET_CONFIG,
                b"pd": {b"pycoll": {b"compact": 0, b"format": b"gigabase"}}}, 1)
    msg, prio = answer(sock)
    print("ack", msg[b"cm"], msg[b"vc"], prio)
    for node, uri in ((b"py-1", b"http://py.example/a"), (b"py-2", b"http://py.example/b")):
        send(sock, {b"cs": cs, b"dn": b"pycoll", b"id": node, b"cm": PPDUP_ADD, b"ur": uri}, 0)
        msg, prio = answer(sock)
        print("addok", msg[b"cm"], msg[b"dn"].decode(), msg[b"id"].decode(),
              msg[b"ur"].decode(), msg[b"ou"].decode(), prio)
    sock.close()


if __name__ == "__main__":
    main()
