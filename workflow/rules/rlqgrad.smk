# rlqgrad: "Modeling quantum neural network gradient with reinforcement learning" (RLQ-Grad).
# DAG: data (PCA of scikit-learn sets) -> agreement / variance / benchmark / train per n x method x seed
#      -> evaluate (metrics.json, tables) -> fig1 (barren plateau), fig2 (time and memory).

register_targets(
    "rlqgrad",
    [
        "reports/rlqgrad_fig1.pdf",
        "reports/rlqgrad_fig2.pdf",
        "reports/rlqgrad_table1.md",
        "reports/rlqgrad_table2.md",
        "results/rlqgrad/metrics.json",
    ],
    sources=("local",),
)

# The {method} wildcard: keys of repro.methods.rlqgrad.METHODS (spelt out: the registry imports torch).
RLQGRAD_METHODS = r"backprop|parameter_shift|adjoint|rlqgrad"


rule rlqgrad_data:
    output:
        data="results/rlqgrad/data/{dataset}.npz",
    log:
        logs("rlqgrad/data/{dataset}"),
    benchmark:
        bench("rlqgrad/data/{dataset}")
    wildcard_constraints:
        dataset=r"[a-z_]+",
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("rlqgrad", pca_dim=("model", "pca_dim")),
    script:
        "../scripts/rlqgrad/data.py"


rule rlqgrad_agreement:
    output:
        metrics="results/rlqgrad/agreement.json",
    log:
        logs("rlqgrad/agreement"),
    benchmark:
        bench("rlqgrad/agreement")
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: preset("rlqgrad", "agreement"),
    script:
        "../scripts/rlqgrad/agreement.py"


rule rlqgrad_variance:
    output:
        metrics="results/rlqgrad/variance/n{n}/{method}/seed{seed}.json",
    log:
        logs("rlqgrad/variance/n{n}/{method}/seed{seed}"),
    benchmark:
        bench("rlqgrad/variance/n{n}/{method}/seed{seed}")
    wildcard_constraints:
        n=r"\d+",
        method=RLQGRAD_METHODS,
        seed=r"\d+",
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice(
            "rlqgrad", "model", n_layers=("variance", "n_layers"), n_inits=("variance", "n_inits")
        ),
    script:
        "../scripts/rlqgrad/variance.py"


rule rlqgrad_benchmark:
    output:
        metrics="results/rlqgrad/benchmark/n{n}/{method}.json",
    log:
        logs("rlqgrad/benchmark/n{n}/{method}"),
    benchmark:
        bench("rlqgrad/benchmark/n{n}/{method}")
    wildcard_constraints:
        n=r"\d+",
        method=RLQGRAD_METHODS,
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice(
            "rlqgrad",
            "model",
            n_layers=("benchmark", "n_layers"),
            batch_size=("benchmark", "batch_size"),
            reps=("benchmark", "reps"),
            time_cap_s=("benchmark", "time_cap_s"),
        ),
    script:
        "../scripts/rlqgrad/benchmark.py"


rule rlqgrad_train:
    input:
        data="results/rlqgrad/data/{dataset}.npz",
    output:
        metrics="results/rlqgrad/train/{dataset}/n{n}/{method}/seed{seed}.json",
    log:
        logs("rlqgrad/train/{dataset}/n{n}/{method}/seed{seed}"),
    benchmark:
        bench("rlqgrad/train/{dataset}/n{n}/{method}/seed{seed}")
    wildcard_constraints:
        dataset=r"[a-z_]+",
        n=r"\d+",
        method=RLQGRAD_METHODS,
        seed=r"\d+",
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        cfg=lambda wc: preset_slice("rlqgrad", "model", n_layers=("train", "n_layers"), steps=("train", "steps")),
    script:
        "../scripts/rlqgrad/train.py"


# What rlqgrad_evaluate reads: the agreement check and every variance, benchmark and training run.
RLQGRAD_RUNS = {
    "agreement": ["results/rlqgrad/agreement.json"],
    "variance": expand(
        "results/rlqgrad/variance/n{n}/{method}/seed{seed}.json",
        n=preset("rlqgrad", "variance", "qubits"),
        method=preset("rlqgrad", "methods"),
        seed=preset("rlqgrad", "variance", "seeds"),
    ),
    "benchmark": expand(
        "results/rlqgrad/benchmark/n{n}/{method}.json",
        n=preset("rlqgrad", "benchmark", "qubits"),
        method=preset("rlqgrad", "methods"),
    ),
    "train": expand(
        "results/rlqgrad/train/{dataset}/n{n}/{method}/seed{seed}.json",
        dataset=preset("rlqgrad", "datasets"),
        n=preset("rlqgrad", "train", "qubits"),
        method=preset("rlqgrad", "methods"),
        seed=preset("rlqgrad", "seeds"),
    ),
}


rule rlqgrad_evaluate:
    input:
        agreement=RLQGRAD_RUNS["agreement"][0],
        variance=RLQGRAD_RUNS["variance"],
        benchmark=RLQGRAD_RUNS["benchmark"],
        train=RLQGRAD_RUNS["train"],
        # the claims' intervals of the slopes that fig1 draws are written beside its curves
        claims=repo_path("workflow/claims/rlqgrad.yaml"),
        claims_schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(
            rules.rlqgrad_agreement,
            rules.rlqgrad_variance,
            rules.rlqgrad_benchmark,
            rules.rlqgrad_train,
            files=[path for paths in RLQGRAD_RUNS.values() for path in paths],
        ),
    output:
        metrics="results/rlqgrad/metrics.json",
        variance="results/rlqgrad/variance.csv",
        cost="results/rlqgrad/cost.csv",
        table1="reports/rlqgrad_table1.md",
        table1_csv="reports/rlqgrad_table1.csv",
        table2="reports/rlqgrad_table2.md",
        table2_csv="reports/rlqgrad_table2.csv",
    log:
        logs("rlqgrad/evaluate"),
    benchmark:
        bench("rlqgrad/evaluate")
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/rlqgrad/evaluate.py"


rule rlqgrad_fig1:
    input:
        variance="results/rlqgrad/variance.csv",
        upstream_logs=logs_of(rules.rlqgrad_evaluate),
    output:
        pdf=figure("rlqgrad", "fig1"),
        csv="reports/rlqgrad_fig1.csv",
    log:
        logs("rlqgrad/fig1"),
    benchmark:
        bench("rlqgrad/fig1")
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/rlqgrad/fig1.py"


rule rlqgrad_fig2:
    input:
        cost="results/rlqgrad/cost.csv",
        upstream_logs=logs_of(rules.rlqgrad_evaluate),
    output:
        pdf=figure("rlqgrad", "fig2"),
        csv="reports/rlqgrad_fig2.csv",
    log:
        logs("rlqgrad/fig2"),
    benchmark:
        bench("rlqgrad/fig2")
    conda:
        "../../envs/quantum.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/rlqgrad/fig2.py"
