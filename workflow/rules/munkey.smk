# munkey: "Rethinking Machine Unlearning: Models Designed to Forget via Key Deletion" (arXiv 2603.15033).
# DAG: (remote regime only) fetch the user's image set, checked by sha256 -> one run per {regime}/{forget_set}/seed{seed}:
#      data with planted canaries -> memory model and ordinary model -> key deletion, kNN, post-hoc baselines
#      (fine-tune, NegGrad+, random labels, SCRUB, SalUn), both retrain oracles, loss and shadow-model MIA;
#      one key-deletion sweep per {regime}/seed{seed} -> aggregate (metrics.json, tidy tables) -> table1, fig1.
# The seed is the unit of every claim; every method of a seed sees the same data, forget set and training seed.


register_targets(
    "munkey",
    ["reports/munkey_fig1.pdf", "reports/munkey_table1.csv", "reports/munkey_table1.md", "results/munkey/metrics.json"],
)


MUNKEY_SEEDS = range(preset("munkey", "seeds"))
MUNKEY_REMOTE = "results/munkey/data/remote.npz"


# the fetched image set, for the remote regime only (the others are generated or ship offline)
munkey_data = lambda wc: (
    {"data": MUNKEY_REMOTE, "data_sha256": sidecar(MUNKEY_REMOTE)} if wc.regime == "remote" else {}
)


rule munkey_fetch:
    output:
        data=MUNKEY_REMOTE,
        data_sha256=sidecar(MUNKEY_REMOTE),
    log:
        logs("munkey/fetch"),
    benchmark:
        bench("munkey/fetch")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice("munkey", "remote"),
    script:
        "../scripts/munkey/fetch.py"


rule munkey_run:
    input:
        unpack(munkey_data),
    output:
        run="results/munkey/runs/{regime}/{forget_set}/seed{seed}.json",
    log:
        logs("munkey/run/{regime}/{forget_set}/seed{seed}"),
    benchmark:
        bench("munkey/run/{regime}/{forget_set}/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
        regime=r"[a-z0-9]+",
        forget_set=r"[a-z0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice("munkey", "data", "model", "unlearn", "forget_sets", "baselines"),
    script:
        "../scripts/munkey/run.py"


rule munkey_sweep:
    input:
        unpack(munkey_data),
    output:
        sweep="results/munkey/sweep/{regime}/seed{seed}.json",
    log:
        logs("munkey/sweep/{regime}/seed{seed}"),
    benchmark:
        bench("munkey/sweep/{regime}/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
        regime=r"[a-z0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice("munkey", "data", "model", "sweep_fractions"),
    script:
        "../scripts/munkey/sweep.py"


rule munkey_aggregate:
    input:
        runs=lambda wc: expand(
            "results/munkey/runs/{regime}/{forget_set}/seed{seed}.json",
            regime=preset("munkey", "regimes"),
            forget_set=list(preset("munkey", "forget_sets")),
            seed=MUNKEY_SEEDS,
        ),
        sweeps=lambda wc: expand(
            "results/munkey/sweep/{regime}/seed{seed}.json", regime=preset("munkey", "regimes"), seed=MUNKEY_SEEDS
        ),
    output:
        metrics="results/munkey/metrics.json",
        tidy="results/munkey/summary.csv",
        sweep="results/munkey/sweep.csv",
    log:
        logs("munkey/aggregate"),
    benchmark:
        bench("munkey/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("munkey", "baselines"),
    script:
        "../scripts/munkey/aggregate.py"


rule munkey_fig1:
    input:
        sweep="results/munkey/sweep.csv",
        upstream_logs=logs_of(rules.munkey_aggregate),
    output:
        pdf=figure("munkey", "fig1"),
        csv="reports/munkey_fig1.csv",
    log:
        logs("munkey/fig1"),
    benchmark:
        bench("munkey/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/munkey/fig1.py"


rule munkey_table1:
    input:
        tidy="results/munkey/summary.csv",
        upstream_logs=logs_of(rules.munkey_aggregate),
    output:
        csv="reports/munkey_table1.csv",
        md="reports/munkey_table1.md",
    log:
        logs("munkey/table1"),
    benchmark:
        bench("munkey/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/munkey/table1.py"
