# modellens: "ModelLens: Finding the Best for Your Task from Myriads of Models" (arXiv 2605.07075).
# DAG: text embeddings of every seed's synthetic leaderboard (MiniLM, loaded once) -> one run per
#      {seed}: every recommender + oracle + run-every-candidate, evaluated by split -> aggregate
#      (metrics.json, tidy tables) -> fig1 (NDCG@K by split), fig2 (regret vs cost), fig3 (routing), table1;
#      ablations per {seed} (ModelLens with one part removed, same data and seed) -> the ablation table.
# source: remote: fetch (local path or checksummed URL, validated before it lands) -> embed the dump's
#      texts -> one split of the dump per {seed} (held-out records are the truth) -> fig1, table1,
#      ablations; no fig2/fig3 (a dump has no probe set and no per-query results).
# The seed is the unit of every claim; every method of a seed sees the same leaderboard and seed.
from repro.papers.modellens import grid as modellens_grid

MODELLENS_SOURCE = config["modellens"].get("source", "synthetic")
register_targets("modellens", modellens_grid.targets(MODELLENS_SOURCE), sources=modellens_grid.SOURCES)
MODELLENS_DUMP = [modellens_grid.DUMP] if MODELLENS_SOURCE == "remote" else []
MODELLENS_DUMP_SHA256 = [sidecar(modellens_grid.DUMP)] if MODELLENS_SOURCE == "remote" else []


if MODELLENS_SOURCE == "remote":
    MODELLENS_REMOTE = modellens_grid.check_remote(config["modellens"])

    rule modellens_fetch:
        output:
            dump=modellens_grid.DUMP,
            dump_sha256=sidecar(modellens_grid.DUMP),
        log:
            logs("modellens/fetch"),
        benchmark:
            bench("modellens/fetch")
        conda:
            "../../envs/stats.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=30,
        params:
            cfg=MODELLENS_REMOTE,
        script:
            "../scripts/modellens/fetch.py"


rule modellens_embed:
    input:
        dump=MODELLENS_DUMP,
        dump_sha256=MODELLENS_DUMP_SHA256,
    output:
        emb="results/modellens/text_embeddings.npz",
    log:
        logs("modellens/embed"),
    benchmark:
        bench("modellens/embed")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=20,
    params:
        cfg=lambda wc: modellens_grid.embed_config(preset("modellens")),
        source=MODELLENS_SOURCE,
    script:
        "../scripts/modellens/embed.py"


rule modellens_run:
    input:
        emb="results/modellens/text_embeddings.npz",
        dump=MODELLENS_DUMP,
        dump_sha256=MODELLENS_DUMP_SHA256,
    output:
        run="results/modellens/runs/seed{seed}.json",
    log:
        logs("modellens/run/seed{seed}"),
    benchmark:
        bench("modellens/run/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        cfg=lambda wc: modellens_grid.run_config(preset("modellens")),
        source=MODELLENS_SOURCE,
    script:
        "../scripts/modellens/run.py"


rule modellens_ablation:
    input:
        emb="results/modellens/text_embeddings.npz",
        dump=MODELLENS_DUMP,
        dump_sha256=MODELLENS_DUMP_SHA256,
    output:
        run="results/modellens/ablations/seed{seed}.json",
    log:
        logs("modellens/ablation/seed{seed}"),
    benchmark:
        bench("modellens/ablation/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        cfg=lambda wc: modellens_grid.ablation_config(preset("modellens")),
        source=MODELLENS_SOURCE,
    script:
        "../scripts/modellens/ablation.py"


rule modellens_ablation_table:
    input:
        runs=lambda wc: modellens_grid.run_targets(preset("modellens")),
        ablations=lambda wc: modellens_grid.ablation_targets(preset("modellens")),
        upstream_logs=lambda wc: logs_of(
            rules.modellens_run,
            rules.modellens_ablation,
            files=modellens_grid.run_targets(preset("modellens"))
            + modellens_grid.ablation_targets(preset("modellens")),
        ),
    output:
        csv="reports/modellens_ablations.csv",
        md="reports/modellens_ablations.md",
    log:
        logs("modellens/ablation_table"),
    benchmark:
        bench("modellens/ablation_table")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    script:
        "../scripts/modellens/ablation_table.py"


rule modellens_aggregate:
    input:
        runs=lambda wc: modellens_grid.run_targets(preset("modellens")),
    output:
        metrics="results/modellens/metrics.json",
        tidy="results/modellens/summary.csv",
        regret="results/modellens/regret.csv",
        routing="results/modellens/routing.csv",
    log:
        logs("modellens/aggregate"),
    benchmark:
        bench("modellens/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    script:
        "../scripts/modellens/aggregate.py"


rule modellens_fig1:
    input:
        tidy="results/modellens/summary.csv",
        upstream_logs=logs_of(rules.modellens_aggregate),
    output:
        pdf=figure("modellens", "fig1"),
        csv="reports/modellens_fig1.csv",
    log:
        logs("modellens/fig1"),
    benchmark:
        bench("modellens/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    script:
        "../scripts/modellens/fig1.py"


rule modellens_fig2:
    input:
        regret="results/modellens/regret.csv",
        routing="results/modellens/routing.csv",
        upstream_logs=logs_of(rules.modellens_aggregate),
    output:
        pdf=figure("modellens", "fig2"),
        csv="reports/modellens_fig2.csv",
    log:
        logs("modellens/fig2"),
    benchmark:
        bench("modellens/fig2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/modellens/fig2.py"


rule modellens_fig3:
    input:
        routing="results/modellens/routing.csv",
        upstream_logs=logs_of(rules.modellens_aggregate),
    output:
        pdf=figure("modellens", "fig3"),
        csv="reports/modellens_fig3.csv",
    log:
        logs("modellens/fig3"),
    benchmark:
        bench("modellens/fig3")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/modellens/fig3.py"


rule modellens_table1:
    input:
        tidy="results/modellens/summary.csv",
        upstream_logs=logs_of(rules.modellens_aggregate),
    output:
        csv="reports/modellens_table1.csv",
        md="reports/modellens_table1.md",
    log:
        logs("modellens/table1"),
    benchmark:
        bench("modellens/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: modellens_grid.aggregate_config(preset("modellens")),
    script:
        "../scripts/modellens/table1.py"
