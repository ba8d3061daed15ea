"""A mock OpenAI-compatible LM and embedding server on 127.0.0.1 with a fixed latency per call, for measuring askfirst itself.

Every ``/v1/embeddings`` request sleeps ``--latency`` seconds whatever its batch size, then answers a deterministic unit
vector of ``--dim`` numbers per input (seeded by the text), so a bench's ceiling is batch size x requests in flight /
latency.

Every ``/v1/chat/completions`` request sleeps ``--latency`` seconds (concurrently, one thread per request, like a
server that batches), then answers valid JSON for the DSPy Signature its system prompt describes
(``askfirst/lm/schema_reply.py``), with token counts (about four characters a token) in ``usage``.

    python bench/mock_lm_server.py --port 8321 --latency 0.3

prints ``listening on http://127.0.0.1:PORT/v1`` once it serves (``--port 0`` picks a free port). It listens on
the loopback address only and stops on SIGTERM / Ctrl-C.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from askfirst.lm.schema_reply import schema_reply


def _text(content) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def mock_vector(text: str, dim: int, encoding: str = "float") -> list[float] | str:
    """A deterministic unit vector for ``text`` (the same text, the same vector): a list of floats, or with
    ``encoding="base64"`` the base64 of its little-endian float32 bytes, as OpenAI's ``encoding_format`` asks."""
    import numpy as np

    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    v = (v / np.linalg.norm(v)).round(6)
    return base64.b64encode(v.astype("<f4").tobytes()).decode() if encoding == "base64" else v.tolist()


class MockLM(BaseHTTPRequestHandler):
    latency = 0.3
    dim = 384
    calls = 0
    _lock = threading.Lock()

    def log_message(self, *args):  # quiet: the bench prints its own table
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's naming
        self._send(200, {"object": "list", "data": [{"id": "mock", "object": "model", "owned_by": "bench"}]})

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "invalid JSON"}})
            return
        with MockLM._lock:
            MockLM.calls += 1
        time.sleep(self.latency)
        if self.path.rstrip("/").endswith("/embeddings"):
            inputs = request.get("input") or []
            inputs = [inputs] if isinstance(inputs, str) else inputs
            encoding = request.get("encoding_format") or "float"
            if encoding not in ("float", "base64"):
                self._send(400, {"error": {"message": f"encoding_format {encoding!r}: float or base64"}})
                return
            self._send(200, {"object": "list", "model": request.get("model", "mock"),
                             "data": [{"object": "embedding", "index": i, "embedding": mock_vector(str(t), self.dim, encoding)} for i, t in enumerate(inputs)],
                             "usage": {"prompt_tokens": sum(len(str(t)) // 4 + 1 for t in inputs), "total_tokens": 0}})
            return
        messages = request.get("messages") or []
        system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        prompt_chars = sum(len(_text(m.get("content"))) for m in messages)
        text = schema_reply(system)
        usage = {"prompt_tokens": prompt_chars // 4 + 1, "completion_tokens": len(text) // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(200, {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                         "model": request.get("model", "mock"), "usage": usage,
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})


def serve(port: int, latency: float, dim: int = 384) -> ThreadingHTTPServer:
    MockLM.latency, MockLM.dim = latency, dim
    server = ThreadingHTTPServer(("127.0.0.1", port), MockLM)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per call")
    parser.add_argument("--dim", type=int, default=384, help="the embeddings' dimension")
    args = parser.parse_args()
    server = serve(args.port, args.latency, args.dim)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
