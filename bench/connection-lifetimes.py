#!/usr/bin/env python3
"""How long `kobo serve` keeps connections that misbehave (measured from a second process).

  bench/connection-lifetimes.py MODE [PORT] [N]

MODE is one of:
  silent      a connection that sends nothing
  slowheader  a request line, then a header byte a second
  slowbody    a request with Content-Length 100, then a body byte a second
  idle        a kept-alive connection after one response
  many N      N connections that send nothing, all at once

Each prints how long the server took to close the connection(s). The server must be on this
machine's loopback (127.0.0.1:PORT, default 18080); every loop stops by itself within 120 s.
With the default flags a silent or slow-header connection lives 10 s (header-read timeout), a
slow body 30 s (request timeout, answered with the `01` envelope), an idle one 60 s.
"""
import socket, time, sys, threading, os
HOST, PORT = "127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 18080
mode = sys.argv[1]

def lifetime(sock, limit=120):
    start = time.monotonic()
    sock.settimeout(limit)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                break
    except (ConnectionResetError, socket.timeout) as e:
        if isinstance(e, socket.timeout):
            return None
    return time.monotonic() - start

if mode == "silent":
    s = socket.create_connection((HOST, PORT)); print("silent connection closed after %.2f s" % lifetime(s))
elif mode == "slowheader":
    s = socket.create_connection((HOST, PORT)); s.sendall(b"GET /healthz HTTP/1.1\r\nHost: k\r\n")
    start = time.monotonic(); closed = [None]
    def trickle():
        try:
            while True:
                time.sleep(1); s.sendall(b"X")
        except OSError: pass
    threading.Thread(target=trickle, daemon=True).start()
    print("slow-header connection (a byte a second) closed after %.2f s" % lifetime(s))
elif mode == "slowbody":
    s = socket.create_connection((HOST, PORT))
    s.sendall(b"POST /api/v1/auth/web/login HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    def trickle():
        try:
            while True:
                time.sleep(1); s.sendall(b" ")
        except OSError: pass
    threading.Thread(target=trickle, daemon=True).start()
    start = time.monotonic(); s.settimeout(120); got = b""
    try:
        while True:
            d = s.recv(4096)
            if not d: break
            got += d
    except (ConnectionResetError, socket.timeout): pass
    print("slow-body connection closed after %.2f s; answer: %s" % (time.monotonic() - start, got.split(b"\r\n\r\n")[-1][:200]))
elif mode == "idle":
    s = socket.create_connection((HOST, PORT)); s.sendall(b"GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n")
    time.sleep(0.2); s.recv(4096)
    print("kept-alive connection closed %.2f s after its response" % lifetime(s))
elif mode == "many":
    n = int(sys.argv[3]); socks = []
    for _ in range(n):
        try: socks.append(socket.create_connection((HOST, PORT)))
        except OSError as e: print("connect failed", e); break
    start = time.monotonic()
    print("opened", len(socks))
    open_ = set(range(len(socks)))
    for sk in socks: sk.setblocking(False)
    while open_ and time.monotonic() - start < 120:
        for i in list(open_):
            try:
                d = socks[i].recv(10)
                if not d: open_.discard(i)
            except BlockingIOError: pass
            except ConnectionResetError: open_.discard(i)
        time.sleep(0.05)
        if int((time.monotonic()-start)*20) % 20 == 0: pass
    print("%d idle connections all closed after %.2f s (still open: %d)" % (len(socks), time.monotonic() - start, len(open_)))
