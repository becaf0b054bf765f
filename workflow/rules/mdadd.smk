# MDA-DD (paper 16): multimodal dataset distillation in a frozen feature space.
# DAG: corpus (or fetch) -> features -> distill {method} x {n_pairs} x {seed} -> evaluate -> aggregate
#      -> table1, fig1 (recall vs pairs), fig2 (initialisation gap); cost -> fig3 (SOCM vs full moment).
# Code: repro.methods.distill (the methods), repro.papers.mdadd (corpus, tables, figures).
# {seed} is the distillation seed k (0 .. distill_seeds - 1): the unit every method shares, so the
# distillation and evaluation seeds derive from k, never from the method (paired comparisons).
from repro.papers.mdadd import grid as mdadd_grid

register_targets(
    "mdadd",
    [
        "reports/mdadd_table1.csv",
        "reports/mdadd_table1.md",
        "reports/mdadd_fig1.pdf",
        "reports/mdadd_fig2.pdf",
        "reports/mdadd_fig3.pdf",
        "results/mdadd/metrics.json",
    ],
    sources=("synthetic", "local", "remote"),
)

MDADD_SOURCE = config["mdadd"].get("source", "synthetic")
MDADD_DATASET = "synthetic" if MDADD_SOURCE == "synthetic" else preset("mdadd", "data", "dataset")
# source: remote: the checksum files mdadd_fetch writes beside the JSON and the image folder; mdadd_features checks them
MDADD_SHA256 = (
    {
        "json_sha256": sidecar(preset("mdadd", "data", "json")),
        "images_sha256": sidecar(preset("mdadd", "data", "images")),
    }
    if MDADD_SOURCE == "remote"
    else {}
)


rule mdadd_corpus:
    output:
        corpus="resources/mdadd/synthetic/corpus.npz",
    log:
        logs("mdadd/corpus"),
    benchmark:
        bench("mdadd/corpus")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: preset("mdadd", "corpus"),
    script:
        "../scripts/mdadd/corpus.py"


if MDADD_SOURCE == "remote":
    # refused here, naming the key, rather than by the fetch job after the jobs before it ran
    mdadd_grid.remote_archives(preset("mdadd", "data"), f"mdadd.{scale_of('mdadd')}.data")
    MDADD_IMAGES = mdadd_grid.remote_images(preset("mdadd", "data"), MDADD_DATASET, f"mdadd.{scale_of('mdadd')}.data")

    rule mdadd_fetch:
        output:
            json="resources/mdadd/{dataset}/dataset_{dataset}.json",
            json_sha256=sidecar("resources/mdadd/{dataset}/dataset_{dataset}.json"),
            # declared, so Snakemake removes it when the job fails; renamed into place only once whole
            images=directory(f"resources/mdadd/{{dataset}}/{MDADD_IMAGES}"),
            images_sha256=sidecar(f"resources/mdadd/{{dataset}}/{MDADD_IMAGES}"),
        log:
            logs("mdadd/fetch_{dataset}"),
        benchmark:
            bench("mdadd/fetch_{dataset}")
        wildcard_constraints:
            dataset=r"[a-z0-9_]+",
        conda:
            "../../envs/base.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=240,
        params:
            cfg=lambda wc: preset_slice("mdadd", archives=("data", "archives")),
        script:
            "../scripts/mdadd/fetch.py"


rule mdadd_features:
    input:
        unpack(
            lambda wc: (
                {"corpus": "resources/mdadd/synthetic/corpus.npz"}
                if MDADD_SOURCE == "synthetic"
                else {
                    "json": preset("mdadd", "data", "json"),
                    "images": preset("mdadd", "data", "images"),
                    **MDADD_SHA256,
                }
            )
        ),
    output:
        features="results/mdadd/features/{dataset}.h5",
    log:
        logs("mdadd/features/{dataset}"),
    benchmark:
        bench("mdadd/features/{dataset}")
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=lambda wc: preset("mdadd", "encode"),
        source=MDADD_SOURCE,
        image_root=lambda wc: (None if MDADD_SOURCE == "synthetic" else preset("mdadd", "data", "images")),
        max_images=lambda wc: (None if MDADD_SOURCE == "synthetic" else preset("mdadd", "data", "max_images")),
        device=config["device"],
    script:
        "../scripts/mdadd/features.py"


rule mdadd_distill:
    input:
        features="results/mdadd/features/{dataset}.h5",
    output:
        distilled="results/mdadd/distilled/{dataset}/{method}/n{n_pairs}_s{seed}.npz",
    log:
        logs("mdadd/distill/{dataset}/{method}/n{n_pairs}_s{seed}"),
    benchmark:
        bench("mdadd/distill/{dataset}/{method}/n{n_pairs}_s{seed}")
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        method=r"[a-z_]+",
        n_pairs=r"\d+|all",
        seed=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=lambda wc: mdadd_grid.distill_params(wc.method, preset("mdadd", "student"), preset("mdadd", "distill")),
    script:
        "../scripts/mdadd/distill.py"


rule mdadd_evaluate:
    input:
        features="results/mdadd/features/{dataset}.h5",
        distilled="results/mdadd/distilled/{dataset}/{method}/n{n_pairs}_s{seed}.npz",
    output:
        metrics="results/mdadd/eval/{dataset}/{method}/n{n_pairs}_s{seed}.json",
    log:
        logs("mdadd/evaluate/{dataset}/{method}/n{n_pairs}_s{seed}"),
    benchmark:
        bench("mdadd/evaluate/{dataset}/{method}/n{n_pairs}_s{seed}")
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        method=r"[a-z_]+",
        n_pairs=r"\d+|all",
        seed=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=lambda wc: preset_slice("mdadd", "student", "eval"),
    script:
        "../scripts/mdadd/evaluate.py"


rule mdadd_cost:
    output:
        cost="results/mdadd/cost.csv",
    log:
        logs("mdadd/cost"),
    benchmark:
        bench("mdadd/cost")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        cfg=lambda wc: preset("mdadd", "cost"),
    script:
        "../scripts/mdadd/cost.py"


rule mdadd_aggregate:
    input:
        evals=lambda wc: mdadd_grid.eval_targets(preset("mdadd"), MDADD_DATASET),
        cost="results/mdadd/cost.csv",
        upstream_logs=lambda wc: logs_of(
            rules.mdadd_evaluate, files=mdadd_grid.eval_targets(preset("mdadd"), MDADD_DATASET)
        )
        + logs_of(rules.mdadd_cost),
        claims=repo_path("workflow/claims/mdadd.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/mdadd/metrics.json",
        tidy="results/mdadd/recall_tidy.csv",
        gap="results/mdadd/init_gap.csv",
        claims="results/mdadd/claim_intervals.csv",
        table_csv="reports/mdadd_table1.csv",
        table_md="reports/mdadd_table1.md",
    log:
        logs("mdadd/aggregate"),
    benchmark:
        bench("mdadd/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        cfg=lambda wc: preset_slice("mdadd", "methods", "baselines"),
    script:
        "../scripts/mdadd/aggregate.py"


rule mdadd_fig1:
    input:
        tidy="results/mdadd/recall_tidy.csv",
        claims="results/mdadd/claim_intervals.csv",
        upstream_logs=logs_of(rules.mdadd_aggregate),
        # which side each claim favours (a non-inferiority claim is drawn at its margin's edge)
        paper_claims=repo_path("workflow/claims/mdadd.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        pdf=figure("mdadd", "fig1"),
        csv="reports/mdadd_fig1.csv",
    log:
        logs("mdadd/fig1"),
    benchmark:
        bench("mdadd/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mdadd/fig1.py"


rule mdadd_fig2:
    input:
        tidy="results/mdadd/recall_tidy.csv",
        claims="results/mdadd/claim_intervals.csv",
        upstream_logs=logs_of(rules.mdadd_aggregate),
    output:
        pdf=figure("mdadd", "fig2"),
        csv="reports/mdadd_fig2.csv",
    log:
        logs("mdadd/fig2"),
    benchmark:
        bench("mdadd/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mdadd/fig2.py"


rule mdadd_fig3:
    input:
        cost="results/mdadd/cost.csv",
        upstream_logs=logs_of(rules.mdadd_cost),
        # the cost claim's interval, formed from the timings as the aggregate's metrics hold them
        claims=repo_path("workflow/claims/mdadd.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        pdf=figure("mdadd", "fig3"),
        csv="reports/mdadd_fig3.csv",
    log:
        logs("mdadd/fig3"),
    benchmark:
        bench("mdadd/fig3")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/mdadd/fig3.py"
