# m2le: "M²LE: merging strength modulation via joint loss estimation" (NeurIPS 2026; abstract only).
# DAG: (remote only) fetch the image benchmark, checked by sha256 -> one backbone per {sequence}/seed{seed} pretrained on the sequence's base task -> every method
#      (M²LE, HIM alone, scalar merges, O-LoRA, EWC, sequential, joint) over the task sequence ->
#      aggregate (metrics.json, tidy tables, the claims' intervals) -> table1, fig1 (task-1 accuracy over the
#      sequence, the claims' paired differences), fig2 (distribution of the element-wise modulation per layer,
#      the spread the claim reads).
# The seed is the unit of every claim; every method of a seed sees the same tasks, backbone, LoRA
# initialisations and batch orders.


register_targets(
    "m2le",
    [
        "reports/m2le_fig1.pdf",
        "reports/m2le_fig2.pdf",
        "reports/m2le_table1.csv",
        "reports/m2le_table1.md",
        "results/m2le/metrics.json",
    ],
)


M2LE_SEEDS = range(preset("m2le", "seeds"))
M2LE_REMOTE = "results/m2le/data/remote.npz"


# the fetched image set, for the remote sequence only (the others are generated or ship offline)
m2le_data = lambda wc: {"data": M2LE_REMOTE, "data_sha256": sidecar(M2LE_REMOTE)} if wc.sequence == "remote" else {}


rule m2le_fetch:
    output:
        data=M2LE_REMOTE,
        data_sha256=sidecar(M2LE_REMOTE),
    log:
        logs("m2le/fetch"),
    benchmark:
        bench("m2le/fetch")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice("m2le", remote=("sequences", "remote")),
    script:
        "../scripts/m2le/fetch.py"


rule m2le_pretrain:
    input:
        unpack(m2le_data),
    output:
        backbone="results/m2le/backbone/{sequence}/seed{seed}.pt",
    log:
        logs("m2le/pretrain/{sequence}/seed{seed}"),
    benchmark:
        bench("m2le/pretrain/{sequence}/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
        sequence=r"[a-z_]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("m2le", "sequences", "backbone"),
    script:
        "../scripts/m2le/pretrain.py"


rule m2le_run:
    input:
        unpack(m2le_data),
        backbone="results/m2le/backbone/{sequence}/seed{seed}.pt",
    output:
        run="results/m2le/runs/{sequence}/seed{seed}.json",
    log:
        logs("m2le/run/{sequence}/seed{seed}"),
    benchmark:
        bench("m2le/run/{sequence}/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
        sequence=r"[a-z_]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: preset_slice("m2le", "sequences", "backbone", "train", "methods"),
    script:
        "../scripts/m2le/run.py"


rule m2le_aggregate:
    input:
        runs=lambda wc: expand(
            "results/m2le/runs/{sequence}/seed{seed}.json", sequence=list(preset("m2le", "sequences")), seed=M2LE_SEEDS
        ),
        claims=repo_path("workflow/claims/m2le.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/m2le/metrics.json",
        tidy="results/m2le/summary.csv",
        curve="results/m2le/curve.csv",
        modulation="results/m2le/modulation.csv",
        claims="results/m2le/claim_intervals.csv",
    log:
        logs("m2le/aggregate"),
    benchmark:
        bench("m2le/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("m2le", "methods"),
    script:
        "../scripts/m2le/aggregate.py"


rule m2le_table1:
    input:
        tidy="results/m2le/summary.csv",
        upstream_logs=logs_of(rules.m2le_aggregate),
    output:
        csv="reports/m2le_table1.csv",
        md="reports/m2le_table1.md",
    log:
        logs("m2le/table1"),
    benchmark:
        bench("m2le/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/m2le/table1.py"


rule m2le_fig1:
    input:
        curve="results/m2le/curve.csv",
        claims="results/m2le/claim_intervals.csv",
        upstream_logs=logs_of(rules.m2le_aggregate),
    output:
        pdf=figure("m2le", "fig1"),
        csv="reports/m2le_fig1.csv",
    log:
        logs("m2le/fig1"),
    benchmark:
        bench("m2le/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/m2le/fig1.py"


rule m2le_fig2:
    input:
        modulation="results/m2le/modulation.csv",
        claims="results/m2le/claim_intervals.csv",
        upstream_logs=logs_of(rules.m2le_aggregate),
    output:
        pdf=figure("m2le", "fig2"),
        csv="reports/m2le_fig2.csv",
    log:
        logs("m2le/fig2"),
    benchmark:
        bench("m2le/fig2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/m2le/fig2.py"
