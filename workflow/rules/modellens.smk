# modellens: "ModelLens: Finding the Best for Your Task from Myriads of Models" (arXiv 2605.07075).
# DAG: text embeddings of every seed's synthetic leaderboard (MiniLM, loaded once) -> one run per
#      {seed}: every recommender + oracle + run-every-candidate, evaluated by split -> aggregate
#      (metrics.json, tidy tables) -> fig1 (NDCG@K by split), fig2 (regret vs cost), fig3 (routing), table1.
# The seed is the unit of every claim; every method of a seed sees the same leaderboard and seed.
from repro.papers.modellens import grid as modellens_grid


register_targets(
    "modellens",
    [
        "reports/modellens_fig1.pdf",
        "reports/modellens_fig2.pdf",
        "reports/modellens_fig3.pdf",
        "reports/modellens_table1.csv",
        "reports/modellens_table1.md",
        "results/modellens/metrics.json",
    ],
)


rule modellens_embed:
    output:
        emb="results/modellens/text_embeddings.npz",
    log:
        "logs/modellens/embed.log",
    benchmark:
        "benchmarks/modellens/embed.tsv"
    params:
        cfg=lambda wc: modellens_grid.embed_config(preset("modellens")),
    threads: 1
    resources:
        mem_mb=3000,
        runtime=20,
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/modellens/embed.py"


rule modellens_run:
    input:
        emb="results/modellens/text_embeddings.npz",
    output:
        run="results/modellens/runs/seed{seed}.json",
    log:
        "logs/modellens/runs/seed{seed}.log",
    benchmark:
        "benchmarks/modellens/runs/seed{seed}.tsv"
    wildcard_constraints:
        seed=r"[0-9]+",
    params:
        cfg=lambda wc: modellens_grid.run_config(preset("modellens")),
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/modellens/run.py"


rule modellens_aggregate:
    input:
        runs=lambda wc: modellens_grid.run_targets(preset("modellens")),
    output:
        metrics="results/modellens/metrics.json",
        tidy="results/modellens/summary.csv",
        regret="results/modellens/regret.csv",
        routing="results/modellens/routing.csv",
    log:
        "logs/modellens/aggregate.log",
    benchmark:
        "benchmarks/modellens/aggregate.tsv"
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/modellens/aggregate.py"


rule modellens_fig1:
    input:
        tidy="results/modellens/summary.csv",
    output:
        pdf=report("reports/modellens_fig1.pdf", caption="../report/modellens_fig1.rst", category="modellens"),
        csv="reports/modellens_fig1.csv",
    log:
        "logs/modellens/fig1.log",
    benchmark:
        "benchmarks/modellens/fig1.tsv"
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/modellens/fig1.py"


rule modellens_fig2:
    input:
        regret="results/modellens/regret.csv",
        routing="results/modellens/routing.csv",
    output:
        pdf=report("reports/modellens_fig2.pdf", caption="../report/modellens_fig2.rst", category="modellens"),
        csv="reports/modellens_fig2.csv",
    log:
        "logs/modellens/fig2.log",
    benchmark:
        "benchmarks/modellens/fig2.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/modellens/fig2.py"


rule modellens_fig3:
    input:
        routing="results/modellens/routing.csv",
    output:
        pdf=report("reports/modellens_fig3.pdf", caption="../report/modellens_fig3.rst", category="modellens"),
        csv="reports/modellens_fig3.csv",
    log:
        "logs/modellens/fig3.log",
    benchmark:
        "benchmarks/modellens/fig3.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/modellens/fig3.py"


rule modellens_table1:
    input:
        tidy="results/modellens/summary.csv",
    output:
        csv="reports/modellens_table1.csv",
        md="reports/modellens_table1.md",
    log:
        "logs/modellens/table1.log",
    benchmark:
        "benchmarks/modellens/table1.tsv"
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/modellens/table1.py"
