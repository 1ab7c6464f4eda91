#!/usr/bin/python3
"""Open-loop load for the balance experiments, run in a client host: requests arrive as a
Poisson process at --rate, each on a new TCP connection to VIP:port (GET /?ms=N for
hlb_work_server.py), whether or not earlier ones were answered. --work constant: every
request N = --mean-ms; bimodal: 10% of requests 50x heavier than the rest, same mean.

Prints one JSON document: per request [latency ms from its arrival time, server name or
null, work ms, arrival time (Unix seconds: to line up the clients' arrivals)]."""
import argparse
import http.client
import json
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HEAVY_SHARE, HEAVY_FACTOR = 0.1, 50


def work_ms(rng, kind, mean):
    if kind == "constant":
        return mean
    light = mean / (1 - HEAVY_SHARE + HEAVY_SHARE * HEAVY_FACTOR)
    return light * HEAVY_FACTOR if rng.random() < HEAVY_SHARE else light


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vip", required=True)
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--rate", type=float, required=True, help="requests/s (Poisson arrivals)")
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--work", choices=("constant", "bimodal"), default="constant")
    p.add_argument("--mean-ms", type=float, default=100.0)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if not 0 < a.rate <= 2000 or not 0 < a.duration <= 600:
        p.error("--rate: 0..2000 and --duration: 0..600 (the emulation shares 2 cores)")
    rng = random.Random(a.seed)
    results, lock = [], threading.Lock()

    def one(arrival, ms):
        name = None
        try:
            c = http.client.HTTPConnection(a.vip, a.port, timeout=a.timeout)
            c.request("GET", "/?ms=%.3f" % ms)
            r = c.getresponse()
            body = r.read().decode().strip()
            c.close()
            name = body if r.status == 200 else None
        except (OSError, http.client.HTTPException):
            pass
        with lock:
            results.append([round((time.monotonic() - arrival) * 1000, 2), name, round(ms, 2),
                            round(arrival - mono0 + wall0, 4)])

    start = time.monotonic()
    mono0, wall0 = start, time.time()
    t = start
    with ThreadPoolExecutor(max_workers=512) as pool:
        while True:
            t += rng.expovariate(a.rate)
            if t - start > a.duration:
                break
            time.sleep(max(0.0, t - time.monotonic()))
            pool.submit(one, t, work_ms(rng, a.work, a.mean_ms))
    json.dump({"vip": a.vip, "rate": a.rate, "work": a.work, "requests": results}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
