# immunize: immunization against harmful fine-tuning by plateau and curvature conditioning (issue 26).
# DAG: per {method}/seed{seed}: digits tasks + released extractor -> defence (immunize) -> attacks in the three
#      settings (open weights, fine-tuning as a service, relearning after unlearning); per seed{seed}: estimator
#      vs exact Hessian as the model grows -> aggregate (metrics.json, tidy tables) -> fig1, fig2, table1.
# The seed is the unit of every claim; every defence of a seed sees the same data, extractor and attack data.


register_targets(
    "immunize",
    ["reports/immunize_fig1.pdf", "reports/immunize_fig2.pdf", "reports/immunize_table1.csv",
     "reports/immunize_table1.md", "results/immunize/metrics.json"],
)


IMMUNIZE_SEEDS = range(preset("immunize", "seeds"))


rule immunize_defend:
    output:
        theta="results/immunize/defend/{method}/seed{seed}.npy",
        info="results/immunize/defend/{method}/seed{seed}.json",
    log:
        "logs/immunize/defend/{method}/seed{seed}.log",
    benchmark:
        "benchmarks/immunize/defend/{method}/seed{seed}.tsv"
    wildcard_constraints:
        seed=r"[0-9]+",
        method=r"[a-z]+",
    params:
        cfg=lambda wc: {k: preset("immunize", k) for k in ("data", "immunize")},
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/immunize/defend.py"


rule immunize_attack:
    input:
        theta="results/immunize/defend/{method}/seed{seed}.npy",
        info="results/immunize/defend/{method}/seed{seed}.json",
    output:
        unit="results/immunize/units/{method}/seed{seed}.json",
    log:
        "logs/immunize/attack/{method}/seed{seed}.log",
    benchmark:
        "benchmarks/immunize/attack/{method}/seed{seed}.tsv"
    wildcard_constraints:
        seed=r"[0-9]+",
        method=r"[a-z]+",
    params:
        cfg=lambda wc: {k: preset("immunize", k) for k in ("data", "adversary", "utility", "service", "relearn")},
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/immunize/attack.py"


rule immunize_scaling:
    output:
        rows="results/immunize/scaling/seed{seed}.json",
    log:
        "logs/immunize/scaling/seed{seed}.log",
    benchmark:
        "benchmarks/immunize/scaling/seed{seed}.tsv"
    wildcard_constraints:
        seed=r"[0-9]+",
    params:
        cfg=lambda wc: {k: preset("immunize", k) for k in ("data", "scaling")},
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    conda:
        "../../envs/torch.yaml"
    script:
        "../scripts/immunize/scaling.py"


rule immunize_aggregate:
    input:
        units=lambda wc: expand("results/immunize/units/{method}/seed{seed}.json",
                                method=preset("immunize", "methods"), seed=IMMUNIZE_SEEDS),
        scaling=lambda wc: expand("results/immunize/scaling/seed{seed}.json", seed=IMMUNIZE_SEEDS),
    output:
        metrics="results/immunize/metrics.json",
        tidy="results/immunize/summary.csv",
        curves="results/immunize/curves.csv",
        scaling="results/immunize/scaling.csv",
    log:
        "logs/immunize/aggregate.log",
    benchmark:
        "benchmarks/immunize/aggregate.tsv"
    params:
        cfg=lambda wc: {"methods": preset("immunize", "methods")},
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/immunize/aggregate.py"


rule immunize_fig1:
    input:
        curves="results/immunize/curves.csv",
    output:
        pdf=report("reports/immunize_fig1.pdf", caption="../report/immunize_fig1.rst", category="immunize"),
        csv="reports/immunize_fig1.csv",
    log:
        "logs/immunize/fig1.log",
    benchmark:
        "benchmarks/immunize/fig1.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/immunize/fig1.py"


rule immunize_fig2:
    input:
        tidy="results/immunize/summary.csv",
        scaling="results/immunize/scaling.csv",
    output:
        pdf=report("reports/immunize_fig2.pdf", caption="../report/immunize_fig2.rst", category="immunize"),
        csv="reports/immunize_fig2.csv",
    log:
        "logs/immunize/fig2.log",
    benchmark:
        "benchmarks/immunize/fig2.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/immunize/fig2.py"


rule immunize_table1:
    input:
        tidy="results/immunize/summary.csv",
    output:
        csv="reports/immunize_table1.csv",
        md="reports/immunize_table1.md",
    log:
        "logs/immunize/table1.log",
    benchmark:
        "benchmarks/immunize/table1.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs/stats.yaml"
    script:
        "../scripts/immunize/table1.py"
