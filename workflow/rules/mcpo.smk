# mcpo: "MCPO: mode-controlled policy optimisation, an alpha-divergence dial" (NeurIPS 2026, abstract only).
# DAG: task (i) per {seed}: one task instance, MCPO at every alpha + reverse-KL RLOO + oracle pi* + floor
#      pi_ref, evaluated exactly -> aggregate (metrics.json, tidy table, the claims' intervals) -> fig1 (pass@1,
#      pass@k vs alpha), fig2 (mode coverage, divergence vs alpha), each with its claims' paired differences,
#      table1. The seed is the unit of every claim.
# Task (ii) per {seed}: templated arithmetic with three answer forms, SmolLM2-135M (tiny model at smoke,
#      trained here with planted form shares) + a LoRA adapter per alpha and for RLOO, exact metrics over
#      the candidates -> the same aggregate (metrics.json's "arithmetic" block).
# Task (iii) per {seed}: a templated safety set (harmful requests and benign look-alikes), one base model
#      under two system messages (the two references; a tiny base with planted refusal rates at smoke),
#      a LoRA adapter per alpha and reference -> the same aggregate ("safety" block) -> fig3 (safety frontier).
from repro.papers.mcpo import grid as mcpo_grid

register_targets(
    "mcpo",
    [
        "reports/mcpo_fig1.pdf",
        "reports/mcpo_fig2.pdf",
        "reports/mcpo_fig3.pdf",
        "reports/mcpo_table1.csv",
        "reports/mcpo_table1.md",
        "results/mcpo/metrics.json",
    ],
)


rule mcpo_bandit:
    output:
        run="results/mcpo/bandit/seed{seed}.json",
    log:
        logs("mcpo/bandit/seed{seed}"),
    benchmark:
        bench("mcpo/bandit/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        cfg=lambda wc: mcpo_grid.run_config(preset("mcpo")),
    script:
        "../scripts/mcpo/bandit.py"


# Tasks (ii) and (iii): a tiny reference model (smoke) and one job per seed each. Written out rule by
# rule: in a loop, Snakemake binds a rule's script path when the job runs, so every rule ran the last task's.
rule mcpo_arith_tiny:
    output:
        model="results/mcpo/arithmetic/tiny/model.safetensors",
        config="results/mcpo/arithmetic/tiny/config.json",
    log:
        logs("mcpo/arith_tiny"),
    benchmark:
        bench("mcpo/arith_tiny")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: mcpo_grid.task_config(preset("mcpo"), "arithmetic"),
    script:
        "../scripts/mcpo/arith_tiny.py"


rule mcpo_arithmetic:
    input:
        model=lambda wc: mcpo_grid.task_base(preset("mcpo"), "arithmetic"),
    output:
        run="results/mcpo/arithmetic/seed{seed}.json",
    log:
        logs("mcpo/arithmetic/seed{seed}"),
    benchmark:
        bench("mcpo/arithmetic/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/llm.yaml"
    # one thread: two OpenMP threads spin-wait each other on a busy node (see repro.llm's benchmark)
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: mcpo_grid.task_config(preset("mcpo"), "arithmetic"),
    script:
        "../scripts/mcpo/arithmetic.py"


rule mcpo_safety_tiny:
    output:
        model="results/mcpo/safety/tiny/model.safetensors",
        config="results/mcpo/safety/tiny/config.json",
    log:
        logs("mcpo/safety_tiny"),
    benchmark:
        bench("mcpo/safety_tiny")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: mcpo_grid.task_config(preset("mcpo"), "safety"),
    script:
        "../scripts/mcpo/safety_tiny.py"


rule mcpo_safety:
    input:
        model=lambda wc: mcpo_grid.task_base(preset("mcpo"), "safety"),
    output:
        run="results/mcpo/safety/seed{seed}.json",
    log:
        logs("mcpo/safety/seed{seed}"),
    benchmark:
        bench("mcpo/safety/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/llm.yaml"
    # one thread: two OpenMP threads spin-wait each other on a busy node (see repro.llm's benchmark)
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: mcpo_grid.task_config(preset("mcpo"), "safety"),
    script:
        "../scripts/mcpo/safety.py"


rule mcpo_aggregate:
    input:
        runs=lambda wc: mcpo_grid.run_targets(preset("mcpo")),
        arith=lambda wc: mcpo_grid.task_targets(preset("mcpo"), "arithmetic"),
        safety=lambda wc: mcpo_grid.task_targets(preset("mcpo"), "safety"),
        claims=repo_path("workflow/claims/mcpo.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/mcpo/metrics.json",
        tidy="results/mcpo/summary.csv",
        claims="results/mcpo/claim_intervals.csv",
    log:
        logs("mcpo/aggregate"),
    benchmark:
        bench("mcpo/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: mcpo_grid.aggregate_config(preset("mcpo")),
    script:
        "../scripts/mcpo/aggregate.py"


rule mcpo_fig1:
    input:
        tidy="results/mcpo/summary.csv",
        claims="results/mcpo/claim_intervals.csv",
        upstream_logs=logs_of(rules.mcpo_aggregate),
    output:
        pdf=figure("mcpo", "fig1"),
        csv="reports/mcpo_fig1.csv",
    log:
        logs("mcpo/fig1"),
    benchmark:
        bench("mcpo/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: mcpo_grid.aggregate_config(preset("mcpo")),
    script:
        "../scripts/mcpo/fig1.py"


rule mcpo_fig2:
    input:
        tidy="results/mcpo/summary.csv",
        claims="results/mcpo/claim_intervals.csv",
        upstream_logs=logs_of(rules.mcpo_aggregate),
    output:
        pdf=figure("mcpo", "fig2"),
        csv="reports/mcpo_fig2.csv",
    log:
        logs("mcpo/fig2"),
    benchmark:
        bench("mcpo/fig2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mcpo/fig2.py"


rule mcpo_fig3:
    input:
        tidy="results/mcpo/summary.csv",
        claims="results/mcpo/claim_intervals.csv",
        upstream_logs=logs_of(rules.mcpo_aggregate),
    output:
        pdf=figure("mcpo", "fig3"),
        csv="reports/mcpo_fig3.csv",
    log:
        logs("mcpo/fig3"),
    benchmark:
        bench("mcpo/fig3")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mcpo/fig3.py"


rule mcpo_table1:
    input:
        tidy="results/mcpo/summary.csv",
        claims="results/mcpo/claim_intervals.csv",
        upstream_logs=logs_of(rules.mcpo_aggregate),
    output:
        csv="reports/mcpo_table1.csv",
        md="reports/mcpo_table1.md",
    log:
        logs("mcpo/table1"),
    benchmark:
        bench("mcpo/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mcpo/table1.py"
