# driftbench: "DriftBench: Models Recall What They Violate" (arXiv 2604.28031).
# Briefs with machine-checkable constraints; four conditions played against each model (scripted
# agents with planted behaviour, SmolLM2 through repro.llm); rubric judge and rule-based checker;
# restatement probe; KBV, complexity inflation, judge under-detection.
# DAG: run {model}/{condition} -> judge {model}/{condition} -> aggregate -> fig1, fig2, table1.
# source: remote reads a released folder (briefs, transcripts, scores) instead of run + judge.
from repro.papers.driftbench import grid as driftbench_grid

DRIFTBENCH_SOURCES = ("synthetic", "remote")


register_targets(
    "driftbench",
    [
        "reports/driftbench_fig1.pdf",
        "reports/driftbench_fig2.pdf",
        "reports/driftbench_table1.csv",
        "reports/driftbench_table1.md",
        "results/driftbench/metrics.json",
    ],
    sources=DRIFTBENCH_SOURCES,
)


for _scale in ("smoke", "small", "paper"):
    driftbench_grid.check_preset(config["driftbench"][_scale], f"driftbench.{_scale}")


rule driftbench_run:
    input:
        weights=lambda wc: driftbench_grid.model_input(preset("driftbench"), wc.model),
    output:
        transcripts="results/driftbench/transcripts/{model}/{condition}.jsonl",
    log:
        logs("driftbench/run/{model}/{condition}"),
    benchmark:
        bench("driftbench/run/{model}/{condition}")
    wildcard_constraints:
        model=r"[\w.-]+",
        condition="|".join(driftbench_grid.CONDITIONS),
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=lambda wc: preset("driftbench", "runtime_min"),
    params:
        cfg=lambda wc: driftbench_grid.run_config(preset("driftbench"), wc.model),
        device=config["device"],
    script:
        "../scripts/driftbench/run.py"


rule driftbench_judge:
    input:
        transcripts=rules.driftbench_run.output.transcripts,
        weights=lambda wc: driftbench_grid.judge_input(preset("driftbench")),
    output:
        scores="results/driftbench/scores/{model}/{condition}.jsonl",
    log:
        logs("driftbench/judge/{model}/{condition}"),
    benchmark:
        bench("driftbench/judge/{model}/{condition}")
    wildcard_constraints:
        model=r"[\w.-]+",
        condition="|".join(driftbench_grid.CONDITIONS),
    conda:
        "../../envs/llm.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=lambda wc: preset("driftbench", "runtime_min"),
    params:
        cfg=lambda wc: driftbench_grid.judge_config(preset("driftbench")),
        device=config["device"],
    script:
        "../scripts/driftbench/judge.py"


rule driftbench_release:
    input:
        driftbench_grid.release_files(config["driftbench"]["release_dir"]),
    output:
        release=driftbench_grid.RELEASE,
    log:
        logs("driftbench/release"),
    benchmark:
        bench("driftbench/release")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        folder=lambda wc: config["driftbench"]["release_dir"],
    script:
        "../scripts/driftbench/release.py"


rule driftbench_aggregate:
    input:
        unpack(
            lambda wc: driftbench_grid.aggregate_input(
                preset("driftbench"), source_of("driftbench", DRIFTBENCH_SOURCES)
            )
        ),
    output:
        metrics="results/driftbench/metrics.json",
        runs="results/driftbench/runs.csv",
        recall="results/driftbench/recall.csv",
        table="results/driftbench/kbv.csv",
    log:
        logs("driftbench/aggregate"),
    benchmark:
        bench("driftbench/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        source=lambda wc: source_of("driftbench", DRIFTBENCH_SOURCES),
        briefs=lambda wc: preset("driftbench", "briefs"),
        under_test=lambda wc: driftbench_grid.under_test(preset("driftbench")),
    script:
        "../scripts/driftbench/aggregate.py"


rule driftbench_fig1:
    input:
        runs=rules.driftbench_aggregate.output.runs,
        recall=rules.driftbench_aggregate.output.recall,
        upstream_logs=logs_of(rules.driftbench_aggregate),
    output:
        pdf=figure("driftbench", "fig1"),
        csv="reports/driftbench_fig1.csv",
    log:
        logs("driftbench/fig1"),
    benchmark:
        bench("driftbench/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/driftbench/fig1.py"


rule driftbench_fig2:
    input:
        table=rules.driftbench_aggregate.output.table,
        upstream_logs=logs_of(rules.driftbench_aggregate),
    output:
        pdf=figure("driftbench", "fig2"),
        csv="reports/driftbench_fig2.csv",
    log:
        logs("driftbench/fig2"),
    benchmark:
        bench("driftbench/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/driftbench/fig2.py"


rule driftbench_table1:
    input:
        table=rules.driftbench_aggregate.output.table,
        upstream_logs=logs_of(rules.driftbench_aggregate),
    output:
        csv="reports/driftbench_table1.csv",
        md="reports/driftbench_table1.md",
    log:
        logs("driftbench/table1"),
    benchmark:
        bench("driftbench/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/driftbench/table1.py"
