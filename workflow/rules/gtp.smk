# gtp: "Generative Trajectory Planning" (NeurIPS 2026, abstract only).
# DAG: offline maze dataset per {seed} (sha256 beside it) -> world model + diffusion prior per seed, and the
#      goal-conditioned diffusion policy per seed (goals relabelled in hindsight)
#      -> receding-horizon evaluation of every method (and the budget sweep) on the same starts per seed
#      -> aggregate (metrics.json, tidy table) -> fig2 (success vs distance),
#      fig3 (score vs planning budget), table1; the learned value against the exact optimal value per seed
#      (beside the models) -> table3 (a diagnostic of the method, never of the planners' score).
# Model-free baseline: TD3+BC per seed (and per task and seed) on the same offline dataset, beside the models,
#      evaluated with the other methods; its training diagnostics -> table4 (how its step count was chosen).
# Classic control (gymnasium): the same data -> train -> evaluate per {task} and {seed}, into the same
#      aggregate (metrics.json "control" block) -> table2.
# Online fine-tuning (control.online): per {task}, {method} and {seed}, from the method's offline state (models or
#      TD3+BC's actor + critic) and the dataset: rounds of collect -> append -> update -> evaluate, into the
#      aggregate (metrics.json "online" block, online_summary.csv) -> fig1 (return vs environment steps; round 0
#      is the offline evaluation).
# The seed is the unit of every claim; every method of a seed sees the same data, models and starts.
from repro.papers.gtp import grid as gtp_grid

register_targets(
    "gtp",
    [
        "reports/gtp_fig1.pdf",
        "reports/gtp_fig2.pdf",
        "reports/gtp_fig3.pdf",
        "reports/gtp_table1.csv",
        "reports/gtp_table1.md",
        "reports/gtp_table2.csv",
        "reports/gtp_table2.md",
        "reports/gtp_table3.csv",
        "reports/gtp_table3.md",
        "reports/gtp_table4.csv",
        "reports/gtp_table4.md",
        "results/gtp/metrics.json",
    ],
)


rule gtp_data:
    output:
        data="results/gtp/data/seed{seed}.npz",
        sha="results/gtp/data/seed{seed}.npz.sha256",
    log:
        logs("gtp/data/seed{seed}"),
    benchmark:
        bench("gtp/data/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: gtp_grid.data_config(preset("gtp")),
    script:
        "../scripts/gtp/data.py"


rule gtp_train:
    input:
        data="results/gtp/data/seed{seed}.npz",
        sha="results/gtp/data/seed{seed}.npz.sha256",
    output:
        models="results/gtp/models/seed{seed}.pt",
    log:
        logs("gtp/train/seed{seed}"),
    benchmark:
        bench("gtp/train/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.train_config(preset("gtp")),
    script:
        "../scripts/gtp/train.py"


rule gtp_goal_policy:
    input:
        data="results/gtp/data/seed{seed}.npz",
        sha="results/gtp/data/seed{seed}.npz.sha256",
    output:
        policy="results/gtp/models/seed{seed}.goal_policy.pt",
    log:
        logs("gtp/goal_policy/seed{seed}"),
    benchmark:
        bench("gtp/goal_policy/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.goal_policy_config(preset("gtp")),
    script:
        "../scripts/gtp/goal_policy.py"


rule gtp_value_diag:
    input:
        models="results/gtp/models/seed{seed}.pt",
        data="results/gtp/data/seed{seed}.npz",
        sha="results/gtp/data/seed{seed}.npz.sha256",
    output:
        diag="results/gtp/models/seed{seed}.value.json",
    log:
        logs("gtp/value_diag/seed{seed}"),
    benchmark:
        bench("gtp/value_diag/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        cfg=lambda wc: gtp_grid.diag_config(preset("gtp")),
    script:
        "../scripts/gtp/value_diag.py"


rule gtp_table3:
    input:
        diags=lambda wc: gtp_grid.diag_targets(preset("gtp")),
        upstream_logs=lambda wc: logs_of(rules.gtp_value_diag, files=gtp_grid.diag_targets(preset("gtp"))),
    output:
        csv="reports/gtp_table3.csv",
        md="reports/gtp_table3.md",
    log:
        logs("gtp/table3"),
    benchmark:
        bench("gtp/table3")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/gtp/table3.py"


rule gtp_td3bc:
    input:
        data="results/gtp/data/seed{seed}.npz",
        sha="results/gtp/data/seed{seed}.npz.sha256",
    output:
        policy="results/gtp/models/seed{seed}.td3bc.pt",
        diag="results/gtp/models/seed{seed}.td3bc.json",
    log:
        logs("gtp/td3bc/seed{seed}"),
    benchmark:
        bench("gtp/td3bc/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.td3bc_config(preset("gtp")),
    script:
        "../scripts/gtp/td3bc.py"


rule gtp_table4:
    input:
        diags=lambda wc: gtp_grid.td3bc_diag_targets(preset("gtp")),
        upstream_logs=lambda wc: logs_of(
            rules.gtp_td3bc, rules.gtp_control_td3bc, files=gtp_grid.td3bc_diag_targets(preset("gtp"))
        ),
    output:
        csv="reports/gtp_table4.csv",
        md="reports/gtp_table4.md",
    log:
        logs("gtp/table4"),
    benchmark:
        bench("gtp/table4")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/gtp/table4.py"


rule gtp_evaluate:
    input:
        unpack(lambda wc: gtp_grid.eval_inputs(preset("gtp"), wc.seed)),
    output:
        run="results/gtp/eval/seed{seed}.json",
    log:
        logs("gtp/evaluate/seed{seed}"),
    benchmark:
        bench("gtp/evaluate/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        cfg=lambda wc: gtp_grid.eval_config(preset("gtp")),
    script:
        "../scripts/gtp/evaluate.py"


rule gtp_aggregate:
    input:
        runs=lambda wc: gtp_grid.eval_targets(preset("gtp")),
        control=lambda wc: gtp_grid.control_eval_targets(preset("gtp")),
        online=lambda wc: gtp_grid.online_targets(preset("gtp")),
    output:
        metrics="results/gtp/metrics.json",
        tidy="results/gtp/summary.csv",
        control_tidy="results/gtp/control_summary.csv",
        online_tidy="results/gtp/online_summary.csv",
    log:
        logs("gtp/aggregate"),
    benchmark:
        bench("gtp/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: gtp_grid.aggregate_config(preset("gtp")),
    script:
        "../scripts/gtp/aggregate.py"


rule gtp_fig1:
    input:
        tidy="results/gtp/online_summary.csv",
        metrics="results/gtp/metrics.json",
        claims=repo_path("workflow/claims/gtp.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(rules.gtp_aggregate),
    output:
        pdf=figure("gtp", "fig1"),
        csv="reports/gtp_fig1.csv",
    log:
        logs("gtp/fig1"),
    benchmark:
        bench("gtp/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/gtp/fig1.py"


rule gtp_fig2:
    input:
        tidy="results/gtp/summary.csv",
        metrics="results/gtp/metrics.json",
        claims=repo_path("workflow/claims/gtp.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(rules.gtp_aggregate),
    output:
        pdf=figure("gtp", "fig2"),
        csv="reports/gtp_fig2.csv",
    log:
        logs("gtp/fig2"),
    benchmark:
        bench("gtp/fig2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: gtp_grid.aggregate_config(preset("gtp")),
    script:
        "../scripts/gtp/fig2.py"


rule gtp_fig3:
    input:
        tidy="results/gtp/summary.csv",
        metrics="results/gtp/metrics.json",
        claims=repo_path("workflow/claims/gtp.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(rules.gtp_aggregate),
    output:
        pdf=figure("gtp", "fig3"),
        csv="reports/gtp_fig3.csv",
    log:
        logs("gtp/fig3"),
    benchmark:
        bench("gtp/fig3")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: gtp_grid.aggregate_config(preset("gtp")),
    script:
        "../scripts/gtp/fig3.py"


rule gtp_table1:
    input:
        tidy="results/gtp/summary.csv",
        upstream_logs=logs_of(rules.gtp_aggregate),
    output:
        csv="reports/gtp_table1.csv",
        md="reports/gtp_table1.md",
    log:
        logs("gtp/table1"),
    benchmark:
        bench("gtp/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: gtp_grid.aggregate_config(preset("gtp")),
    script:
        "../scripts/gtp/table1.py"


# classic-control tasks (gymnasium Pendulum-v1, MountainCarContinuous-v0): the same three steps per (task, seed)
rule gtp_control_data:
    output:
        data="results/gtp/control/{task}/data/seed{seed}.npz",
        sha="results/gtp/control/{task}/data/seed{seed}.npz.sha256",
    log:
        logs("gtp/control_data/{task}/seed{seed}"),
    benchmark:
        bench("gtp/control_data/{task}/seed{seed}")
    wildcard_constraints:
        task="|".join(gtp_grid.SCRIPTED_TASKS),
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: gtp_grid.control_data_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/control_data.py"


# MuJoCo tasks: the dataset is the replay buffer of an online TD3 agent, whose final actor is the task's `expert`
rule gtp_mujoco_data:
    output:
        data="results/gtp/control/{task}/data/seed{seed}.npz",
        sha="results/gtp/control/{task}/data/seed{seed}.npz.sha256",
        behaviour="results/gtp/control/{task}/data/seed{seed}.behaviour.pt",
    log:
        logs("gtp/mujoco_data/{task}/seed{seed}"),
    benchmark:
        bench("gtp/mujoco_data/{task}/seed{seed}")
    wildcard_constraints:
        task="|".join(gtp_grid.MUJOCO_TASKS),
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.control_data_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/mujoco_data.py"


rule gtp_control_train:
    input:
        data="results/gtp/control/{task}/data/seed{seed}.npz",
        sha="results/gtp/control/{task}/data/seed{seed}.npz.sha256",
    output:
        models="results/gtp/control/{task}/models/seed{seed}.pt",
    log:
        logs("gtp/control_train/{task}/seed{seed}"),
    benchmark:
        bench("gtp/control_train/{task}/seed{seed}")
    wildcard_constraints:
        task=r"[a-z]+",
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.control_train_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/train.py"


rule gtp_control_td3bc:
    input:
        data="results/gtp/control/{task}/data/seed{seed}.npz",
        sha="results/gtp/control/{task}/data/seed{seed}.npz.sha256",
    output:
        policy="results/gtp/control/{task}/models/seed{seed}.td3bc.pt",
        diag="results/gtp/control/{task}/models/seed{seed}.td3bc.json",
    log:
        logs("gtp/control_td3bc/{task}/seed{seed}"),
    benchmark:
        bench("gtp/control_td3bc/{task}/seed{seed}")
    wildcard_constraints:
        task=r"[a-z]+",
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.control_td3bc_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/td3bc.py"


rule gtp_control_evaluate:
    input:
        unpack(lambda wc: gtp_grid.control_eval_inputs(preset("gtp"), wc.task, wc.seed)),
    output:
        run="results/gtp/control/{task}/eval/seed{seed}.json",
    log:
        logs("gtp/control_evaluate/{task}/seed{seed}"),
    benchmark:
        bench("gtp/control_evaluate/{task}/seed{seed}")
    wildcard_constraints:
        task=r"[a-z]+",
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        cfg=lambda wc: gtp_grid.control_eval_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/control_evaluate.py"


rule gtp_table2:
    input:
        tidy="results/gtp/control_summary.csv",
        upstream_logs=logs_of(rules.gtp_aggregate),
    output:
        csv="reports/gtp_table2.csv",
        md="reports/gtp_table2.md",
    log:
        logs("gtp/table2"),
    benchmark:
        bench("gtp/table2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/gtp/table2.py"


rule gtp_control_online:
    input:
        unpack(lambda wc: gtp_grid.online_inputs(preset("gtp"), wc.task, wc.method, wc.seed)),
    output:
        run="results/gtp/control/{task}/online/{method}/seed{seed}.json",
    log:
        logs("gtp/control_online/{task}/{method}/seed{seed}"),
    benchmark:
        bench("gtp/control_online/{task}/{method}/seed{seed}")
    wildcard_constraints:
        task=r"[a-z]+",
        method=r"[a-z_0-9]+",
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cfg=lambda wc: gtp_grid.online_config(preset("gtp"), wc.task),
    script:
        "../scripts/gtp/online.py"
