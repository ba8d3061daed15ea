"""askfirst's own throughput against an LM server: the demo questions at several ``eval.threads`` settings.

A mock OpenAI-compatible server (``bench/mock_lm_server.py``, its own process on 127.0.0.1) answers every LM call
after a fixed latency, so the time that is not LM wait is askfirst's own. The program is the demo config's, with
every LM step on the mock server and the LM cache off.

    .venv/bin/python bench/throughput_bench.py --latency 0.3 --threads 1 4 16

Prints a Markdown table: questions/s, wall seconds per question, LM calls and LM wait per question, askfirst's own
CPU seconds per question (process CPU time: the mock server runs elsewhere), and the speed-up over one thread.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_mock(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(HERE / "mock_lm_server.py"), "--port", "0", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"the mock LM server did not start: {line!r}")
    return proc, line.removeprefix("listening on ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--limit", type=int, default=None, help="demo questions (default: all 26)")
    args = parser.parse_args()

    from askfirst.config import builtin_config_path, load_config
    from askfirst.datasets.splits import configured_questions
    from askfirst.evaluation.runner import run_eval
    from askfirst.session import open_session

    mock, url = start_mock(args.latency)
    os.environ["ASKFIRST_MOCK_KEY"] = "unused"
    runs = Path(tempfile.mkdtemp(prefix="askfirst-throughput-"))
    try:
        config = load_config(builtin_config_path("demo"), overrides=[
            f"runs_dir={runs}", "lm.model=openai/mock", f"lm.api_base={url}", "lm.api_key_env=ASKFIRST_MOCK_KEY", "lm.cache=false",
            "retrieval_lm=null", "tracking.enabled=false", *([f"data.limit={args.limit}"] if args.limit else [])])
        examples = configured_questions(config)
        session = open_session(config)
        rows = []
        try:
            warm = runs / "warm-up"  # first-call costs (litellm's import, the query embedder's first batch) are not throughput
            warm.mkdir()
            run_eval(session.program, examples[:2], run_dir=warm)
            for threads in args.threads:
                run_dir = runs / f"threads-{threads}"
                run_dir.mkdir()
                wall, cpu = time.perf_counter(), time.process_time()
                result = run_eval(session.program, examples, run_dir=run_dir, threads=threads)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                calls = sum(r["lm_calls"] for r in result.records) / len(examples)
                failed = sum(r["route"] == "error" for r in result.records)
                rows.append({"threads": threads, "q/s": len(examples) / wall, "s/q": wall / len(examples), "calls/q": calls,
                             "LM wait/q": calls * args.latency, "own CPU/q": cpu / len(examples), "failed": failed})
        finally:
            session.close()
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    base = rows[0]["q/s"]
    print(f"\n{len(examples)} demo questions, mock LM latency {args.latency * 1000:.0f} ms a call, {os.cpu_count()} CPU cores\n")
    print("| threads | questions/s | s/question | LM calls/q | LM wait/q (s) | own CPU/q (s) | CPU / LM wait | speed-up | failed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['threads']} | {r['q/s']:.2f} | {r['s/q']:.2f} | {r['calls/q']:.1f} | {r['LM wait/q']:.2f} | {r['own CPU/q']:.3f} | "
              f"{r['own CPU/q'] / r['LM wait/q']:.3f} | {r['q/s'] / base:.1f}x | {r['failed']} |")


if __name__ == "__main__":
    main()
