# matt: "Model-Aware Tokenizer Transfer" (arXiv 2510.21954). Source model + tokenizer (tiny, trained here
# at smoke; SmolLM2-135M at small and paper), a target tokenizer extended on Ukrainian text, then two
# protocols:
# - the paper's comparison (the claims' arm): from FOCUS, MATT (AIM only) against next-token training of
#   the new rows, matched on measured CPU time of the training loop, evaluated straight after;
# - the token-budget variant: new rows initialised by mean / FVT / FOCUS or FOCUS + a few AIM steps
#   (MATT), then next-token training to budgets of target tokens.
# DAG: data -> source (model, tokenisers, source scores) -> calibrate -> matched {arm}/{seed}
#                                                        -> transfer {method}/{seed}
#      -> aggregate (metrics.json, recovery.csv, matched.csv) -> fig1, table1, table2.

MATT_SEEDS = list(range(preset("matt", "seeds")))
MATT_ARMS = ["matt", "focus_ntp"]
MATT_KIND = preset("matt", "model", "kind")


register_targets(
    "matt",
    [
        "reports/matt_fig1.pdf",
        "reports/matt_table1.csv",
        "reports/matt_table1.md",
        "reports/matt_table2.csv",
        "reports/matt_table2.md",
        "results/matt/metrics.json",
    ],
)


# The source model's weights: trained by matt_source (tiny) or cached by llm_cache (pretrained)
MATT_MODEL_FILE = (
    "results/matt/source/model.safetensors"
    if MATT_KIND == "tiny"
    else f"resources/llm/{preset('matt', 'model', 'name')}/model.safetensors"
)


rule matt_data:
    output:
        data="results/matt/data.json",
    log:
        logs("matt/data"),
    benchmark:
        bench("matt/data")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: preset("matt", "data"),
    script:
        "../scripts/matt/data.py"


rule matt_source:
    input:
        data=rules.matt_data.output.data,
        model=[] if MATT_KIND == "tiny" else MATT_MODEL_FILE,
    output:
        target_tokenizer="results/matt/source/target_tokenizer.json",
        scores="results/matt/source/scores.json",
        # the tiny source model: its weights, the config its loader reads and its tokenizer
        model=(
            [
                "results/matt/source/model.safetensors",
                "results/matt/source/config.json",
                "results/matt/source/tokenizer.json",
            ]
            if MATT_KIND == "tiny"
            else []
        ),
    log:
        logs("matt/source"),
    benchmark:
        bench("matt/source")
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("matt", "runtime_min"),
    params:
        cfg=lambda wc: {
            **preset("matt", "model"),
            **preset_slice("matt", context=("transfer", "context"), max_new_tokens=("transfer", "max_new_tokens")),
        },
    script:
        "../scripts/matt/source.py"


rule matt_transfer:
    input:
        data=rules.matt_data.output.data,
        scores=rules.matt_source.output.scores,
        model=MATT_MODEL_FILE,
    output:
        run="results/matt/runs/{method}/{seed}.json",
    log:
        logs("matt/transfer/{method}/{seed}"),
    benchmark:
        bench("matt/transfer/{method}/{seed}")
    wildcard_constraints:
        method=r"mean|fvt|focus|matt",
        seed=r"\d+",
    conda:
        "../../envs/llm.yaml"
    # one thread: CPU-seconds are the budget, and two OpenMP threads spin-wait each other on a busy node
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("matt", "runtime_min"),
    params:
        cfg=lambda wc: {**preset("matt", "transfer"), "kind": MATT_KIND},
    script:
        "../scripts/matt/transfer.py"


# The part of the preset that the paper's comparison reads (not the variant's budgets or methods)
MATT_MATCHED_KEYS = ("context", "batch_size", "max_new_tokens", "lr", "aux_dim", "aim")
MATT_MATCHED_CFG = lambda wc: {
    **preset_slice("matt", "matched", **{k: ("transfer", k) for k in MATT_MATCHED_KEYS}),
    "kind": MATT_KIND,
}


rule matt_calibrate:
    input:
        data=rules.matt_data.output.data,
        scores=rules.matt_source.output.scores,
        model=MATT_MODEL_FILE,
    output:
        calibration="results/matt/matched/calibration.json",
    log:
        logs("matt/calibrate"),
    benchmark:
        bench("matt/calibrate")
    conda:
        "../../envs/llm.yaml"
    # one thread, as the arms it calibrates
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("matt", "runtime_min"),
    params:
        cfg=MATT_MATCHED_CFG,
    script:
        "../scripts/matt/calibrate.py"


rule matt_matched:
    input:
        data=rules.matt_data.output.data,
        scores=rules.matt_source.output.scores,
        model=MATT_MODEL_FILE,
        calibration=rules.matt_calibrate.output.calibration,
    output:
        run="results/matt/matched/{arm}/{seed}.json",
    log:
        logs("matt/matched/{arm}/{seed}"),
    benchmark:
        bench("matt/matched/{arm}/{seed}")
    wildcard_constraints:
        arm=r"matt|focus_ntp",
        seed=r"\d+",
    conda:
        "../../envs/llm.yaml"
    # one thread: its training loop's CPU-seconds are the compute matched between the arms
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("matt", "runtime_min"),
    params:
        cfg=MATT_MATCHED_CFG,
    script:
        "../scripts/matt/matched.py"


rule matt_aggregate:
    input:
        scores=rules.matt_source.output.scores,
        runs=lambda wc: expand(
            "results/matt/runs/{method}/{seed}.json", method=preset("matt", "methods"), seed=MATT_SEEDS
        ),
        matched=lambda wc: expand("results/matt/matched/{arm}/{seed}.json", arm=MATT_ARMS, seed=MATT_SEEDS),
        calibration=rules.matt_calibrate.output.calibration,
        # fig1 draws the claims on the token-budget variant with their intervals, written here
        claims=repo_path("workflow/claims/matt.yaml"),
        claims_schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/matt/metrics.json",
        table="results/matt/recovery.csv",
        matched="results/matt/matched.csv",
        comparisons="results/matt/comparisons.csv",
    log:
        logs("matt/aggregate"),
    benchmark:
        bench("matt/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/matt/aggregate.py"


rule matt_fig1:
    input:
        table=rules.matt_aggregate.output.table,
        comparisons=rules.matt_aggregate.output.comparisons,
        upstream_logs=logs_of(rules.matt_aggregate),
    output:
        pdf=figure("matt", "fig1"),
        csv="reports/matt_fig1.csv",
    log:
        logs("matt/fig1"),
    benchmark:
        bench("matt/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/matt/fig1.py"


rule matt_table1:
    input:
        table=rules.matt_aggregate.output.table,
        upstream_logs=logs_of(rules.matt_aggregate),
    output:
        csv="reports/matt_table1.csv",
        md="reports/matt_table1.md",
    log:
        logs("matt/table1"),
    benchmark:
        bench("matt/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/matt/table1.py"


rule matt_table2:
    input:
        table=rules.matt_aggregate.output.matched,
        upstream_logs=logs_of(rules.matt_aggregate),
    output:
        csv="reports/matt_table2.csv",
        md="reports/matt_table2.md",
    log:
        logs("matt/table2"),
    benchmark:
        bench("matt/table2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/matt/table2.py"
