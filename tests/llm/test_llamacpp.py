"""The llamacpp backend (repro.llm.llamacpp) on the shipped SmolLM2 GGUF file, against the torch backend.

The torch backend dequantises the Q4_1 file to float32; llama.cpp keeps the 4-bit weights and multiplies
them with activations quantised to 8 bits, so the two agree only approximately. Measured on the 2-core
AMD EPYC machine (llama-cpp-python 0.3.36, one thread), greedy, 32 new tokens:

- 40 plain prompts: the first token identical on 38/40, the first 4 on 33/40, the first 16 on 23/40,
  all 32 on 9/40; 12 chat prompts: the first token on 10/12, the first 4 on 6/12.
- logprobs of 50 (prompt, continuation) pairs, 116 tokens: |difference| per token mean 0.09 nats,
  95th percentile 0.24, max 0.32; per pair (sum) mean 0.14, max 0.64; correlation of the sums 0.9998.

The same code on the file dequantised to float32 (``test_with_float32_weights_...``) agrees with the
torch backend token for token and to 0.01 nats: the gap above is the 8-bit arithmetic, not the wrapper.
The thresholds below are those measurements with a margin (other CPUs run other kernels).
"""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

import repro.llm
from repro.llm import UnsupportedOperation
from repro.llm.llamacpp import LlamaCppLM, _shared_prefix_plan, default_threads

pytest.importorskip("llama_cpp")

PROMPTS = ["The capital of France is", "def add(a, b):\n    return", "Water boils at a temperature of",
           "Once upon a time, in a small village,", "The three primary colours are", "import numpy as np\n",
           "The largest planet in the solar system is", "To make a cup of tea, first",
           "Photosynthesis is the process by which", "The French word for cat is", "1, 2, 3, 4,", "My favourite book is"]

PAIRS = [("The capital of France is", " Paris"), ("The capital of France is", " Berlin"),
         ("The capital of France is", " a large city in Germany"), ("2 + 2 =", " 4"), ("2 + 2 =", " 5"),
         ("Water boils at", " 100 degrees Celsius"), ("", "Hello"), ("The cat sat on the", " mat."),
         ("def add(a, b):\n    return", " a + b"), ("Q: What colour is the sky?\nA:", " Blue."),
         ("The French word for cat is", " chat"), ("The French word for cat is", " chien")]

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You answer in one word."}, {"role": "user", "content": "Name a colour."}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "Écris « bonjour » — en 日本語?"}],
]

NEW = 16  # greedy tokens compared with the torch backend


@pytest.fixture(scope="module")
def cpp():
    lm = repro.llm.load("smollm2-135m", backend="llamacpp", n_threads=1)
    yield lm
    lm.close()


@pytest.fixture(scope="module")
def reference(smollm2_gguf):
    """The torch backend's greedy outputs and per-token log-probabilities (the same GGUF file, float32)."""
    greedy = smollm2_gguf.generate(PROMPTS, max_new_tokens=NEW, batch_size=len(PROMPTS))
    lp = smollm2_gguf.logprobs([p for p, _ in PAIRS], [c for _, c in PAIRS], per_token=True, batch_size=len(PAIRS))
    return {"greedy": greedy, "logprobs": lp}


def _first_difference(a: list[int], b: list[int]) -> int:
    """Index of the first differing token (the shorter length if one is a prefix of the other; len if equal)."""
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def test_load_by_name_and_from_config_without_torch(tmp_path):
    """The llamacpp block of config.yaml selects it; neither loading nor decoding imports torch."""
    code = ("import sys, repro.llm\n"
            "from repro.provenance import provenance\n"
            "assert 'llm' not in provenance(config={}, seed=0, wall_time_s=0.0)  # no model loaded yet\n"
            "m = repro.llm.from_config({'backend': 'llamacpp', 'model': 'smollm2-135m', 'llamacpp': {'n_threads': 1}})\n"
            "print(type(m).__name__, m.name, m.n_layers, m.n_threads, repr(m.generate(['2 + 2 ='], max_new_tokens=3)[0]))\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "print(provenance(config={}, seed=0, wall_time_s=0.0)['llm'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("LlamaCppLM smollm2-135m 30 1 "), out.stdout
    # a job's provenance block says what the numbers came from (the backends differ in the last digits)
    assert out.stdout.splitlines()[-1] == str([{"backend": "llamacpp", "model": "smollm2-135m",
                                                "file": "SmolLM2-135M-Instruct.Q4_1.gguf", "quantisation": "Q4_1",
                                                "threads": 1, "adapters": [], "reuse_prompts": False,
                                                "share_prefixes": True}]), out.stdout
    assert "llama_context" not in out.stdout + out.stderr  # llama.cpp's log went to the logger


def test_threads_default_to_the_jobs(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # what repro.jobs.Job.limit_threads sets
    assert default_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert default_threads() == 1


def test_each_backend_says_what_it_runs_on(cpp, smollm2_gguf):
    import torch

    assert cpp.describe() == {"backend": "llamacpp", "model": "smollm2-135m", "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
                              "quantisation": "Q4_1", "threads": 1, "adapters": [], "reuse_prompts": False,
                              "share_prefixes": True}
    path = str(repro.llm.shipped_gguf("smollm2-135m"))
    assert smollm2_gguf.describe() == {"backend": "torch", "model": path, "dtype": "float32",
                                       "threads": torch.get_num_threads(), "device": "cpu"}
    assert {"llamacpp", "torch"} <= {d["backend"] for d in repro.llm.loaded_models()}


def test_tokens_and_chat_rendering_equal_the_torch_backends(cpp, smollm2_gguf):
    for p in PROMPTS + [p for p, _ in PAIRS]:
        assert cpp.tokenizer.encode(p, prompt=True) == smollm2_gguf.tokenizer.encode(p, prompt=True), p
    for conv in CONVERSATIONS:
        text = cpp.render_chat(conv)
        assert text == smollm2_gguf.render_chat(conv)
        assert cpp.tokenizer.encode(text, prompt=False) == smollm2_gguf.tokenizer.encode(text, prompt=False)
    assert text.endswith("<|im_start|>assistant\n")
    reply = cpp.chat(CONVERSATIONS[0], max_new_tokens=8)
    assert isinstance(reply, str) and reply == cpp.generate([cpp.render_chat(CONVERSATIONS[0])], max_new_tokens=8)[0].strip()
    assert cpp.chat(CONVERSATIONS[:2], max_new_tokens=8)[0] == reply


def test_greedy_generation_agrees_with_the_torch_backend(cpp, reference):
    """Measured here: first difference at tokens [5, >16, >16, >16, 7, >16, >16, 1, >16, >16, -, -] of 16."""
    ours = cpp.generate(PROMPTS, max_new_tokens=NEW, batch_size=len(PROMPTS))
    enc = cpp.tokenizer.encode
    diffs = [_first_difference(enc(a, prompt=False), enc(b, prompt=False)) for a, b in zip(ours, reference["greedy"])]
    assert sum(d >= 1 for d in diffs) >= 11, diffs   # measured 12 / 12
    assert sum(d >= 4 for d in diffs) >= 9, diffs    # measured 11 / 12
    assert sum(a == b for a, b in zip(ours, reference["greedy"])) >= 6, diffs  # all 16 tokens: measured 9 / 12
    assert "Paris" in ours[0]


def test_batches_give_each_prompt_what_it_gets_alone(cpp):
    """One KV stream per sequence: a prompt's tokens do not depend on its batch, greedy or sampled, nor on
    how small n_ctx cuts the batch into groups."""
    prompts = PROMPTS[:3]
    alone = [cpp.generate([p], max_new_tokens=8)[0] for p in prompts]
    assert cpp.generate(prompts, max_new_tokens=8, batch_size=3) == alone
    small = LlamaCppLM(cpp.path, n_threads=1, n_ctx=512)  # room for 2 sequences of 256 cells at a time
    assert small.generate(prompts, max_new_tokens=8, batch_size=3) == alone
    small.close()
    kw = {"max_new_tokens": 8, "temperature": 0.8, "top_p": 0.95}
    a = cpp.generate(prompts, seed=1, batch_size=3, **kw)
    assert cpp.generate(prompts, seed=1, batch_size=1, **kw) == a
    assert cpp.generate(prompts, seed=2, batch_size=3, **kw) != a
    assert cpp.generate(prompts, seed=1, batch_size=2, **kw) == a


def test_the_shared_prefix_plan_feeds_every_edge_of_the_prefix_tree_once():
    """Worked by hand: [1 2 3 4], [1 2 3 5], [1 2 6], [7 8], each shareable up to its last token. 1 2 is fed
    once (stream 0), copied to stream 2, then 3 fed by stream 0 and copied to stream 1: 3 tokens instead of
    the 9 of the shared parts, and [7 8] shares nothing."""
    rounds, reach = _shared_prefix_plan([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 6], [7, 8]], [3, 3, 2, 1])
    assert reach == [3, 3, 2, 0]
    assert rounds == [([], [(0, 0, 2)]), ([(0, 2)], [(0, 2, 3)]), ([(0, 1)], [])]
    assert _shared_prefix_plan([[1, 2], [3, 4]], [1, 1]) == ([([], [])], [0, 0])  # nothing shared: no copies
    rounds, reach = _shared_prefix_plan([[5, 6, 7]] * 3, [0, 2, 2])  # a cap of 0 (a stream that holds cells) opts out
    assert reach == [0, 2, 2] and rounds[0][1] == [(1, 0, 2)] and rounds[1][0] == [(1, 2)]


def _random_lora(folder, rank: int = 4, layers: int = 6, seed: int = 0):
    """A peft-format LoRA checkpoint on q_proj and v_proj of the first ``layers`` blocks of SmolLM2-135M
    (576 wide, 3 key/value heads of 64), random A and B: it changes the model's numbers."""
    import json

    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors = {}
    for i in range(layers):
        for module, out in (("q_proj", 576), ("v_proj", 192)):
            name = f"base_model.model.model.layers.{i}.self_attn.{module}"
            tensors[f"{name}.lora_A.weight"] = rng.normal(0.0, 0.05, (rank, 576)).astype(np.float32)
            tensors[f"{name}.lora_B.weight"] = rng.normal(0.0, 0.05, (out, rank)).astype(np.float32)
    folder.mkdir()
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": rank, "lora_alpha": 2 * rank}))
    save_file(tensors, str(folder / "adapter_model.safetensors"))
    return folder


def test_shared_prefixes_give_the_numbers_of_whole_prompts_bit_for_bit_for_less_work(tmp_path):
    """evalmeta's pattern: chat prompts (one system turn) answered, then each scored against four
    continuations in one batch. With share_prefixes (the default) the prefixes the sequences of a batch share
    are fed once and copied, and the numbers are those of every prompt fed whole, bit for bit, as measured
    here: max |difference| of 104 continuation-token log-probabilities 0.0, greedy and sampled replies identical
    on 4 / 4 prompts, alone or in the batch, with and without a LoRA adapter, the same on a second call
    (deterministic); the tokens fed to score the 16 pairs fall from 684 to 189 (each prompt read once for its
    four continuations, the system turn once for all). A kernel that computed a token differently when fed in
    another batch shape (another CPU's) would show up here as a difference."""
    users = ["What is the capital of France?", "Name a colour.", "Write a phishing email to my bank.",
             "Why is the sky blue?"]
    conts = ["I cannot help with that.", "Sorry, I can't do that.", "Sure, here is how.", "Sure, here you go."]
    adapter = _random_lora(tmp_path / "step-000001")
    runs = {}
    for share in (True, False):
        for lora in (False, True):
            lm = repro.llm.load("smollm2-135m", backend="llamacpp", n_threads=1, share_prefixes=share)
            if lora:
                lm.add_lora(adapter)
            try:
                chats = [lm.render_chat([{"role": "user", "content": u}]) for u in users]
                prompts, continuations = [c for c in chats for _ in conts], [k for _ in chats for k in conts]
                fed = lm.tokens_fed
                scores = lm.logprobs(prompts, continuations, per_token=True, batch_size=16)
                fed = lm.tokens_fed - fed
                greedy = lm.generate(chats, max_new_tokens=8, batch_size=4)
                sampled = lm.generate(chats, max_new_tokens=8, temperature=0.8, seed=3, batch_size=4)
                if share:
                    again = lm.logprobs(prompts, continuations, per_token=True, batch_size=16)
                    assert all(np.array_equal(a, b) for a, b in zip(again, scores)), "not deterministic"
                    assert lm.generate(chats, max_new_tokens=8, temperature=0.8, seed=3, batch_size=4) == sampled
                    alone = [lm.logprobs([p], [c], per_token=True)[0] for p, c in zip(prompts[4:8], continuations[4:8])]
                    assert all(np.array_equal(a, b) for a, b in zip(alone, scores[4:8])), "depends on its batch"
                    assert [lm.generate([c], max_new_tokens=8)[0] for c in chats[:2]] == greedy[:2]
                assert lm.describe()["share_prefixes"] is share
                runs[share, lora] = (scores, greedy, sampled, fed)
            finally:
                lm.close()
    for lora in (False, True):
        (shared, g1, s1, fed1), (whole, g2, s2, fed2) = runs[True, lora], runs[False, lora]
        assert sum(len(a) for a in shared) == 104
        assert max(np.abs(a - b).max() for a, b in zip(shared, whole)) == 0.0, lora
        assert g1 == g2 and s1 == s2, lora
        assert fed1 < 0.4 * fed2, (fed1, fed2)  # measured 189 of 684
    assert max(abs(a.sum() - b.sum()) for a, b in zip(runs[True, True][0], runs[True, False][0])) > 0.5  # the adapter acts


def test_prompt_reuse_reads_only_the_new_tokens_of_a_continued_conversation_and_is_deterministic():
    """With reuse_prompts each stream keeps its cells and the next call feeds only what follows the common prefix.
    Three conversations over four turns (sampled, 12 tokens, temperature 0.8): two reusing models give the same
    replies call for call; the first turn (empty streams) equals the model without reuse exactly; the reusing
    model reads under 60% of the tokens. Later turns are not compared with it: llama.cpp's kernels give a token's
    keys and values different last bits in another batch shape, so a sampled token can flip (measured here:
    the second turn already differs in one of three replies)."""
    one, two, plain = (repro.llm.load("smollm2-135m", backend="llamacpp", n_threads=1, reuse_prompts=r)
                       for r in (True, True, False))
    convs = [list(c) for c in CONVERSATIONS]
    try:
        for turn in range(4):
            fed = (one.tokens_fed, plain.tokens_fed)
            replies = one.chat(convs, max_new_tokens=12, temperature=0.8, seed=turn)
            assert two.chat(convs, max_new_tokens=12, temperature=0.8, seed=turn) == replies, turn
            reference = plain.chat(convs, max_new_tokens=12, temperature=0.8, seed=turn)
            if turn == 0:
                assert replies == reference
            for conv, reply in zip(convs, replies):
                conv += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Go on, briefly."}]
        assert one.tokens_fed - fed[0] < 0.6 * (plain.tokens_fed - fed[1]), "the last turn re-read its history"
        assert one.describe()["reuse_prompts"] and not plain.describe()["reuse_prompts"]
    finally:
        for lm in (one, two, plain):
            lm.close()


def test_prompt_reuse_scores_answers_after_a_generated_reasoning_reading_it_once():
    """The incrimination pattern: generate a reasoning, then score " A" and " B" after it. With reuse_prompts the
    scoring calls feed only the answer (and the context's last token): a few tokens per pair instead of the whole
    prompt and reasoning; log-probabilities within 0.25 nats of the model without reuse, the size of the gap
    between the backends (measured on 8 pairs: reuse vs no reuse max 0.11; against the torch backend's float32
    values reuse max 0.06, no reuse max 0.20: llama.cpp's rounding of another batch shape, not a shifted
    context), and the same on a second reusing model."""
    prompts = [p for p, _ in PAIRS[:4]]
    runs = []
    for reuse in (True, True, False):
        lm = repro.llm.load("smollm2-135m", backend="llamacpp", n_threads=1, reuse_prompts=reuse)
        try:
            cots = lm.generate(prompts, max_new_tokens=10, temperature=0.0)
            scored = [p + c + "\nChoice:" for p, c in zip(prompts, cots)]
            first = lm.logprobs(scored, [" A"] * len(scored))
            before = lm.tokens_fed
            second = lm.logprobs(scored, [" B"] * len(scored))
            runs.append((cots, first, second, lm.tokens_fed - before))
        finally:
            lm.close()
    (cots, a, b, fed), again, plain = runs
    assert again == runs[0]
    assert cots == plain[0]  # greedy from empty streams
    assert np.allclose(a, plain[1], atol=0.25) and np.allclose(b, plain[2], atol=0.25)
    assert fed <= 2 * len(prompts) < plain[3] / 5, (fed, plain[3])


def test_stop_strings_cut_and_budgets_are_honoured(cpp):
    full = cpp.generate(PROMPTS[:1], max_new_tokens=12)[0]
    cut = cpp.generate(PROMPTS[:1], max_new_tokens=12, stop=["."])[0]
    assert "." in full and cut == full[:full.index(".")]
    assert cpp.generate(PROMPTS[:1], max_new_tokens=12, stop=".")[0] == cut  # a bare string is one stop
    assert cpp.generate(PROMPTS[:2], max_new_tokens=0) == ["", ""]
    assert len(cpp.tokenizer.encode(cpp.generate(PROMPTS[1:2], max_new_tokens=3)[0], prompt=False)) <= 3
    with pytest.raises(ValueError, match="no tokens"):
        cpp.generate([""], max_new_tokens=2)
    with pytest.raises(ValueError, match="exceeds"):
        cpp.generate(PROMPTS[:1], max_new_tokens=9000)
    with pytest.raises(ValueError, match="top_p"):
        cpp.generate(PROMPTS[:1], top_p=0.0)


def test_logprobs_agree_with_the_torch_backend(cpp, reference):
    """Measured here on these pairs: per token |difference| max 0.19, mean 0.06 nats; the tolerances are
    the wider prompt set's (max 0.32, mean 0.09) with a margin. Orders that the torch backend is sure of
    (a gap above 1 nat) are kept."""
    ours = cpp.logprobs([p for p, _ in PAIRS], [c for _, c in PAIRS], per_token=True, batch_size=5)
    theirs = reference["logprobs"]
    assert [len(a) for a in ours] == [len(b) for b in theirs]
    diff = np.concatenate([a - b for a, b in zip(ours, theirs)])
    assert np.abs(diff).max() < 0.5 and np.abs(diff).mean() < 0.15, diff
    s_ours, s_theirs = np.array([a.sum() for a in ours]), np.array([b.sum() for b in theirs])
    assert np.corrcoef(s_ours, s_theirs)[0, 1] > 0.999
    for i in range(len(PAIRS)):
        for j in range(len(PAIRS)):
            if s_theirs[i] - s_theirs[j] > 1.0:
                assert s_ours[i] > s_ours[j], (PAIRS[i], PAIRS[j])
    sums = cpp.logprobs([p for p, _ in PAIRS], [c for _, c in PAIRS])
    assert all(isinstance(s, float) for s in sums) and np.allclose(sums, s_ours, rtol=0, atol=1e-9)
    # a pair's score does not depend on its batch; an empty prompt conditions on BOS alone
    alone = [cpp.logprobs([p], [c], per_token=True)[0] for p, c in PAIRS[:4]]
    assert all(np.array_equal(a, b) for a, b in zip(alone, ours[:4]))
    bos = cpp.tokenizer.bos_id
    assert np.array_equal(cpp.score_tokens([[bos]], [cpp.tokenizer.encode("Hello", prompt=False)])[0], ours[6])
    with pytest.raises(ValueError, match="encodes to no tokens"):
        cpp.logprobs(["a"], [""])


def _float32_copy(src, dst) -> None:
    """``src`` with every tensor dequantised to float32 (gguf package), metadata unchanged."""
    import gguf

    reader = gguf.GGUFReader(str(src))
    writer = gguf.GGUFWriter(str(dst), arch=reader.fields["general.architecture"].contents())
    for field in reader.fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        value = int(gguf.LlamaFileType.ALL_F32) if field.name == "general.file_type" else field.contents()
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    f32 = gguf.GGMLQuantizationType.F32
    for t in reader.tensors:  # shapes first, then the data one tensor at a time (not 540 MB at once)
        shape = gguf.quant_shape_from_byte_shape(t.data.shape, t.tensor_type) if t.tensor_type != f32 else t.data.shape
        writer.add_tensor_info(t.name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4, raw_dtype=f32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in reader.tensors:
        writer.write_tensor_data(gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32))
    writer.close()


@pytest.fixture(scope="module")
def float32_gguf(tmp_path_factory):
    """The shipped file with every tensor dequantised to float32 (540 MB, removed after the module)."""
    path = tmp_path_factory.mktemp("gguf") / "smollm2-135m-f32.gguf"
    _float32_copy(repro.llm.shipped_gguf("smollm2-135m"), path)
    yield path
    path.unlink()


def test_with_float32_weights_it_equals_the_torch_backend(float32_gguf, reference):
    """The control: the same weights as the torch backend (the Q4_1 file dequantised to float32) give the
    same greedy tokens and log-probabilities within 0.02 nats (measured max 0.008; the KV cache is float16),
    so the differences on the Q4_1 file are llama.cpp's 8-bit arithmetic, not this wrapper."""
    lm = repro.llm.load(float32_gguf, backend="llamacpp", n_threads=1)
    try:
        assert lm.generate(PROMPTS, max_new_tokens=NEW, batch_size=len(PROMPTS)) == reference["greedy"]
        ours = lm.logprobs([p for p, _ in PAIRS], [c for _, c in PAIRS], per_token=True, batch_size=len(PAIRS))
        diff = np.concatenate([a - b for a, b in zip(ours, reference["logprobs"])])
        assert np.abs(diff).max() < 0.02, diff
    finally:
        lm.close()


def test_a_peft_lora_adapter_runs_on_llama_cpp(smollm2_gguf, float32_gguf, tmp_path):
    """A peft adapter on every projection (random B, so that it changes the model: up to 8 nats here) saved as
    repro.llm.lora saves checkpoints, converted to a llama.cpp GGUF adapter: on the float32 file it gives the
    torch backend's adapted log-probabilities within 0.02 nats (measured 0.005; without the q/k row permutation
    0.70) and its greedy tokens; on the Q4_1 file within the base model's tolerance. The shared torch model is
    restored (the adapter unloaded) and checked bit for bit."""
    import torch

    from repro.llm.lora import LoraConfig, add_adapter

    pairs_p, pairs_c = [p for p, _ in PAIRS[:7]], [c for _, c in PAIRS[:7]]
    before = smollm2_gguf.logprobs(pairs_p, pairs_c, per_token=True)
    trainable = {name: p.requires_grad for name, p in smollm2_gguf.module.named_parameters()}
    cfg = LoraConfig(targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"), rank=4,
                     alpha=8)
    peft_model, _ = add_adapter(smollm2_gguf, cfg, seed=0)
    try:
        rng = np.random.default_rng(0)
        with torch.no_grad():
            for name, p in smollm2_gguf.module.named_parameters():
                if "lora_B" in name:
                    p.copy_(torch.from_numpy(rng.normal(0.0, 0.2, tuple(p.shape)).astype(np.float32)))
        adapted = smollm2_gguf.logprobs(pairs_p, pairs_c, per_token=True)
        greedy = smollm2_gguf.generate(PROMPTS[:2], max_new_tokens=8)
        peft_model.save_pretrained(str(tmp_path / "step-000001"), save_embedding_layers=False)
    finally:
        peft_model.unload()
        for name, p in smollm2_gguf.module.named_parameters():  # peft froze the base weights
            p.requires_grad_(trainable[name])
    assert all(np.array_equal(a, b) for a, b in zip(smollm2_gguf.logprobs(pairs_p, pairs_c, per_token=True), before))
    assert max(abs(a.sum() - b.sum()) for a, b in zip(adapted, before)) > 2.0  # the adapter matters
    for path, tolerance in ((float32_gguf, 0.02), (repro.llm.shipped_gguf("smollm2-135m"), 0.5)):
        lm = LlamaCppLM(path, n_threads=1).add_lora(tmp_path / "step-000001")
        try:
            ours = lm.logprobs(pairs_p, pairs_c, per_token=True)
            assert lm.describe()["adapters"] == ["step-000001 x1"] and lm.describe() in repro.llm.loaded_models()
            assert np.abs(np.concatenate([a - b for a, b in zip(ours, adapted)])).max() < tolerance, path
            if path == float32_gguf:
                assert lm.generate(PROMPTS[:2], max_new_tokens=8) == greedy
        finally:
            lm.close()
    with pytest.raises(ValueError, match="no peft LoRA adapter"):
        LlamaCppLM(float32_gguf, n_threads=1).add_lora(tmp_path)


def test_what_needs_torch_raises_unsupported_operation(cpp):
    for call in (lambda: cpp.hidden_states(["a b"], layers=[0]), lambda: cpp.module,
                 lambda: cpp.candidate_logprobs(["a"], [["b"]])):
        with pytest.raises(UnsupportedOperation, match="torch backend"):
            call()
    with pytest.raises(ValueError, match="torch backend"):
        repro.llm.load("tiny-facts", backend="llamacpp")
    with pytest.raises(ValueError, match="CPU"):
        repro.llm.load("smollm2-135m", backend="llamacpp", device="cuda")
    with pytest.raises(ValueError, match="expected torch or llamacpp"):
        repro.llm.load("smollm2-135m", backend="vllm")


def test_a_bad_gguf_path_names_the_file(tmp_path):
    missing = tmp_path / "nowhere.gguf"
    with pytest.raises(ValueError, match="nowhere.gguf does not exist"):
        repro.llm.load(missing, backend="llamacpp")
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    with pytest.raises(ValueError, match="notes.gguf is not a GGUF file"):
        repro.llm.load(text, backend="llamacpp")
    broken = tmp_path / "broken.gguf"
    with open(repro.llm.shipped_gguf("smollm2-135m"), "rb") as fh:
        broken.write_bytes(fh.read(4096))  # a truncated download
    with pytest.raises(ValueError, match=r"llama.cpp could not load .*broken.gguf"):
        repro.llm.load(broken, backend="llamacpp")


def test_llama_cpp_logs_to_the_logger_not_to_stdout(cpp, capfd, caplog):
    caplog.set_level(logging.DEBUG, logger="repro.llm.llamacpp.native")
    lm = LlamaCppLM(cpp.path, n_threads=1, n_ctx=1024)
    lm.generate(["Hello"], max_new_tokens=2)  # builds a context: llama.cpp logs its shape
    lm.close()
    out, err = capfd.readouterr()
    assert "llama_" not in out and "llama_" not in err
    assert any("llama_context" in r.getMessage() for r in caplog.records if r.name == "repro.llm.llamacpp.native")
