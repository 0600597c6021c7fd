#!/usr/bin/env python3
"""Floods a running `kobo serve` with simultaneous logins and reports what the server did.

  bench/login-flood.py --base-url http://127.0.0.1:8080 --pid PID --email E --password P

Sends N wrong logins at once (threads, one connection each) for one email, the right password
last (with --spread, each wrong one for its own email from its own loopback address), then reads the server's memory from /proc: the resident size after the flood and its
peak (VmHWM). Prints how many were evaluated (answered 41 or 00) and how many refused (29).
Only loopback addresses are accepted as targets.
"""
import argparse
import json
import threading
import http.client
import urllib.parse


def vm(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024  # MiB
    return -1


def login(base_url, email, password, source, out, index, barrier):
    url = urllib.parse.urlparse(base_url)
    body = json.dumps({"email": email, "password": password})
    connection = http.client.HTTPConnection(
        url.hostname, url.port, timeout=60, source_address=(source, 0) if source else None
    )
    barrier.wait()
    try:
        connection.request(
            "POST", "/api/v1/auth/web/login", body, {"Content-Type": "application/json"}
        )
        out[index] = json.loads(connection.getresponse().read())["response_code"]
    except Exception as error:  # a refused or dropped connection
        out[index] = f"error: {error.__class__.__name__}"
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument(
        "--spread",
        action="store_true",
        help="each request from its own loopback address (127.0.1.N) and for its own email, "
        "so no throttle stops them and only the bound on password hashing holds",
    )
    args = parser.parse_args()
    host = urllib.parse.urlparse(args.base_url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("only a server on this machine's loopback may be flooded")
    before = vm(args.pid, "VmRSS")
    out = [None] * args.count
    barrier = threading.Barrier(args.count)
    threads = []
    for index in range(args.count):
        password = args.password if index == args.count - 1 else "wrong-password-%d" % index
        email, source = args.email, None
        if args.spread and index != args.count - 1:
            email = "guess-%d-%s" % (index, args.email)
            source = "127.0.%d.%d" % (1 + index // 250, 1 + index % 250)
        thread = threading.Thread(
            target=login, args=(args.base_url, email, password, source, out, index, barrier)
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    codes = {}
    for code in out:
        codes[code] = codes.get(code, 0) + 1
    evaluated = codes.get("41", 0) + codes.get("00", 0)
    print(json.dumps({
        "requests": args.count,
        "answers": codes,
        "evaluated": evaluated,
        "right_password_logged_in": out[-1] == "00",
        "rss_before_mib": before,
        "rss_after_mib": vm(args.pid, "VmRSS"),
        "rss_peak_mib": vm(args.pid, "VmHWM"),
    }, indent=2))


if __name__ == "__main__":
    main()
