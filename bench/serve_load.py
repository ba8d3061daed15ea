"""``askfirst serve`` under many clients, good and bad, on 127.0.0.1 only, bounded in count and time.

The server runs the demo program with every LM step on the mock LM server (``bench/mock_lm_server.py``, fixed
latency), so it serves requests concurrently. Clients send, in rounds, valid requests, malformed JSON, unknown
models, plain-text bodies, oversized bodies (a large Content-Length, and a chunked body past the limit), and
valid requests they abandon mid-way. Reported: every valid request answered (200), every bad one a 4xx, the
p50/p95 latency of valid ones, the server's RSS before, after each round and after, and how long it takes to stop on SIGTERM.

    .venv/bin/python bench/serve_load.py --clients 16 --rounds 6 --latency 0.3
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
VALID = b'{"model": "askfirst", "messages": [{"role": "user", "content": "How much is the lab fee?"}]}'


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, kind: str) -> tuple[str, int, float]:
    started = time.perf_counter()
    json_headers = {"content-type": "application/json"}
    try:
        if kind == "valid":
            r = httpx.post(url, content=VALID, headers=json_headers, timeout=120)
        elif kind == "malformed":
            r = httpx.post(url, content=b"{not json", headers=json_headers, timeout=30)
        elif kind == "unknown_model":
            r = httpx.post(url, content=VALID.replace(b'"askfirst"', b'"nope"'), headers=json_headers, timeout=30)
        elif kind == "plain_text":
            r = httpx.post(url, content=VALID, headers={"content-type": "text/plain"}, timeout=30)
        elif kind == "oversized":
            r = httpx.post(url, content=b"x" * 400_000, headers=json_headers, timeout=30)
        elif kind == "chunked_oversized":
            r = httpx.post(url, content=(b"x" * 65536 for _ in range(64)), headers=json_headers, timeout=30)
        else:  # "abandoned": gives up after 0.2 s, before the answer
            try:
                httpx.post(url, content=VALID, headers=json_headers, timeout=0.2)
            except httpx.TimeoutException:
                return kind, 0, time.perf_counter() - started
            return kind, -1, time.perf_counter() - started
        return kind, r.status_code, time.perf_counter() - started
    except httpx.HTTPError:
        return kind, -1, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()

    from throughput_bench import start_mock

    mock, lm_url = start_mock(args.latency)
    runs, port = Path(tempfile.mkdtemp(prefix="askfirst-serve-load-")), _free_port()
    env = {**os.environ, "ASKFIRST_MOCK_KEY": "unused"}
    server_log = (runs / "server.log").open("wb")  # a file, not a pipe: a full pipe nobody reads blocks the server's logging
    server = subprocess.Popen([str(Path(sys.executable).parent / "askfirst"), "serve", "--config", "demo", "--port", str(port),
                               "--set", f"runs_dir={runs}", "--set", "lm.model=openai/mock", "--set", f"lm.api_base={lm_url}",
                               "--set", "lm.api_key_env=ASKFIRST_MOCK_KEY", "--set", "lm.cache=false", "--set", "retrieval_lm=null",
                               "--set", "tracking.enabled=false"], env=env, stdout=subprocess.DEVNULL, stderr=server_log)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    try:
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise RuntimeError("askfirst serve did not start")
        _request(url, "valid")  # warm-up
        rss_before = _rss_mb(server.pid)
        kinds = ["valid", "valid", "malformed", "unknown_model", "plain_text", "oversized", "chunked_oversized", "abandoned"]
        jobs = [kinds[(i + r) % len(kinds)] for r in range(args.rounds) for i in range(args.clients)]
        started, results, rss_rounds = time.perf_counter(), [], []
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            for r in range(args.rounds):  # round by round, so the RSS after each shows whether it levels off
                results += pool.map(lambda kind: _request(url, kind), jobs[r * args.clients:(r + 1) * args.clients])
                rss_rounds.append(_rss_mb(server.pid))
                print(f"round {r + 1}/{args.rounds}: {time.perf_counter() - started:.0f} s, server RSS {rss_rounds[-1]:.0f} MB", flush=True)
        wall = time.perf_counter() - started
        rss_after = _rss_mb(server.pid)
        stop = time.perf_counter()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        stop = time.perf_counter() - stop
    finally:
        if server.poll() is None:
            server.kill()
        mock.terminate()
    valid = [t for k, code, t in results if k == "valid" and code == 200]
    bad = [(k, code) for k, code, _ in results if k not in ("valid", "abandoned")]
    print(f"\n{len(results)} requests from {args.clients} concurrent clients in {wall:.1f} s; mock LM latency {args.latency * 1000:.0f} ms\n")
    print("| kind | sent | status codes |")
    print("|---|---|---|")
    for kind in dict.fromkeys(kinds):
        codes = sorted({code for k, code, _ in results if k == kind})
        print(f"| {kind} | {sum(k == kind for k, _, _ in results)} | {', '.join(map(str, codes))} |")
    print(f"\nvalid answered: {len(valid)}/{sum(k == 'valid' for k, _, _ in results)}; bad requests given a 4xx: "
          f"{sum(400 <= c < 500 for _, c in bad)}/{len(bad)}")
    if len(valid) >= 2:
        print(f"valid latency p50 {statistics.median(valid):.2f} s, p95 {statistics.quantiles(valid, n=20)[18]:.2f} s")
    tenth = max(1, len(rss_rounds) // 10)
    print("server RSS (MB) after every " + (f"{tenth} rounds" if tenth > 1 else "round") + ": " + ", ".join(f"{v:.0f}" for v in rss_rounds[tenth - 1::tenth]))
    print(f"server RSS {rss_before:.0f} MB before, {rss_after:.0f} MB after; stopped {stop:.1f} s after SIGTERM (exit code {server.returncode})")
    failed = sum(k == "valid" for k, _, _ in results) - len(valid) + sum(not 400 <= c < 500 for _, c in bad)
    if failed:  # a valid request not answered, or a bad one not refused, is the bench failing, not a figure
        print(f"FAILED: {failed} request(s) did not get the status they should")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
