# The artifact-evaluation report: every claim of every paper with its interval and verdict, and the
# built figures beside them (so the report depends on every registered target).


rule artifact_evaluation:
    input:
        metrics=lambda wc: [f"results/{key}/metrics.json" for key in PAPER_TARGETS],
        targets=lambda wc: [t for targets in PAPER_TARGETS.values() for t in targets],
        papers=repo_path("workflow/papers.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        claims=lambda wc: sorted(str(p) for p in (REPO / "workflow/claims").glob("*.yaml")),
    output:
        markdown="reports/artifact_evaluation.md",
        html="reports/artifact_evaluation.html",
    log:
        logs("artifact_evaluation"),
    benchmark:
        bench("artifact_evaluation")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        built=lambda wc: {key: targets for key, targets in PAPER_TARGETS.items()},
        claims_dir=repo_path("workflow/claims"),
    script:
        "../scripts/artifact_evaluation.py"
