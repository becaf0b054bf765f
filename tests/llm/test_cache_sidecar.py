"""The language-model cache is a folder read on trust by every LM job: repro.llm.load checks it against the sha256
that cache_model (the llm_cache rule) wrote beside it before loading it."""

from __future__ import annotations

import pytest

import repro.llm
from repro.data.sidecar import write_sidecar


def test_a_cached_copy_is_checked_before_it_loads(tmp_path):
    folder = tmp_path / "smollm2-135m"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"smollm2-135m\.sha256 is missing"):
        repro.llm.load("smollm2-135m", root=tmp_path)
    recorded = write_sidecar(folder)
    (folder / "model.safetensors").write_bytes(b"weightz")  # one byte changed after the cache was written
    with pytest.raises(ValueError, match=rf"smollm2-135m: sha256 is [0-9a-f]{{64}} but .* records {recorded}"):
        repro.llm.load("smollm2-135m", root=tmp_path)
