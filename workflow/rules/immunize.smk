# immunize: immunization against harmful fine-tuning by plateau and curvature conditioning.
# DAG: per seed{seed} (one job: the start-up of a job costs more than a smoke unit's work): digits tasks -> per
#      model (linear, mlp, transformer) its released extractor -> per defence: immunize -> attacks in the three
#      settings (open weights, fine-tuning as a service, relearning after unlearning); the estimator vs the exact
#      Hessian as the model grows -> aggregate (metrics.json, tidy tables) -> report (fig1, fig2, table1);
#      the trained defences of every seed -> diagnostics (per-term gradient norms, benign feature drift).
# The seed is the unit of every claim; every model and defence of a seed sees the same data and attack data.


register_targets(
    "immunize",
    [
        "reports/immunize_fig1.pdf",
        "reports/immunize_fig2.pdf",
        "reports/immunize_table1.csv",
        "reports/immunize_table1.md",
        "results/immunize/metrics.json",
        "results/immunize/diagnostics.csv",
        "results/immunize/diagnostics_summary.md",
    ],
)


IMMUNIZE_SEEDS = range(preset("immunize", "seeds"))


rule immunize_unit:
    output:
        unit="results/immunize/units/seed{seed}.json",
        thetas="results/immunize/units/seed{seed}.npz",
    log:
        logs("immunize/unit/seed{seed}"),
    benchmark:
        bench("immunize/unit/seed{seed}")
    wildcard_constraints:
        seed=r"[0-9]+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=lambda wc: preset_slice(
            "immunize",
            "models",
            "methods",
            "data",
            "release",
            "immunize",
            "adversary",
            "utility",
            "service",
            "relearn",
            "scaling",
        ),
    script:
        "../scripts/immunize/unit.py"


rule immunize_aggregate:
    input:
        units=lambda wc: expand("results/immunize/units/seed{seed}.json", seed=IMMUNIZE_SEEDS),
    output:
        metrics="results/immunize/metrics.json",
        tidy="results/immunize/summary.csv",
        curves="results/immunize/curves.csv",
        scaling="results/immunize/scaling.csv",
    log:
        logs("immunize/aggregate"),
    benchmark:
        bench("immunize/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("immunize", "methods", "models"),
    script:
        "../scripts/immunize/aggregate.py"


rule immunize_report:
    input:
        tidy="results/immunize/summary.csv",
        curves="results/immunize/curves.csv",
        scaling="results/immunize/scaling.csv",
        upstream_logs=logs_of(rules.immunize_aggregate),
    output:
        fig1=figure("immunize", "fig1"),
        fig1_csv="reports/immunize_fig1.csv",
        fig2=figure("immunize", "fig2"),
        fig2_csv="reports/immunize_fig2.csv",
        table_csv="reports/immunize_table1.csv",
        table_md="reports/immunize_table1.md",
    log:
        logs("immunize/report"),
    benchmark:
        bench("immunize/report")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/immunize/figures.py"


rule immunize_diagnostics:
    input:
        thetas=lambda wc: expand("results/immunize/units/seed{seed}.npz", seed=IMMUNIZE_SEEDS),
    output:
        table="results/immunize/diagnostics.csv",
        summary="results/immunize/diagnostics_summary.csv",
        summary_md="results/immunize/diagnostics_summary.md",
    log:
        logs("immunize/diagnostics"),
    benchmark:
        bench("immunize/diagnostics")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("immunize", "models", "methods", "data", "release", "immunize", "utility"),
        seeds=IMMUNIZE_SEEDS,  # one per input, in its order
    script:
        "../scripts/immunize/diagnostics.py"
