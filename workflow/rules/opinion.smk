# opinion: "Modelling Opinion Dynamics at Scale with Deep MARL" (the consensus and truth-finding game).
# DAG: train (+ score) one shared recurrent graph-attention PPO agent per family x alpha x variant x seed,
#      and the scripted baselines on the same games -> evaluate (metrics.json, tables) -> fig1, fig2, fig3.
# source: remote: fetch the user's weighted directed edge list (checked by sha256, validated by load_edge_list
#      before it lands) -> every static agent's attention is also read on that graph (vs centrality and weights).
from repro.papers.opinion import grid as opinion_grid
from repro.papers.opinion.grid import agent_runs, baseline_runs

register_targets(
    "opinion",
    [
        "reports/opinion_fig1.pdf",
        "reports/opinion_fig2.pdf",
        "reports/opinion_fig3.pdf",
        "reports/opinion_table1.md",
        "reports/opinion_training.md",
        "results/opinion/metrics.json",
    ],
    sources=opinion_grid.SOURCES,
)
OPINION_REMOTE = opinion_grid.remote_config(
    config["opinion"][scale_of("opinion")], source_of("opinion", opinion_grid.SOURCES), scale_of("opinion")
)
OPINION_EDGES = opinion_grid.remote_edges(OPINION_REMOTE)


# the fetched edge list, read by the static family's agents (attention) under source: remote
opinion_edges = lambda wc: (
    {"edges": OPINION_EDGES, "edges_sha256": sidecar(OPINION_EDGES)} if OPINION_EDGES and wc.family == "static" else {}
)


if OPINION_REMOTE is not None:

    rule opinion_fetch:
        output:
            edges=OPINION_EDGES,
            edges_sha256=sidecar(OPINION_EDGES),
        log:
            logs("opinion/fetch"),
        benchmark:
            bench("opinion/fetch")
        conda:
            "../../envs/torch.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=30,
        params:
            cfg=OPINION_REMOTE,
        script:
            "../scripts/opinion/fetch.py"


rule opinion_train:
    input:
        unpack(opinion_edges),
    output:
        model="results/opinion/agents/{family}/alpha{alpha}/{variant}/seed{seed}.pt",
        record="results/opinion/agents/{family}/alpha{alpha}/{variant}/seed{seed}.json",
    log:
        logs("opinion/train/{family}/alpha{alpha}/{variant}/seed{seed}"),
    benchmark:
        bench("opinion/train/{family}/alpha{alpha}/{variant}/seed{seed}")
    wildcard_constraints:
        family=r"static|dynamic",
        alpha=r"[0-9.]+",
        variant=r"marl|marl_noop",
        seed=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        cfg=lambda wc: preset("opinion", "train"),
    script:
        "../scripts/opinion/train.py"


rule opinion_baselines:
    output:
        records="results/opinion/baselines/{family}/alpha{alpha}.json",
    log:
        logs("opinion/baselines/{family}/alpha{alpha}"),
    benchmark:
        bench("opinion/baselines/{family}/alpha{alpha}")
    wildcard_constraints:
        family=r"static|dynamic",
        alpha=r"[0-9.]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        cfg=lambda wc: preset_slice("opinion", "train", "baselines", "seeds"),
    script:
        "../scripts/opinion/baselines.py"


rule opinion_evaluate:
    input:
        agents=agent_runs(config["opinion"][scale_of("opinion")]),
        baselines=baseline_runs(config["opinion"][scale_of("opinion")]),
        upstream_logs=logs_of(
            rules.opinion_train,
            rules.opinion_baselines,
            files=agent_runs(preset("opinion")) + baseline_runs(preset("opinion")),
        ),
    output:
        metrics="results/opinion/metrics.json",
        results="results/opinion/results.csv",
        attention="results/opinion/attention.csv",
        table1="reports/opinion_table1.md",
        table1_csv="reports/opinion_table1.csv",
        training="results/opinion/training.csv",
        training_table="reports/opinion_training.md",
        training_table_csv="reports/opinion_training.csv",
    log:
        logs("opinion/evaluate"),
    benchmark:
        bench("opinion/evaluate")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: {
            "alphas": preset("opinion", "alphas"),
            "ablation_alphas": preset("opinion", "ablation", "alphas"),
            "attention_alpha": preset("opinion", "attention_alpha"),
        },
    script:
        "../scripts/opinion/evaluate.py"


rule opinion_fig1:
    input:
        results="results/opinion/results.csv",
        upstream_logs=logs_of(rules.opinion_evaluate),
    output:
        pdf=figure("opinion", "fig1"),
        csv="reports/opinion_fig1.csv",
    log:
        logs("opinion/fig1"),
    benchmark:
        bench("opinion/fig1")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/opinion/fig1.py"


rule opinion_fig2:
    input:
        results="results/opinion/results.csv",
        upstream_logs=logs_of(rules.opinion_evaluate),
    output:
        pdf=figure("opinion", "fig2"),
        csv="reports/opinion_fig2.csv",
    log:
        logs("opinion/fig2"),
    benchmark:
        bench("opinion/fig2")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/opinion/fig2.py"


rule opinion_fig3:
    input:
        metrics="results/opinion/metrics.json",
        claims=repo_path("workflow/claims/opinion.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(rules.opinion_evaluate),
    output:
        pdf=figure("opinion", "fig3"),
        csv="reports/opinion_fig3.csv",
    log:
        logs("opinion/fig3"),
    benchmark:
        bench("opinion/fig3")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/opinion/fig3.py"
