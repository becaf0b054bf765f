"""The OpenAI-compatible HTTP backend against a stub server on 127.0.0.1 (tests/llm/openai_stub.py).

Every failure must be a clear error naming the URL and what went wrong (status, timeout, malformed
reply); transient failures are retried and counted by the server.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest

import repro.llm
from repro.llm import BackendError, UnsupportedOperation


def _stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=5) as resp:
        return json.loads(resp.read())


def _lm(base_url, model, **kw):
    kw = {"backoff_s": 0.01, "max_retries": 2, "timeout_s": 5.0, **kw}
    return repro.llm.connect(base_url, model, **kw)


def test_chat_and_generate_return_the_servers_text_and_send_the_sampling_fields(stub_server):
    lm = _lm(stub_server, "echo")
    assert lm.chat([{"role": "user", "content": "hello"}]) == "echo: hello. STOP here"
    replies = lm.chat([[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]], stop=[". STOP"])
    assert replies == ["echo: a", "echo: b"]  # the order of the conversations, stop applied locally
    assert lm.generate(["x", "y"], max_new_tokens=5) == ["x continued", "y continued"]
    raw = lm.post("/chat/completions", {"model": "echo", "messages": [{"role": "user", "content": "q"}],
                                        "max_tokens": 7, "seed": 3})
    assert raw["received"]["max_tokens"] == 7 and raw["received"]["seed"] == 3


def test_a_server_error_is_retried_then_reported_with_url_and_status(stub_server):
    lm = _lm(stub_server, "fail500", max_retries=2)
    before = _stats(stub_server).get("fail500", 0)
    with pytest.raises(BackendError) as err:
        lm.chat([{"role": "user", "content": "hi"}])
    msg = str(err.value)
    assert f"{stub_server}/chat/completions" in msg and "HTTP 500" in msg and "3 attempt(s)" in msg
    assert "boom" in msg  # the server's own explanation is quoted
    assert _stats(stub_server)["fail500"] - before == 3  # first try + 2 retries


def test_a_transient_failure_is_retried_and_succeeds(stub_server):
    lm = _lm(stub_server, "flaky", max_retries=1)
    assert lm.chat([{"role": "user", "content": "again"}]) == "echo: again. STOP here"
    assert _stats(stub_server)["flaky"] == 2


def test_a_timeout_is_reported_with_url_and_the_limit(stub_server):
    lm = _lm(stub_server, "slow", timeout_s=0.3, max_retries=1)
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match=r"timed out after 0\.3 s \(2 attempt\(s\)\)") as err:
        lm.chat([{"role": "user", "content": "hi"}])
    assert f"{stub_server}/chat/completions" in str(err.value)
    assert time.perf_counter() - t0 < 1.9  # two short timeouts, not the server's 2 s reply


def test_a_malformed_reply_is_an_error_naming_the_url_and_is_not_retried(stub_server):
    lm = _lm(stub_server, "malformed")
    with pytest.raises(BackendError, match=r"malformed reply \(not JSON\)") as err:
        lm.chat([{"role": "user", "content": "hi"}])
    assert f"{stub_server}/chat/completions" in str(err.value) and "this is not json" in str(err.value)
    assert _stats(stub_server)["malformed"] == 1
    with pytest.raises(BackendError, match=r"no choices\[0\]\.message\.content") as err:
        _lm(stub_server, "nochoices").chat([{"role": "user", "content": "hi"}])
    assert f"{stub_server}/chat/completions" in str(err.value)


def test_a_refused_connection_names_the_url():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(BackendError, match=rf"POST {url}/chat/completions failed: .*\(2 attempt\(s\)\)"):
        _lm(url, "echo", max_retries=1).chat([{"role": "user", "content": "hi"}])


def test_operations_that_need_the_models_internals_say_so(stub_server):
    lm = _lm(stub_server, "echo")
    with pytest.raises(UnsupportedOperation, match="echo@http"):
        lm.logprobs(["a"], ["b"])
    with pytest.raises(UnsupportedOperation, match="hidden states"):
        lm.hidden_states(["a"], layers=[0])


def test_from_config_points_a_paper_at_the_server_with_the_key_from_the_environment(stub_server, monkeypatch):
    monkeypatch.setenv("STUB_KEY", "sekret")
    cfg = {"backend": "http", "model": "echo",
           "http": {"base_url": stub_server, "api_key_env": "STUB_KEY", "timeout_s": 5, "max_retries": 0}}
    lm = repro.llm.from_config(cfg, "llm.small")
    raw = lm.post("/chat/completions", {"model": "echo", "messages": [{"role": "user", "content": "q"}]})
    assert raw["received"]["authorization"] == "Bearer sekret"
    with pytest.raises(ValueError, match=r"llm\.small\.http\.base_url must be set"):
        repro.llm.from_config({"backend": "http", "model": "x"}, "llm.small")
