# grokcap: "Model Capacity Determines Grokking through Competing Memorisation and Generalisation
# Speeds" (arXiv 2605.09724). Small transformers on modular division across widths:
# T_mem(P) on random labels, T_gen(P) on the task, their crossing, the grokking threshold, capacity.
# DAG: data (per seed) -> train (task x width x seed) -> aggregate -> fig1, fig2, fig3, table1.
from repro.papers.grokcap import grid as grokcap_grid

register_targets(
    "grokcap",
    [
        "reports/grokcap_fig1.pdf",
        "reports/grokcap_fig2.pdf",
        "reports/grokcap_fig3.pdf",
        "reports/grokcap_table1.csv",
        "reports/grokcap_table1.md",
        "results/grokcap/metrics.json",
    ],
)


rule grokcap_data:
    output:
        data="results/grokcap/data/seed{seed}.npz",
    log:
        logs("grokcap/data/seed{seed}"),
    benchmark:
        bench("grokcap/data/seed{seed}")
    wildcard_constraints:
        seed=r"\d+",
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cfg=lambda wc: grokcap_grid.data_config(preset("grokcap")),
    script:
        "../scripts/grokcap/data.py"


rule grokcap_train:
    input:
        data="results/grokcap/data/seed{seed}.npz",
    output:
        run="results/grokcap/runs/{task}/w{width}_s{seed}.json",
    log:
        logs("grokcap/train/{task}/w{width}_s{seed}"),
    benchmark:
        bench("grokcap/train/{task}/w{width}_s{seed}")
    wildcard_constraints:
        task="modular|random|capacity",
        width=r"\d+",
        seed=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wc: preset("grokcap", "runtime_min"),
    params:
        cfg=lambda wc: grokcap_grid.train_config(preset("grokcap")),
        device=config["device"],
    script:
        "../scripts/grokcap/train.py"


rule grokcap_aggregate:
    input:
        runs=lambda wc: grokcap_grid.run_targets(preset("grokcap")),
    output:
        metrics="results/grokcap/metrics.json",
        runs="results/grokcap/runs.csv",
        curves="results/grokcap/curves.csv",
    log:
        logs("grokcap/aggregate"),
    benchmark:
        bench("grokcap/aggregate")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: grokcap_grid.aggregate_config(preset("grokcap")),
    script:
        "../scripts/grokcap/aggregate.py"


rule grokcap_fig1:
    input:
        metrics="results/grokcap/metrics.json",
        runs="results/grokcap/runs.csv",
        upstream_logs=logs_of(rules.grokcap_aggregate),
    output:
        pdf=figure("grokcap", "fig1"),
        csv="reports/grokcap_fig1.csv",
    log:
        logs("grokcap/fig1"),
    benchmark:
        bench("grokcap/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/grokcap/fig1.py"


rule grokcap_fig2:
    input:
        metrics="results/grokcap/metrics.json",
        curves="results/grokcap/curves.csv",
        upstream_logs=logs_of(rules.grokcap_aggregate),
    output:
        pdf=figure("grokcap", "fig2"),
        csv="reports/grokcap_fig2.csv",
    log:
        logs("grokcap/fig2"),
    benchmark:
        bench("grokcap/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/grokcap/fig2.py"


rule grokcap_fig3:
    input:
        metrics="results/grokcap/metrics.json",
        runs="results/grokcap/runs.csv",
        upstream_logs=logs_of(rules.grokcap_aggregate),
    output:
        pdf=figure("grokcap", "fig3"),
        csv="reports/grokcap_fig3.csv",
    log:
        logs("grokcap/fig3"),
    benchmark:
        bench("grokcap/fig3")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/grokcap/fig3.py"


rule grokcap_table1:
    input:
        metrics="results/grokcap/metrics.json",
        upstream_logs=logs_of(rules.grokcap_aggregate),
    output:
        csv="reports/grokcap_table1.csv",
        md="reports/grokcap_table1.md",
    log:
        logs("grokcap/table1"),
    benchmark:
        bench("grokcap/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/grokcap/table1.py"
