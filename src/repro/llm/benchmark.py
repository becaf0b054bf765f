"""Speed of the local backends on this machine (reported, not asserted).

    PYTHONPATH=src python -m repro.llm.benchmark [--threads 2] [--out benchmark.json]
        [--backends torch,llamacpp,raw] [--lora-dtypes float32,bfloat16 | --lora-dtypes ""]

Measures, for SmolLM2-135M-Instruct (float32 unless said):

- load: dequantising the shipped GGUF file; writing the safetensors copy; loading that copy;
- greedy decoding, one prompt at a time, and seeded sampling of a batch of 8 (T = 0.8, top-p 0.95):
  generated tokens per second (tokens counted by re-encoding the outputs);
- one LoRA step (r 8 on q_proj and v_proj, AdamW) on a batch of 4 x 256 tokens, in float32 and
  bfloat16: seconds per step, the median of ``--steps`` steps after one warm-up step;
- ``backends``: the torch backend, the llamacpp backend (:mod:`repro.llm.llamacpp`) and, as the floor,
  raw ``llama_cpp.Llama.create_completion`` on the same GGUF file, side by side on the same chat
  prompts and threads: load time, greedy tokens/s one prompt at a time and as one batch of 8,
  sampled tokens/s (batch of 8) and scored (prompt, continuation) rows/s of ``logprobs`` (four continuations
  per chat prompt; on llamacpp also with ``share_prefixes`` off, every prompt fed whole: "prompts whole"). Raw
  llama-cpp-python has no batch or scoring call here (its greedy rows are one prompt at a time;
  it also reuses the KV cache of the prompts' shared system turn between calls).

Every figure comes with the process CPU time it took (user + system), because a shared machine's
wall-clock times depend on its other jobs; the load average at the start and end is reported too.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["run_benchmark", "main"]

log = logging.getLogger(__name__)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, _cpu() - self.cpu


def _tokens(lm, texts: list[str]) -> int:
    return sum(len(lm.tokenizer.encode(t, prompt=False)) for t in texts)


def _lora_step_times(folder: Path, dtype: str, doc: str, *, steps: int, seq_len: int, work: Path) -> dict:
    """Median wall and CPU seconds of one LoRA step (after one warm-up step) on a 4 x ``seq_len`` batch."""
    from repro.llm.hf import load_folder
    from repro.llm.lora import LoraConfig, finetune_lora

    lm = load_folder(folder, name="smollm2-135m", dtype=dtype)
    cfg = LoraConfig(targets=("q_proj", "v_proj"), rank=8, alpha=16, steps=steps + 1, batch_size=4,
                     max_length=seq_len, save_every=10_000)
    marks = [(time.perf_counter(), _cpu())]
    finetune_lora(lm, [doc] * 8, cfg, work / f"lora-{dtype}", seed=0,
                  on_step=lambda step, loss: marks.append((time.perf_counter(), _cpu())))
    walls = [b[0] - a[0] for a, b in zip(marks, marks[1:])][1:]  # the first step is the warm-up
    cpus = [b[1] - a[1] for a, b in zip(marks, marks[1:])][1:]
    return {"batch": f"4 x {seq_len} tokens", "wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


_PROMPTS = ["Write a short story about a lighthouse keeper.", "Explain how a bicycle works.",
            "List some facts about the Moon.", "Describe your favourite meal.", "What is machine learning?",
            "Tell me about the history of Rome.", "How do plants grow?", "Why is the sky blue?"]

#: Continuations scored after each chat prompt by the ``logprobs`` rows.
_CONTINUATIONS = ["Sure! Here is a short answer.", "I am not sure about that.", "The answer has three parts.",
                  "Once upon a time there was a keeper."]


def _rate(n: int, t: _Timer) -> dict:
    return {"tokens": n, "wall_s": t.wall, "cpu_s": t.cpu, "tokens_per_s": n / t.wall}


def _backend_rows(lm, chats: list[str], new_tokens: int, *, greedy_prompts: int = 4) -> dict:
    """Greedy one by one, greedy batch of 8, sampled batch of 8, logprobs rows/s of one repro.llm backend."""
    out: dict = {}
    lm.generate(chats[:1], max_new_tokens=4)  # warm-up
    with _Timer() as t:
        texts = [lm.generate([c], max_new_tokens=new_tokens)[0] for c in chats[:greedy_prompts]]
    out["greedy_batch1"] = _rate(_tokens(lm, texts), t)
    with _Timer() as t:
        texts = lm.generate(chats, max_new_tokens=new_tokens, batch_size=8)
    out["greedy_batch8"] = _rate(_tokens(lm, texts), t)
    with _Timer() as t:
        texts = lm.generate(chats, max_new_tokens=new_tokens, temperature=0.8, top_p=0.95, seed=0, batch_size=8)
    out["sample_batch8"] = _rate(_tokens(lm, texts), t)
    out["logprobs"] = _logprob_rows(lm, chats)
    return out


def _logprob_rows(lm, chats: list[str]) -> dict:
    """``logprobs`` of every chat prompt with each of the four continuations, 8 pairs to a batch."""
    prompts = [c for c in chats for _ in _CONTINUATIONS]
    conts = [k for _ in chats for k in _CONTINUATIONS]
    with _Timer() as t:
        lm.logprobs(prompts, conts, batch_size=8)
    return {"rows": len(prompts), "wall_s": t.wall, "cpu_s": t.cpu, "rows_per_s": len(prompts) / t.wall}


def _raw_rows(path: Path, chats: list[str], new_tokens: int, threads: int, *, greedy_prompts: int = 4) -> dict:
    """The floor: ``llama_cpp.Llama.create_completion`` greedy, one prompt at a time, on the same file."""
    from repro.llm.llamacpp import _NATIVE

    _NATIVE.install()  # llama.cpp's log to the logger, as the backend does
    import llama_cpp

    with _Timer() as t:
        llm = llama_cpp.Llama(str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads, seed=1, verbose=False)
    out: dict = {"load": {"wall_s": t.wall, "cpu_s": t.cpu}}
    llm.create_completion(chats[0], max_tokens=4, temperature=0.0)  # warm-up
    n = 0
    with _Timer() as t:
        for c in chats[:greedy_prompts]:
            n += llm.create_completion(c, max_tokens=new_tokens, temperature=0.0)["usage"]["completion_tokens"]
    out["greedy_batch1"] = _rate(n, t)
    llm.close()
    return out


def _table(backends: dict) -> str:
    """The side-by-side comparison as a text table: per wall-clock second (per CPU second in brackets)."""
    cols = [("load s", "load", None), ("greedy 1 tok/s", "greedy_batch1", "tokens"),
            ("greedy 8 tok/s", "greedy_batch8", "tokens"), ("sample 8 tok/s", "sample_batch8", "tokens"),
            ("logprob rows/s", "logprobs", "rows"), ("prompts whole", "logprobs_whole", "rows")]

    def cell(b: dict, key: str, unit: str | None) -> str:
        if key not in b:
            return "-"
        m = b[key]
        if unit is None:
            return f"{m['wall_s']:.2f} ({m['cpu_s']:.2f})"
        return f"{m[unit] / m['wall_s']:.1f} ({m[unit] / m['cpu_s']:.1f})"

    lines = ["| backend | " + " | ".join(c for c, _, _ in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, b in backends.items():
        lines.append(f"| {name} | " + " | ".join(cell(b, key, unit) for _, key, unit in cols) + " |")
    return "\n".join(lines)


def run_benchmark(*, threads: int = 2, new_tokens: int = 64, steps: int = 3, seq_len: int = 256,
                  lora_dtypes: tuple[str, ...] = ("float32", "bfloat16"),
                  backends: tuple[str, ...] = ("torch", "llamacpp", "raw")) -> dict:
    import torch

    from repro.llm.hf import load_folder, load_gguf, save_folder
    from repro.llm.models import shipped_gguf

    torch.set_num_threads(threads)
    out: dict = {"threads": threads, "loadavg_start": os.getloadavg(), "torch": torch.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        work, folder = Path(tmp), Path(tmp) / "smollm2-135m"
        with _Timer() as t:
            lm = load_gguf(shipped_gguf("smollm2-135m"), name="smollm2-135m")
        out["load_gguf"] = {"wall_s": t.wall, "cpu_s": t.cpu}
        with _Timer() as t:
            save_folder(lm, folder)
        out["write_cache"] = {"wall_s": t.wall, "cpu_s": t.cpu}
        del lm
        with _Timer() as t:
            lm = load_folder(folder, name="smollm2-135m")
        out["load_cached"] = {"wall_s": t.wall, "cpu_s": t.cpu}

        prompts = _PROMPTS
        chats = [lm.render_chat([{"role": "user", "content": p}]) for p in prompts]
        lm.generate(chats[:1], max_new_tokens=4)  # warm-up
        with _Timer() as t:
            texts = [lm.generate([c], max_new_tokens=new_tokens)[0] for c in chats[:2]]
        n = _tokens(lm, texts)
        out["greedy_batch1"] = {"tokens": n, "wall_s": t.wall, "cpu_s": t.cpu, "tokens_per_s": n / t.wall}
        with _Timer() as t:
            texts = lm.generate(chats, max_new_tokens=new_tokens, temperature=0.8, top_p=0.95, seed=0, batch_size=8)
        n = _tokens(lm, texts)
        out["sample_batch8"] = {"tokens": n, "wall_s": t.wall, "cpu_s": t.cpu, "tokens_per_s": n / t.wall}
        log.info("%s", json.dumps(out))
        if backends:
            out["backends"] = _compare_backends(lm, chats, backends, threads=threads, new_tokens=new_tokens,
                                                torch_load=out["load_gguf"])
            log.info("%s", json.dumps(out["backends"]))
        del lm

        words = ("the model reads a long document about rivers mountains cities and the people who live there "
                 "while the weather changes every day ").split()
        doc = " ".join(words[i % len(words)] for i in range(seq_len * 2))
        for dtype in lora_dtypes:
            out[f"lora_step_{dtype}"] = _lora_step_times(folder, dtype, doc, steps=steps, seq_len=seq_len, work=work)
            log.info("%s", json.dumps(out))  # partial results, in case a slow dtype is interrupted
    out["loadavg_end"] = os.getloadavg()
    return out


def _compare_backends(torch_lm, chats: list[str], backends: tuple[str, ...], *, threads: int, new_tokens: int,
                      torch_load: dict) -> dict:
    """``backends`` (torch, llamacpp, raw) side by side on the same prompts, threads and token budget."""
    from repro.llm.llamacpp import LlamaCppLM
    from repro.llm.models import shipped_gguf

    unknown = set(backends) - {"torch", "llamacpp", "raw"}
    if unknown:
        raise ValueError(f"benchmark backends {sorted(unknown)} unknown; expected torch, llamacpp, raw")
    path = shipped_gguf("smollm2-135m")
    out: dict = {}
    if "torch" in backends:
        out["torch"] = {"load": torch_load, **_backend_rows(torch_lm, chats, new_tokens)}
    if "llamacpp" in backends:
        with _Timer() as t:
            lm = LlamaCppLM(path, name="smollm2-135m", n_threads=threads)
        out["llamacpp"] = {"load": {"wall_s": t.wall, "cpu_s": t.cpu}, **_backend_rows(lm, chats, new_tokens)}
        lm.share_prefixes = False  # the same rows with every prompt fed whole: what shared prefixes save
        out["llamacpp"]["logprobs_whole"] = _logprob_rows(lm, chats)
        lm.close()
    if "raw" in backends:
        out["llama_cpp_python_raw"] = _raw_rows(path, chats, new_tokens, threads)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3, help="timed LoRA steps (after one warm-up)")
    parser.add_argument("--lora-dtypes", default="float32,bfloat16",
                        help="comma-separated dtypes of the LoRA step (bfloat16 is slow on CPUs without AVX512-BF16)")
    parser.add_argument("--backends", default="torch,llamacpp,raw",
                        help="backends compared side by side (torch, llamacpp, raw = llama-cpp-python's own "
                             "create_completion); empty: none")
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    result = run_benchmark(threads=args.threads, new_tokens=args.new_tokens, steps=args.steps,
                           lora_dtypes=tuple(d for d in args.lora_dtypes.split(",") if d),
                           backends=tuple(b for b in args.backends.split(",") if b))
    if result.get("backends"):
        sys.stderr.write(f"threads {result['threads']}, {args.new_tokens} new tokens:\n{_table(result['backends'])}\n")
    text = json.dumps(result, indent=2)
    if args.out:
        from repro.io import atomic_open

        with atomic_open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
