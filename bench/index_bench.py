"""``askfirst index`` against a mock embedding server: passages/s beside the server's own ceiling, CPU, RSS, resume.

A mock OpenAI-compatible ``/v1/embeddings`` server on 127.0.0.1 (``bench/mock_lm_server.py``) answers every request
after ``--latency`` seconds with deterministic vectors, so its ceiling is batch size x requests in flight / latency.
For each size a synthetic corpus of that many one-passage documents is indexed by ``askfirst index`` in a child
process (a fresh store each time), which reports wall time, askfirst's CPU seconds per 1,000 passages and peak RSS;
``--kill-after S`` kills a second build S seconds in and times its resume.

    .venv/bin/python bench/index_bench.py --sizes 10000 100000 --latency 0.05 --batch 64 --concurrency 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_lm_server import serve  # noqa: E402

WORDS = ("river bank loan rate policy fee tuition harbor engine protein orbit court tax permit salary museum vaccine "
         "season index fund grant lease climate energy route transit archive library garden").split()


def write_corpus(path: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            text = " ".join(rng.choice(WORDS) for _ in range(60)) + "."
            f.write(json.dumps({"_id": f"d{i}", "title": f"Document {i}", "text": text}) + "\n")


def index_command(config: Path) -> list[str]:
    return [str(Path(sys.executable).with_name("askfirst")), "index", "--config", str(config)]


PHASES = ("read+chunk", "embed+write", "optimize", "bm25")


def _phase(line: str, current: int) -> int:
    """The build's phase after ``line`` of its output: 0 reading and chunking, 1 embedding and writing, 2 the store's
    optimize (after the last group), 3 the BM25 build."""
    if "indexing: embedded" in line:
        done, todo = line.split("embedded ", 1)[1].split()[0].split("/")
        return 2 if done == todo else max(current, 1)
    if "building the BM25 index" in line:
        return 3
    return current


def _rss_mb(pid: int) -> tuple[float, float]:
    """``pid``'s resident MB: all of it, and its anonymous part (heap, not pages of memory-mapped files)."""
    fields = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "RssAnon:")):
                fields[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return fields.get("VmRSS", 0.0), fields.get("RssAnon", 0.0)


def run_child(command: list[str], env: dict, *, kill_after: float | None = None) -> dict:
    """Run ``command``; its wall time, CPU and peak RSS (the kernel's accounting of waited-for children), and the peak
    RSS (all, and anonymous) of each build phase, sampled from /proc every quarter second while its output says which phase it is in."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, phase, peaks = [], [0], [(0.0, 0.0)] * len(PHASES)

    def read() -> None:
        for line in child.stdout:
            lines.append(line)
            phase[0] = _phase(line, phase[0])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while child.poll() is None:
        now, peak = _rss_mb(child.pid), peaks[phase[0]]
        peaks[phase[0]] = (max(peak[0], now[0]), max(peak[1], now[1]))
        if kill_after is not None and time.perf_counter() - start > kill_after:
            child.send_signal(signal.SIGKILL)
        time.sleep(0.25)
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"seconds": time.perf_counter() - start, "rc": child.returncode, "output": "".join(lines),
            "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), "max_rss_mb": after.ru_maxrss / 1024,
            "phase_rss_mb": dict(zip(PHASES, peaks))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--latency", type=float, default=0.05, help="the mock's seconds per request")
    parser.add_argument("--batch", type=int, default=64, help="passages per request (retriever.batch_size)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight (retriever.embedding_concurrency)")
    parser.add_argument("--kill-after", type=float, default=None, help="also kill a build this many seconds in and time its resume")
    parser.add_argument("--resume-only", action="store_true", help="with --kill-after: only the killed build and its resume")
    parser.add_argument("--folder", type=Path, default=None, help="where stores and corpora go (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.resume_only and args.kill_after is None:
        parser.error("--resume-only needs --kill-after")

    server = serve(0, args.latency)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    ceiling = args.batch * args.concurrency / args.latency
    env = os.environ | {"BENCH_EMBED_KEY": "unused", "PYTHONUNBUFFERED": "1"}  # output as printed: it names the phase
    folder = args.folder or Path(tempfile.mkdtemp(prefix="index-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"mock embedding server {base}: {args.latency * 1000:.0f} ms a request, ceiling {ceiling:,.0f} passages/s "
          f"({args.batch} x {args.concurrency} / {args.latency} s); stores in {folder}")
    print("| passages | seconds indexing of the command's | passages/s indexing | share of ceiling | askfirst CPU s / 1,000 passages | peak RSS MB | peak RSS MB by phase (of which anonymous) | resume after kill |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        corpus, config = folder / f"corpus-{n}.jsonl", folder / f"config-{n}.yaml"
        write_corpus(corpus, n)
        settings = {"runs_dir": str(folder / f"runs-{n}"), "data": {"corpus": str(corpus), "collection": f"bench_{n}"},
                    "retriever": {"embedding_model": "openai/mock-embedding", "embedding_api_base": base,
                                  "embedding_api_key_env": "BENCH_EMBED_KEY", "batch_size": args.batch,
                                  "embedding_concurrency": args.concurrency},
                    "tracking": {"enabled": False}}
        config.write_text(json.dumps(settings), encoding="utf-8")  # JSON is YAML
        resume = "-"
        if args.kill_after is not None:
            second = folder / f"config-{n}-resume.yaml"
            settings["runs_dir"] = str(folder / f"runs-{n}-resume")
            second.write_text(json.dumps(settings), encoding="utf-8")
            run_child(index_command(second), env, kill_after=args.kill_after)
            again = run_child(index_command(second), env)
            kept = re.search(r"(\d+) added, (\d+) updated, (\d+) unchanged", again["output"])
            resume = (f"{again['seconds']:.1f} s (rc {again['rc']}; {kept.group(3)} passages kept from the killed build, "
                      f"{kept.group(1)} embedded; peak RSS {max(mb for mb, _ in again['phase_rss_mb'].values()):.0f} MB)" if kept else f"rc {again['rc']}")
        if args.resume_only:
            print(f"| {n:,} | - | - | - | - | - | - | {resume} |")
            continue
        full = run_child(index_command(config), env)
        if full["rc"] != 0:
            print(full["output"][-2000:])
            return 1
        found = re.search(r"removed in ([0-9.]+)s", full["output"])
        indexing = float(found.group(1)) if found else full["seconds"]  # chunk, embed, write (askfirst index's own figure)
        rate = n / indexing
        phases = ", ".join(f"{name} {mb:,.0f} ({anon:,.0f})" for name, (mb, anon) in full["phase_rss_mb"].items())
        print(f"| {n:,} | {indexing:.1f} of {full['seconds']:.1f} | {rate:,.0f} | {rate / ceiling:.2f} | {full['cpu'] / n * 1000:.2f} | "
              f"{full['max_rss_mb']:.0f} | {phases} | {resume} |")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
