"""An OpenAI-compatible HTTP endpoint as a :class:`repro.llm.base.LanguageModel`.

vLLM, the llama.cpp server, Ollama and hosted providers speak this protocol, so a user with a larger
model (or an API key) runs an LM paper's DAG on it by setting ``llm.<scale>.backend: http`` and
``llm.<scale>.http`` in ``config.yaml``.

- :meth:`OpenAICompatibleLM.chat` posts to ``{base_url}/chat/completions`` (``base_url`` ends in
  ``/v1``); :meth:`~OpenAICompatibleLM.generate` to ``{base_url}/completions`` (plain continuation,
  no chat template; most local servers offer it).
- ``timeout_s`` is a deadline for each attempt as a whole (connecting, sending, the status line,
  the headers and the whole body), not a limit per socket read: a server that trickles its reply
  a byte at a time is cut when the time is up (the socket is shut down by a timer).
- Connection errors, timeouts and HTTP 408/409/429/5xx are retried ``max_retries`` times with
  exponential backoff (``backoff_s * 2**attempt``); then a :class:`BackendError` names the URL, the
  status (or "timed out after N s") and the number of attempts. A reply that is not JSON, or that
  lacks ``choices[0]``'s text, is an error naming the URL and what was missing; it is not retried.
- Redirects are refused, not followed: a 3xx reply is an error naming the URL posted to and the one
  the server redirected to (not retried). Following one would send the ``Authorization`` header
  (the API key) to whatever address the server names, and urllib turns a redirected POST into a
  GET; set ``base_url`` to the final address instead.
- ``logprobs`` of given continuations and ``hidden_states`` need the model's internals and raise
  :class:`UnsupportedOperation` (the chat protocol returns log-probabilities of sampled tokens only).
- Seeds are sent (``seed``, as vLLM and OpenAI accept them); whether a server honours them is the
  server's affair, so sampled outputs over HTTP are reproducible only where it does.

Standard library only (``urllib``): the backend adds no dependency.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from repro.llm.base import BackendError, LanguageModel, UnsupportedOperation, as_conversations, as_prompt_list
from repro.seeding import job_seed

__all__ = ["OpenAICompatibleLM", "RETRY_STATUSES"]

log = logging.getLogger(__name__)

#: HTTP statuses worth another try (request timeout, conflict, rate limit, server errors).
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def _excerpt(body: bytes, n: int = 300) -> str:
    text = body.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return text[:n] + ("..." if len(text) > n else "")


class _Redirected(Exception):
    """The server answered with a redirect, which is refused (see the module docstring)."""

    def __init__(self, code: int, target: str) -> None:
        super().__init__(code, target)
        self.code, self.target = code, target


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise _Redirected(code, newurl)


class _Deadline:
    """The time limit of one attempt. The connection registers its socket here; when the time is up
    the timer shuts the socket down, so whatever read is blocked on it returns at once."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.expire)
        self._timer.daemon = True

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            self.expired = True
            raise TimeoutError("deadline passed")
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.expired:
                self._shut()

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shut()

    def _shut(self) -> None:
        if self._sock is not None:
            try:
                socket.socket.shutdown(self._sock, socket.SHUT_RDWR)  # also under a TLS wrapper
            except OSError:
                pass

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


def _deadline_connection(base: type, deadline: _Deadline) -> type:
    class Connection(base):
        def connect(self):
            self.timeout = deadline.left()  # connecting gets the time that is left, too
            super().connect()
            deadline.watch(self.sock)

    return Connection


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req):
        return self.do_open(_deadline_connection(http.client.HTTPConnection, self.deadline), req)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req):
        return self.do_open(_deadline_connection(http.client.HTTPSConnection, self.deadline), req,
                            context=self._context)


def _send(request: urllib.request.Request, timeout_s: float) -> tuple[int, bytes]:
    """One attempt: ``(status, body)`` of the reply (an HTTP error status included), all of it within
    ``timeout_s``; ``TimeoutError`` when the time ran out, ``_Redirected`` on a redirect."""
    deadline = _Deadline(timeout_s)
    opener = urllib.request.build_opener(_RefuseRedirects(), _DeadlineHTTPHandler(deadline),
                                         _DeadlineHTTPSHandler(deadline))
    try:
        with deadline:
            try:
                with opener.open(request, timeout=timeout_s) as response:
                    status, body = response.status, response.read()
            except urllib.error.HTTPError as err:
                status, body = err.code, err.read()
    except _Redirected:
        raise
    except Exception as err:
        if deadline.expired:  # whatever the cut socket raised (reset, incomplete read, TLS EOF)
            raise TimeoutError(f"no complete reply within {timeout_s:g} s") from err
        raise
    if deadline.expired:  # a read the cut cut short without raising
        raise TimeoutError(f"no complete reply within {timeout_s:g} s")
    return status, body


class OpenAICompatibleLM(LanguageModel):
    """A model behind ``/v1/chat/completions`` (and ``/v1/completions``).

    Parameters
    ----------
    base_url : e.g. ``http://127.0.0.1:8000/v1``.
    model : the model name the server expects.
    api_key : sent as ``Authorization: Bearer``; ``None`` sends none (local servers).
    timeout_s : deadline of each attempt (connect, send, the whole reply), seconds.
    max_retries : retries after the first attempt for transient failures.
    backoff_s : first retry delay; doubles each retry.
    max_workers : concurrent requests for a list of prompts or conversations.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 60.0,
                 max_retries: int = 3, backoff_s: float = 1.0, max_workers: int = 4) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_workers = max_workers
        self.name = f"{model}@{base_url}"
        self._loaded()

    def describe(self) -> dict:
        return {"backend": "http", "model": self.model, "base_url": self.base_url}

    def _url(self, endpoint: str) -> str:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url {self.base_url!r} must start with http:// or https://")
        return self.base_url.rstrip("/") + endpoint

    def post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` as JSON to ``base_url + endpoint``; the decoded JSON reply (see module docstring)."""
        url = self._url(endpoint)
        data = json.dumps(payload).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            retry_reason = None
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                status, body = _send(request, self.timeout_s)  # http(s) only: _url checks the scheme
                if not 200 <= status < 300:
                    if status not in RETRY_STATUSES or attempt == attempts - 1:
                        raise BackendError(f"POST {url} returned HTTP {status} after {attempt + 1} attempt(s): "
                                           f"{_excerpt(body)}")
                    retry_reason = f"HTTP {status}"
            except _Redirected as err:
                raise BackendError(f"POST {url} was redirected (HTTP {err.code}) to {err.target}; redirects are "
                                   "refused, so that the API key is never sent to another address: set base_url "
                                   "to the address that answers") from None
            except (TimeoutError, socket.timeout) as err:
                if attempt == attempts - 1:
                    raise BackendError(f"POST {url} timed out after {self.timeout_s:g} s "
                                       f"({attempt + 1} attempt(s))") from err
                retry_reason = "timeout"
            except urllib.error.URLError as err:
                timed_out = isinstance(err.reason, (TimeoutError, socket.timeout))
                if attempt == attempts - 1:
                    what = f"timed out after {self.timeout_s:g} s" if timed_out else f"failed: {err.reason}"
                    raise BackendError(f"POST {url} {what} ({attempt + 1} attempt(s))") from err
                retry_reason = "timeout" if timed_out else str(err.reason)
            except (ConnectionError, OSError, http.client.HTTPException) as err:  # reset mid-reply, refused
                if attempt == attempts - 1:
                    raise BackendError(f"POST {url} failed: {err} ({attempt + 1} attempt(s))") from err
                retry_reason = str(err)
            if retry_reason is not None:
                delay = self.backoff_s * 2 ** attempt
                log.warning("POST %s: %s; retry %d of %d in %.2f s", url, retry_reason, attempt + 1, self.max_retries,
                            delay)
                time.sleep(delay)
                continue
            try:
                reply = json.loads(body)
            except ValueError:
                raise BackendError(f"POST {url} returned HTTP {status} with a malformed reply (not JSON): "
                                   f"{_excerpt(body)!r}") from None
            if not isinstance(reply, dict):
                raise BackendError(f"POST {url} returned HTTP {status} with a malformed reply (a JSON "
                                   f"{type(reply).__name__}, not an object)")
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _choice_text(reply: dict[str, Any], url: str, path: tuple[str, ...]) -> str:
        node: Any = reply
        try:
            node = node["choices"][0]
            for key in path:
                node = node[key]
        except (KeyError, IndexError, TypeError):
            raise BackendError(f"{url} returned a malformed reply: no choices[0].{'.'.join(path)} in "
                               f"{_excerpt(json.dumps(reply).encode())}") from None
        if not isinstance(node, str):
            raise BackendError(f"{url} returned a malformed reply: choices[0].{'.'.join(path)} is "
                               f"{type(node).__name__}, not text")
        return node

    def _sampling(self, max_new_tokens: int, temperature: float, top_p: float, seed: int, stop: Sequence[str],
                  index: int) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_new_tokens, "temperature": temperature,
                                   "top_p": top_p, "seed": job_seed(seed, "llm-sample", index) % 2**31}
        if stop:
            payload["stop"] = list(stop)[:4]  # the protocol's limit; all stops are applied below too
        return payload

    def _map(self, fn, items: list) -> list:
        if len(items) <= 1 or self.max_workers <= 1:
            return [fn(i, x) for i, x in enumerate(items)]
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            return list(pool.map(fn, range(len(items)), items))

    def chat(self, messages, *, max_new_tokens=256, temperature=0.0, top_p=1.0, seed=0, stop=(), batch_size=8):
        convs, single = as_conversations(messages)
        stop = [stop] if isinstance(stop, str) else list(stop)
        url = self._url("/chat/completions")

        def one(i: int, conv: list[dict]) -> str:
            reply = self.post("/chat/completions", {"messages": conv, **self._sampling(
                max_new_tokens, temperature, top_p, seed, stop, i)})
            return _cut(self._choice_text(reply, url, ("message", "content")), stop).strip()

        replies = self._map(one, convs)
        return replies[0] if single else replies

    def generate(self, prompts, *, max_new_tokens=64, temperature=0.0, top_p=1.0, seed=0, stop=(), batch_size=8):
        prompts = as_prompt_list(prompts)
        stop = [stop] if isinstance(stop, str) else list(stop)
        url = self._url("/completions")

        def one(i: int, prompt: str) -> str:
            reply = self.post("/completions", {"prompt": prompt, **self._sampling(
                max_new_tokens, temperature, top_p, seed, stop, i)})
            return _cut(self._choice_text(reply, url, ("text",)), stop)

        return self._map(one, prompts)

    def logprobs(self, prompts, continuations, *, per_token=False, batch_size=8):
        raise UnsupportedOperation(f"{self.name}: log-probabilities of given continuations need the model's "
                                   "logits; the chat-completions protocol does not return them. Use a local model.")


def _cut(text: str, stop: Sequence[str]) -> str:
    hits = [i for s in stop if (i := text.find(s)) >= 0]
    return text[:min(hits)] if hits else text


def api_key_from_env(var: str | None) -> str | None:
    """The API key in environment variable ``var`` (``None`` if unset or no variable is named)."""
    return os.environ.get(var) if var else None
