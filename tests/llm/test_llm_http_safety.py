"""The HTTP backend never forwards the API key to another address, and ``timeout_s`` bounds a whole attempt.

Servers on 127.0.0.1 started in this process: one that redirects to another port, one (the redirect's target)
that records what it is sent, and ones that trickle their reply a byte at a time (in the body, in the headers).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time

import pytest

import repro.llm
from repro.llm import BackendError

REPLY = json.dumps({"choices": [{"message": {"content": "hello"}, "text": "hello"}]}).encode()


@contextlib.contextmanager
def _serve(handle_post):
    """A server on 127.0.0.1 (a free port) whose POST handler is ``handle_post(handler)``; yields
    ``(base URL, list of the requests seen: (method, path, headers))``."""
    seen: list[tuple[str, str, dict[str, str]]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _record(self):
            seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)

        def do_POST(self):
            self._record()
            try:
                handle_post(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up: what a deadline does

        def do_GET(self):
            self._record()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _ok(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(REPLY)))
    handler.end_headers()
    handler.wfile.write(REPLY)


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_port_is_refused_and_the_key_is_never_sent_there(code):
    with _serve(_ok) as (elsewhere, seen_elsewhere):
        def redirect(handler):
            handler.send_response(code)
            handler.send_header("Location", f"{elsewhere}/v1/chat/completions")
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        with _serve(redirect) as (origin, seen_origin):
            lm = repro.llm.connect(f"{origin}/v1", "m", api_key="sekret", timeout_s=5, max_retries=2,
                                   backoff_s=0.01)
            with pytest.raises(BackendError) as err:
                lm.chat([{"role": "user", "content": "hi"}])
        msg = str(err.value)
        assert f"{origin}/v1/chat/completions" in msg and f"{elsewhere}/v1/chat/completions" in msg
        assert "redirect" in msg and "sekret" not in msg
        assert seen_elsewhere == []  # never contacted, so never shown the Authorization header
        assert len(seen_origin) == 1  # refused, not retried
        assert seen_origin[0][2]["authorization"] == "Bearer sekret"


def _trickle_body(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(REPLY)))
    handler.end_headers()
    for byte in REPLY:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.25)


def _trickle_headers(handler):
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for _ in range(80):
        handler.wfile.write(b"X-Pad: a\r\n")
        handler.wfile.flush()
        time.sleep(0.25)


@pytest.mark.parametrize("trickle", [_trickle_body, _trickle_headers], ids=["body", "headers"])
def test_a_trickling_server_is_cut_at_the_deadline_and_retried_only_max_retries_times(trickle):
    with _serve(trickle) as (url, seen):
        lm = repro.llm.connect(f"{url}/v1", "m", timeout_s=1.0, max_retries=0)
        t0 = time.perf_counter()
        with pytest.raises(BackendError, match=r"timed out after 1 s \(1 attempt\(s\)\)") as err:
            lm.chat([{"role": "user", "content": "hi"}])
        elapsed = time.perf_counter() - t0
        assert f"{url}/v1/chat/completions" in str(err.value)
        assert elapsed < 3 * 1.0, elapsed  # the server would have held it for 20 s and more
        assert len(seen) == 1
        lm = repro.llm.connect(f"{url}/v1", "m", timeout_s=1.0, max_retries=1, backoff_s=0.01)
        t0 = time.perf_counter()
        with pytest.raises(BackendError, match=r"timed out after 1 s \(2 attempt\(s\)\)"):
            lm.generate(["hi"])
        assert time.perf_counter() - t0 < 3 * 2 * 1.0
        assert len(seen) == 3  # one attempt, then one retry: no storm
