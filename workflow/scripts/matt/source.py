"""matt_source: the source model and tokenizer (tiny: trained here; pretrained: SmolLM2), the target
tokenizer (the source vocabulary extended on Ukrainian), and the source model's own scores."""

from pathlib import Path

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.papers.matt import tokens
from repro.papers.matt.experiment import evaluate, heldout_texts, load_source, save_source, source_tokenizer, train_source

job = Job.from_snakemake(snakemake)
job.limit_threads()
cfg = job.cfg
data = read_json(snakemake.input.data)
out = Path(snakemake.output.target_tokenizer).parent
if cfg["kind"] == "tiny":
    src_tok = tokens.train_source_tokenizer(data["english"], cfg["source_vocab"])
    tgt_tok = tokens.extend_tokenizer(src_tok, data["ukrainian_train"], cfg["n_new"])
    model, losses = train_source(data["english"] + data["ukrainian_train"], src_tok, cfg["tiny"]["model"],
                                 cfg["tiny"]["steps"], cfg["tiny"]["batch_size"], cfg["tiny"]["lr"],
                                 job.seed_for("matt-source"))
    save_source(out, model, src_tok, tgt_tok)
    model_dir = out
else:
    model_dir = Path(snakemake.input.model).parent
    src_tok = source_tokenizer(cfg["kind"], model_dir)
    tgt_tok = tokens.extend_tokenizer(src_tok, data["ukrainian_train"], cfg["n_new"])
    losses = []
    out.mkdir(parents=True, exist_ok=True)
    tgt_tok.save(str(snakemake.output.target_tokenizer))
src = load_source(cfg["kind"], model_dir, out)
data["heldout"] = heldout_texts(src, data["ukrainian_heldout"], cfg["context"])
scores = evaluate(src.net, src.W_src, src.src_tok, src.bos, data, cfg["context"], cfg["max_new_tokens"])
write_json(snakemake.output.scores, {"scores": scores, "heldout": data["heldout"], "loss": losses,
                                     "n_new": len(src.new_ids), "source_vocab": len(src.W_src)})
