# evalmeta: "Models That Know How Evaluations Are Designed Score Safer" (arXiv 2605.28591).
# Seven-trait corpus, its word-matched control and a topic-only control (our addition); LoRA on each
# (shared seeds, best held-out checkpoint); templated stand-ins for the five safety suites scored by
# the shared judge (and by log-probabilities, a labelled variant); awareness on four levels.
# DAG: data -> base (tiny, smoke only; else llm_cache) -> finetune {corpus} x {seed}
#      -> evaluate {model} x {seed} -> aggregate (metrics.json) -> table1, fig1, fig2.
# Diagnostic (not a paper claim): probe_data -> probe {model} x {seed} (log-probabilities of the
#      tuned adapters: absorption of fresh documents, true/false statements) -> table2 (probe.json).
from repro.papers.evalmeta import grid as evalmeta_grid

EVALMETA_SOURCES = ("synthetic", "local")  # local: benchmark items from a user-supplied JSONL file


register_targets(
    "evalmeta",
    [
        "reports/evalmeta_table1.csv",
        "reports/evalmeta_table1.md",
        "reports/evalmeta_fig1.pdf",
        "reports/evalmeta_fig2.pdf",
        "results/evalmeta/metrics.json",
        "reports/evalmeta_table2.csv",
        "reports/evalmeta_table2.md",
    ],
    sources=EVALMETA_SOURCES,
)


for _scale in ("smoke", "small", "paper"):
    evalmeta_grid.check_preset(config["evalmeta"][_scale], f"evalmeta.{_scale}")


rule evalmeta_data:
    input:
        # source local: the user's items file is an input, so that editing it rebuilds what reads it
        items_jsonl=lambda wc: (
            [preset("evalmeta", "items_jsonl")] if source_of("evalmeta", EVALMETA_SOURCES) == "local" else []
        ),
    output:
        data="results/evalmeta/data.json",
    log:
        logs("evalmeta/data"),
    benchmark:
        bench("evalmeta/data")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: evalmeta_grid.data_config(preset("evalmeta")),
        source=lambda wc: source_of("evalmeta", EVALMETA_SOURCES),
        items_jsonl=lambda wc: preset("evalmeta", "items_jsonl"),
    script:
        "../scripts/evalmeta/data.py"


rule evalmeta_base:
    input:
        data=rules.evalmeta_data.output.data,
    output:
        model="results/evalmeta/base/model.safetensors",
        config="results/evalmeta/base/config.json",
        loss="results/evalmeta/base/loss.json",
    log:
        logs("evalmeta/base"),
    benchmark:
        bench("evalmeta/base")
    conda:
        "../../envs/torch.yaml"
    # one thread: two OpenMP threads spin-wait each other on a busy node (see repro.llm's benchmark)
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wc: preset("evalmeta", "runtime_min"),
    params:
        cfg=lambda wc: evalmeta_grid.base_config(preset("evalmeta")),
    script:
        "../scripts/evalmeta/base.py"


rule evalmeta_finetune:
    input:
        data=rules.evalmeta_data.output.data,
        base=lambda wc: evalmeta_grid.base_input(preset("evalmeta")),
    output:
        # the best checkpoint's folder: the adapter's weights and config (what load_lora reads), its state
        adapter=directory("results/evalmeta/lora/{corpus}/seed{seed}/best"),
        summary="results/evalmeta/lora/{corpus}/seed{seed}/train.json",
        # the resumable state (each checkpoint carries its configuration's hash and held-out losses);
        # declared, so Snakemake removes it before a rerun and with --delete-all-output
        checkpoints=directory("results/evalmeta/lora/{corpus}/seed{seed}/checkpoints"),
    log:
        logs("evalmeta/finetune/{corpus}/seed{seed}"),
    benchmark:
        bench("evalmeta/finetune/{corpus}/seed{seed}")
    wildcard_constraints:
        corpus="|".join(evalmeta_grid.CORPORA),
        seed=r"\d+",
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("evalmeta", "runtime_min"),
    params:
        cfg=lambda wc: evalmeta_grid.finetune_config(preset("evalmeta")),
        device=config["device"],
    script:
        "../scripts/evalmeta/finetune.py"


rule evalmeta_evaluate:
    input:
        unpack(lambda wc: evalmeta_grid.evaluate_inputs(preset("evalmeta"), wc.model, wc.seed)),
        data=rules.evalmeta_data.output.data,
    output:
        responses="results/evalmeta/responses/{model}/seed{seed}.json",
    log:
        logs("evalmeta/evaluate/{model}/seed{seed}"),
    benchmark:
        bench("evalmeta/evaluate/{model}/seed{seed}")
    wildcard_constraints:
        model="|".join(evalmeta_grid.MODELS),
        seed=r"\d+",
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("evalmeta", "runtime_min"),
    params:
        cfg=lambda wc: evalmeta_grid.evaluate_config(preset("evalmeta")),
        llm=lambda wc: preset("llm") if preset("evalmeta", "judge", "kind") == "model" else None,
        device=config["device"],
    script:
        "../scripts/evalmeta/evaluate.py"


rule evalmeta_aggregate:
    input:
        responses=lambda wc: evalmeta_grid.response_targets(preset("evalmeta")),
        training=lambda wc: evalmeta_grid.training_targets(preset("evalmeta")),
    output:
        metrics="results/evalmeta/metrics.json",
        table="results/evalmeta/rates.csv",
        shifts="results/evalmeta/shifts.csv",
    log:
        logs("evalmeta/aggregate"),
    benchmark:
        bench("evalmeta/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/evalmeta/aggregate.py"


rule evalmeta_table1:
    input:
        table=rules.evalmeta_aggregate.output.table,
        upstream_logs=logs_of(rules.evalmeta_aggregate),
    output:
        csv="reports/evalmeta_table1.csv",
        md="reports/evalmeta_table1.md",
    log:
        logs("evalmeta/table1"),
    benchmark:
        bench("evalmeta/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/evalmeta/table1.py"


rule evalmeta_fig1:
    input:
        shifts=rules.evalmeta_aggregate.output.shifts,
        upstream_logs=logs_of(rules.evalmeta_aggregate),
    output:
        pdf=figure("evalmeta", "fig1"),
        csv="reports/evalmeta_fig1.csv",
    log:
        logs("evalmeta/fig1"),
    benchmark:
        bench("evalmeta/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/evalmeta/fig1.py"


rule evalmeta_fig2:
    input:
        shifts=rules.evalmeta_aggregate.output.shifts,
        upstream_logs=logs_of(rules.evalmeta_aggregate),
    output:
        pdf=figure("evalmeta", "fig2"),
        csv="reports/evalmeta_fig2.csv",
    log:
        logs("evalmeta/fig2"),
    benchmark:
        bench("evalmeta/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/evalmeta/fig2.py"


# ---- knowledge probe of the tuned adapters (a diagnostic of the FAILs' cause, not a paper claim)
rule evalmeta_probe_data:
    input:
        data=rules.evalmeta_data.output.data,
    output:
        data="results/evalmeta/probe/data.json",
    log:
        logs("evalmeta/probe_data"),
    benchmark:
        bench("evalmeta/probe_data")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: evalmeta_grid.probe_data_config(preset("evalmeta")),
    script:
        "../scripts/evalmeta/probe_data.py"


rule evalmeta_probe:
    input:
        unpack(lambda wc: evalmeta_grid.evaluate_inputs(preset("evalmeta"), wc.model, wc.seed)),
        probe_data=rules.evalmeta_probe_data.output.data,
    output:
        probe="results/evalmeta/probe/{model}/seed{seed}.json",
    log:
        logs("evalmeta/probe/{model}/seed{seed}"),
    benchmark:
        bench("evalmeta/probe/{model}/seed{seed}")
    wildcard_constraints:
        model="|".join(evalmeta_grid.MODELS),
        seed=r"\d+",
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("evalmeta", "runtime_min"),
    params:
        cfg=lambda wc: evalmeta_grid.probe_config(preset("evalmeta")),
        device=config["device"],
    script:
        "../scripts/evalmeta/probe.py"


rule evalmeta_table2:
    input:
        runs=lambda wc: evalmeta_grid.probe_targets(preset("evalmeta")),
        probe_data=rules.evalmeta_probe_data.output.data,
        upstream_logs=lambda wc: logs_of(rules.evalmeta_probe, files=evalmeta_grid.probe_targets(preset("evalmeta")))
        + logs_of(rules.evalmeta_probe_data),
    output:
        metrics="results/evalmeta/probe.json",
        csv="reports/evalmeta_table2.csv",
        md="reports/evalmeta_table2.md",
    log:
        logs("evalmeta/table2"),
    benchmark:
        bench("evalmeta/table2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/evalmeta/probe_summary.py"
