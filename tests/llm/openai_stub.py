"""A stub OpenAI-compatible server for the HTTP backend's tests (127.0.0.1, a free port).

Prints ``PORT <n>`` on its first line, then serves until terminated. The request's ``model`` field
chooses the behaviour:

- ``echo``: a reply built from the request (chat: ``echo: <last user message>``; completions:
  ``<prompt> continued``), with the request's sampling fields in ``received``;
- ``fail500``: HTTP 500 every time; ``flaky``: HTTP 503 for the first request, then ``echo``;
- ``slow``: sleeps 2 s, then ``echo``; ``malformed``: HTTP 200 with a body that is not JSON;
- ``nochoices``: HTTP 200 with JSON but no ``choices``; ``judge``: ``polite: yes`` / ``refuses: no``.

``GET /stats`` returns the number of requests per model.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS: Counter = Counter()
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with LOCK:
                self._send(200, json.dumps(dict(COUNTS)).encode())
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        model = req.get("model", "")
        with LOCK:
            COUNTS[model] += 1
            count = COUNTS[model]
        if model == "fail500":
            return self._send(500, b'{"error": {"message": "boom: the stub always fails"}}')
        if model == "flaky" and count == 1:
            return self._send(503, b'{"error": "warming up"}')
        if model == "slow":
            time.sleep(2.0)
        if model == "malformed":
            return self._send(200, b"<html>this is not json", "text/html")
        if model == "nochoices":
            return self._send(200, json.dumps({"id": "x", "object": "chat.completion"}).encode())
        received = {k: req.get(k) for k in ("max_tokens", "temperature", "top_p", "seed", "stop")}
        received["authorization"] = self.headers.get("Authorization")
        if self.path.endswith("/chat/completions"):
            last = [m["content"] for m in req["messages"] if m["role"] == "user"][-1]
            content = "polite: yes\nrefuses: no" if model == "judge" else f"echo: {last}. STOP here"
            reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                  "finish_reason": "stop"}], "received": received}
        elif self.path.endswith("/completions"):
            reply = {"choices": [{"index": 0, "text": f"{req['prompt']} continued", "finish_reason": "length"}],
                     "received": received}
        else:
            return self._send(404, b'{"error": "no such endpoint"}')
        self._send(200, json.dumps(reply).encode())


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
