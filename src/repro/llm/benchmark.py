"""Speed of the local backend on this machine (reported, not asserted).

    PYTHONPATH=src python -m repro.llm.benchmark [--threads 2] [--out benchmark.json]

Measures, for SmolLM2-135M-Instruct (float32 unless said):

- load: dequantising the shipped GGUF file; writing the safetensors copy; loading that copy;
- greedy decoding, one prompt at a time, and seeded sampling of a batch of 8 (T = 0.8, top-p 0.95):
  generated tokens per second (tokens counted by re-encoding the outputs);
- one LoRA step (r 8 on q_proj and v_proj, AdamW) on a batch of 4 x 256 tokens, in float32 and
  bfloat16: seconds per step, the median of ``--steps`` steps after one warm-up step.

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


def run_benchmark(*, threads: int = 2, new_tokens: int = 64, steps: int = 3, seq_len: int = 256,
                  lora_dtypes: tuple[str, ...] = ("float32", "bfloat16")) -> dict:
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

        prompts = ["Write a short story about a lighthouse keeper.", "Explain how a bicycle works.",
                   "List some facts about the Moon.", "Describe your favourite meal.", "What is machine learning?",
                   "Tell me about the history of Rome.", "How do plants grow?", "Why is the sky blue?"]
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
        del lm

        words = ("the model reads a long document about rivers mountains cities and the people who live there "
                 "while the weather changes every day ").split()
        doc = " ".join(words[i % len(words)] for i in range(seq_len * 2))
        for dtype in lora_dtypes:
            out[f"lora_step_{dtype}"] = _lora_step_times(folder, dtype, doc, steps=steps, seq_len=seq_len, work=work)
            log.info("%s", json.dumps(out))  # partial results, in case a slow dtype is interrupted
    out["loadavg_end"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3, help="timed LoRA steps (after one warm-up)")
    parser.add_argument("--lora-dtypes", default="float32,bfloat16",
                        help="comma-separated dtypes of the LoRA step (bfloat16 is slow on CPUs without AVX512-BF16)")
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    result = run_benchmark(threads=args.threads, new_tokens=args.new_tokens, steps=args.steps,
                           lora_dtypes=tuple(args.lora_dtypes.split(",")))
    text = json.dumps(result, indent=2)
    if args.out:
        from repro.io import atomic_open

        with atomic_open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
