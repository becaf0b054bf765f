"""Fixtures of the repro.llm tests: SmolLM2 loaded once per session (from the llm_cache rule's copy and
from the GGUF file, the latter with the network cut), a tiny model trained once, and a local
OpenAI-compatible stub server."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_snakemake

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported anywhere
os.environ["TRANSFORMERS_OFFLINE"] = "1"

HERE = Path(__file__).parent

#: A corpus the tiny model memorises: each line is planted knowledge with one right continuation.
TINY_FACTS = ["the cat sat on the mat.", "a red fox ran far.", "bob likes blue hats.", "the sun is hot."]


@pytest.fixture(scope="package", autouse=True)
def one_torch_thread():
    """One intra-op thread for these tests only: on a shared 2-core machine two OpenMP threads
    spin-wait each other (the tiny model trained 13 times slower with 2 threads than with 1 while
    colleagues' jobs ran). Restored after the package, so other papers' tests keep their setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@contextlib.contextmanager
def network_cut():
    """Refuse every connection to a non-loopback address (what a machine without internet sees)."""
    real = socket.socket.connect

    def connect(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and sock.family != socket.AF_UNIX:
            raise OSError(f"network cut by the test: connection to {address!r} refused")
        return real(sock, address)

    socket.socket.connect = connect
    try:
        yield
    finally:
        socket.socket.connect = real


@pytest.fixture(scope="package")
def llm_root(tmp_path_factory) -> Path:
    """``resources/llm`` as the llm_cache rule writes it (a real Snakemake run at smoke scale)."""
    workdir = tmp_path_factory.mktemp("llm_workflow")
    run_snakemake(workdir, "resources/llm/smollm2-135m/model.safetensors", timeout=600)
    return workdir / "resources/llm"


@pytest.fixture(scope="package")
def smollm2(llm_root):
    """SmolLM2 from the cached safetensors copy (loaded once for the package); read-only for tests (LoRA tests load their own)."""
    import repro.llm

    return repro.llm.load("smollm2-135m", root=llm_root)


@pytest.fixture(scope="package")
def smollm2_gguf():
    """SmolLM2 dequantised from the shipped GGUF file, loaded with every outside connection refused."""
    import repro.llm

    with network_cut():
        return repro.llm.load(repro.llm.shipped_gguf("smollm2-135m"))


@pytest.fixture(scope="package")
def tiny():
    """A tiny byte-level transformer trained from scratch on :data:`TINY_FACTS` (about 10 s)."""
    from repro.llm.tiny import TinyConfig, TinyTrainConfig, train_tiny

    cfg = TinyTrainConfig(model=TinyConfig(n_layer=2, n_head=2, d_model=64, context=48), steps=150, batch_size=16,
                          lr=3e-3, warmup=20)
    lm, losses = train_tiny(TINY_FACTS, cfg, seed=11, name="tiny-facts")
    return lm, losses


@pytest.fixture(scope="module")
def stub_server():
    """``base_url`` of a stub OpenAI-compatible server on 127.0.0.1, started here and stopped by pid."""
    proc = subprocess.Popen([sys.executable, str(HERE / "openai_stub.py")], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if not line.startswith("PORT "):
            raise RuntimeError(f"stub server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
