# toolgap: "Model-Adaptive Tool Necessity Reveals the Knowing-Doing Gap in LLM Tool Use" (arXiv 2605.14038).
# Arithmetic with a calculator and factual QA (generated knowledge base, or TruthfulQA with source: local)
# with a lookup tool; SmolLM2 (prompted, through repro.llm) and tiny transformers trained here.
# DAG: data -> train (tiny models) -> evaluate {model} (both tasks: necessity, behaviour, hidden states,
#      probes) -> aggregate (metrics.json, tables) -> fig1, fig2, table1.
from repro.papers.toolgap import grid as toolgap_grid

TOOLGAP_SOURCES = ("synthetic", "local")  # local: the factual task reads a user-supplied TruthfulQA CSV


register_targets(
    "toolgap",
    [
        "reports/toolgap_fig1.pdf",
        "reports/toolgap_fig2.pdf",
        "reports/toolgap_table1.csv",
        "reports/toolgap_table1.md",
        "results/toolgap/metrics.json",
    ],
    sources=TOOLGAP_SOURCES,
)


for _scale in ("smoke", "small", "paper"):
    toolgap_grid.check_preset(config["toolgap"][_scale], f"toolgap.{_scale}")


rule toolgap_data:
    input:
        # source local: the user's TruthfulQA CSV is an input, so that editing it rebuilds what reads it
        truthfulqa=lambda wc: (
            [preset("toolgap", "truthfulqa", "csv")] if source_of("toolgap", TOOLGAP_SOURCES) == "local" else []
        ),
    output:
        data="results/toolgap/data.json",
    log:
        logs("toolgap/data"),
    benchmark:
        bench("toolgap/data")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: toolgap_grid.data_config(preset("toolgap"), source_of("toolgap", TOOLGAP_SOURCES)),
        source=lambda wc: source_of("toolgap", TOOLGAP_SOURCES),
    script:
        "../scripts/toolgap/data.py"


rule toolgap_train:
    input:
        data=rules.toolgap_data.output.data,
    output:
        model="results/toolgap/models/{model}/model.safetensors",
        config="results/toolgap/models/{model}/config.json",
        loss="results/toolgap/models/{model}/loss.json",
    log:
        logs("toolgap/train/{model}"),
    benchmark:
        bench("toolgap/train/{model}")
    wildcard_constraints:
        model=r"tiny-[\w.-]+",
    conda:
        "../../envs/torch.yaml"
    # one thread: two OpenMP threads spin-wait each other on a busy node (see repro.llm's benchmark)
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wc: preset("toolgap", "runtime_min"),
    params:
        cfg=lambda wc: toolgap_grid.train_config(preset("toolgap"), wc.model),
        device=config["device"],
    script:
        "../scripts/toolgap/train.py"


rule toolgap_evaluate:
    # one job per model, both tasks: the model loads once, and the probes read the hidden states in
    # memory (a job's Python + torch start-up is a few CPU-seconds, most of a smoke job's cost)
    input:
        data=rules.toolgap_data.output.data,
        model=lambda wc: toolgap_grid.model_input(preset("toolgap"), wc.model),
    output:
        runs=toolgap_grid.model_outputs(
            "results/toolgap/runs/{{model}}/{task}.json", source_of("toolgap", TOOLGAP_SOURCES)
        ),
        hidden=toolgap_grid.model_outputs(
            "results/toolgap/hidden/{{model}}/{task}.npz", source_of("toolgap", TOOLGAP_SOURCES)
        ),
        probes=toolgap_grid.model_outputs(
            "results/toolgap/probes/{{model}}/{task}.json", source_of("toolgap", TOOLGAP_SOURCES)
        ),
    log:
        logs("toolgap/evaluate/{model}"),
    benchmark:
        bench("toolgap/evaluate/{model}")
    wildcard_constraints:
        model=r"[\w.-]+",
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("toolgap", "runtime_min"),
    params:
        cfg=lambda wc: toolgap_grid.evaluate_config(preset("toolgap"), wc.model),
        tasks=toolgap_grid.tasks(None, source_of("toolgap", TOOLGAP_SOURCES)),
        device=config["device"],
    script:
        "../scripts/toolgap/evaluate.py"


rule toolgap_aggregate:
    input:
        runs=lambda wc: toolgap_grid.run_targets(preset("toolgap"), source_of("toolgap", TOOLGAP_SOURCES)),
        probes=lambda wc: toolgap_grid.probe_targets(preset("toolgap"), source_of("toolgap", TOOLGAP_SOURCES)),
        losses=lambda wc: toolgap_grid.loss_targets(preset("toolgap")),
        # the figures draw each claim's quantity with the interval it is decided on, written here
        claims=repo_path("workflow/claims/toolgap.yaml"),
        claims_schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/toolgap/metrics.json",
        table="results/toolgap/mismatch.csv",
        layers="results/toolgap/layers.csv",
        claims="results/toolgap/claim_intervals.csv",
    log:
        logs("toolgap/aggregate"),
    benchmark:
        bench("toolgap/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/toolgap/aggregate.py"


rule toolgap_fig1:
    input:
        table=rules.toolgap_aggregate.output.table,
        claims=rules.toolgap_aggregate.output.claims,
        upstream_logs=logs_of(rules.toolgap_aggregate),
    output:
        pdf=figure("toolgap", "fig1"),
        csv="reports/toolgap_fig1.csv",
    log:
        logs("toolgap/fig1"),
    benchmark:
        bench("toolgap/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/toolgap/fig1.py"


rule toolgap_fig2:
    input:
        layers=rules.toolgap_aggregate.output.layers,
        claims=rules.toolgap_aggregate.output.claims,
        upstream_logs=logs_of(rules.toolgap_aggregate),
    output:
        pdf=figure("toolgap", "fig2"),
        csv="reports/toolgap_fig2.csv",
    log:
        logs("toolgap/fig2"),
    benchmark:
        bench("toolgap/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/toolgap/fig2.py"


rule toolgap_table1:
    input:
        table=rules.toolgap_aggregate.output.table,
        upstream_logs=logs_of(rules.toolgap_aggregate),
    output:
        csv="reports/toolgap_table1.csv",
        md="reports/toolgap_table1.md",
    log:
        logs("toolgap/table1"),
    benchmark:
        bench("toolgap/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/toolgap/table1.py"
