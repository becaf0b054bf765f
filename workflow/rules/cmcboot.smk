# cmcboot: "Model-based Bootstrap of Controlled Markov Chains" (arXiv 2605.12410).
# Coverage of model-based bootstrap, episodic bootstrap and plug-in CLT intervals on RiverSwim.
# DAG: truth (the chain and its true targets) -> intervals per {setting}/{method}/chunk{chunk}
#      -> aggregate (metrics.json, long table) -> fig1, fig2, table1.
# Each rule's params hold only the preset keys it reads (repro.papers.cmcboot.grid), so editing a
# key reruns only the jobs that read it.
from repro.papers.cmcboot import grid as cmcboot_grid

register_targets(
    "cmcboot",
    [
        "reports/cmcboot_fig1.pdf",
        "reports/cmcboot_fig2.pdf",
        "reports/cmcboot_table1.csv",
        "reports/cmcboot_table1.md",
        "results/cmcboot/metrics.json",
    ],
)


rule cmcboot_truth:
    output:
        truth="results/cmcboot/truth.json",
    log:
        logs("cmcboot/truth"),
    benchmark:
        bench("cmcboot/truth")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: cmcboot_grid.preset_part(preset("cmcboot"), cmcboot_grid.TRUTH_KEYS),
    script:
        "../scripts/cmcboot/truth.py"


rule cmcboot_intervals:
    input:
        truth=rules.cmcboot_truth.output.truth,
    output:
        chunk="results/cmcboot/chunks/{setting}/{method}/chunk{chunk}.json",
    log:
        logs("cmcboot/intervals/{setting}/{method}/chunk{chunk}"),
    benchmark:
        bench("cmcboot/intervals/{setting}/{method}/chunk{chunk}")
    wildcard_constraints:
        setting=r"n\d+_h\d+_[a-z]+",
        method=r"[a-z]+",
        chunk=r"\d+",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cfg=lambda wc: cmcboot_grid.preset_part(preset("cmcboot"), cmcboot_grid.INTERVAL_KEYS),
    script:
        "../scripts/cmcboot/intervals.py"


rule cmcboot_aggregate:
    input:
        chunks=lambda wc: expand(
            "results/cmcboot/chunks/{setting}/{method}/chunk{chunk}.json",
            setting=cmcboot_grid.settings(preset("cmcboot")),
            method=preset("cmcboot", "methods"),
            chunk=range(preset("cmcboot", "n_chunks")),
        ),
    output:
        metrics="results/cmcboot/metrics.json",
        table="results/cmcboot/coverage_long.csv",
    log:
        logs("cmcboot/aggregate"),
    benchmark:
        bench("cmcboot/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: cmcboot_grid.preset_part(preset("cmcboot"), cmcboot_grid.AGGREGATE_KEYS),
    script:
        "../scripts/cmcboot/aggregate.py"


rule cmcboot_fig1:
    input:
        table=rules.cmcboot_aggregate.output.table,
        upstream_logs=logs_of(rules.cmcboot_aggregate),
    output:
        pdf=figure("cmcboot", "fig1"),
        csv="reports/cmcboot_fig1.csv",
    log:
        logs("cmcboot/fig1"),
    benchmark:
        bench("cmcboot/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("cmcboot", "episode_length"),
    script:
        "../scripts/cmcboot/fig1.py"


rule cmcboot_fig2:
    input:
        table=rules.cmcboot_aggregate.output.table,
        upstream_logs=logs_of(rules.cmcboot_aggregate),
    output:
        pdf=figure("cmcboot", "fig2"),
        csv="reports/cmcboot_fig2.csv",
    log:
        logs("cmcboot/fig2"),
    benchmark:
        bench("cmcboot/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("cmcboot", "fig2_sample_size"),
    script:
        "../scripts/cmcboot/fig2.py"


rule cmcboot_table1:
    input:
        table=rules.cmcboot_aggregate.output.table,
        upstream_logs=logs_of(rules.cmcboot_aggregate),
    output:
        csv="reports/cmcboot_table1.csv",
        md="reports/cmcboot_table1.md",
    log:
        logs("cmcboot/table1"),
    benchmark:
        bench("cmcboot/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/cmcboot/table1.py"


# Not a paper target: time of the model-based bootstrap (n_boot chains of n_steps steps), for the
# paper's page (docs/papers/cmcboot.md). `snakemake results/cmcboot/bench.json`.
rule cmcboot_bench:
    output:
        bench="results/cmcboot/bench.json",
    log:
        logs("cmcboot/bench"),
    benchmark:
        bench("cmcboot/bench")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        n_boot=1000,
        n_steps=10000,
    script:
        "../scripts/cmcboot/bench.py"
