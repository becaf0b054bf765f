# TMEvolve (issues 5, 16): "Modeling Whole-Slide Images as Dynamic Tumor Microenvironment Fields".
# DAG: spatial cohort slides -> the WSI stage on them (tissue, patches, features) -> bags (main task), and
#      the WSI stage's own cohort's bags (rules/wsi.smk; control task) -> concept
#      embeddings, prepared cohort, repeated folds -> train {cohort}/{task}/{job}/r{repeat} (every fold
#      of one repeat; a job is one method, or every run of the task with train_bundle: task) and
#      oracles {cohort} (every task) -> metrics.json (summaries from the fold records) -> tables, Fig. 3.
# Each rule's params hold only the preset keys it reads (a figure-only edit reruns only the figure);
# wildcards are constrained per rule.
from repro.papers.tmevolve import grid as tmevolve_grid

TMEVOLVE = preset("tmevolve")
TMEVOLVE_DIR = f"results/tmevolve/{TMEVOLVE['cohort']}"
TMEVOLVE_RUNS = tmevolve_grid.experiment_runs(TMEVOLVE)
TMEVOLVE_SLIDES = tmevolve_grid.spatial_slide_ids(TMEVOLVE["spatial"]["n_slides"])  # the main cohort's slides
TMEVOLVE_JOBS = tmevolve_grid.train_jobs(TMEVOLVE)  # cohort/task/job -> the runs it trains
TMEVOLVE_TRAIN_FILES = tmevolve_grid.train_files(TMEVOLVE)  # path -> cohort
TMEVOLVE_ORACLE_FILES = {tmevolve_grid.oracle_file(c): c for c in tmevolve_grid.cohorts(TMEVOLVE)}
# Fig. 3 traces TMEvolve of repeat 0 on the main cohort's survival task: the weights of its training job
TMEVOLVE_FIG3_MODEL = tmevolve_grid.job_file(TMEVOLVE, f"{TMEVOLVE['cohort']}/survival/tmevolve")
# Fig. 3's C-index panel: every method, the shuffle controls, the oracles and random scores
TMEVOLVE_FIG3_BARS = [
    *TMEVOLVE["methods"],
    *[f"{tmevolve_grid.SHUFFLED}{m}" for m in TMEVOLVE.get("shuffle_controls", [])],
    *tmevolve_grid.ORACLES,
]
TMEVOLVE_FIG3_RUNS = [
    f"{TMEVOLVE['cohort']}/survival/{m}" for m in TMEVOLVE_FIG3_BARS if m not in tmevolve_grid.ORACLES
]
TMEVOLVE_FIG3_TRAIN = tmevolve_grid.train_files(
    TMEVOLVE, runs=TMEVOLVE_FIG3_RUNS
)  # not the ablations, not the control cohort
TMEVOLVE_TABLES = {t: f"reports/tmevolve_{t}" for t in ("table1", "table3", "table4")}
TMEVOLVE_COHORT = "[A-Za-z0-9_.-]+"  # a WSI cohort name
TMEVOLVE_TASK = "survival|subtype|gene"
TMEVOLVE_TRAINED = r"(?!oracle_|random\b)[A-Za-z0-9_]+"  # a job: a method (not an oracle), or "all"

register_targets(
    "tmevolve",
    [
        "reports/tmevolve_fig3.pdf",
        *[f"{stem}.{ext}" for stem in TMEVOLVE_TABLES.values() for ext in ("csv", "md")],
        "results/tmevolve/metrics.json",
        *[f"results/tmevolve/{c}/encoder_probe.json" for c in tmevolve_grid.cohorts(TMEVOLVE)],
    ],
)


rule tmevolve_concepts:
    output:
        emb="results/tmevolve/concepts/minilm.npz",
    log:
        logs("tmevolve/concepts"),
    benchmark:
        bench("tmevolve/concepts")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    script:
        "../scripts/tmevolve/concepts.py"


rule tmevolve_spatial_cohort:
    output:
        manifest="results/tmevolve/{cohort}/cohort/manifest.csv",
        slides=expand("resources/tmevolve/{{cohort}}/slides/{slide}.tiff", slide=TMEVOLVE_SLIDES),
        truth=expand("results/tmevolve/{{cohort}}/cohort/truth/{slide}.npz", slide=TMEVOLVE_SLIDES),
    log:
        logs("tmevolve/spatial_cohort/{cohort}"),
    benchmark:
        bench("tmevolve/spatial_cohort/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/wsi.yaml"
    threads: 2
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "spatial"),
        # a planted patch is drawn as one patch of the WSI stage's grid
        patch_um=lambda wc: preset("wsi", "patch", "patch_size") * preset("wsi", "patch", "target_mpp"),
    script:
        "../scripts/tmevolve/spatial_cohort.py"


rule tmevolve_wsi:
    input:
        slides=expand("resources/tmevolve/{{cohort}}/slides/{slide}.tiff", slide=TMEVOLVE_SLIDES),
        truth=expand("results/tmevolve/{{cohort}}/cohort/truth/{slide}.npz", slide=TMEVOLVE_SLIDES),
    output:
        bags="results/tmevolve/{cohort}/cohort/bags.h5",
        summary="results/tmevolve/{cohort}/cohort/bags.json",
    log:
        logs("tmevolve/wsi/{cohort}"),
    benchmark:
        bench("tmevolve/wsi/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/wsi.yaml"
    threads: 2
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        # the WSI stage's settings and this cohort's encoder (all encoders when it is not configured,
        # so that the error lists them)
        cfg=lambda wc: {
            **preset_slice("wsi", "reader", "tissue", "patch", "features"),
            "encoders": {e: s for e, s in preset("wsi", "encoders").items() if e == TMEVOLVE["encoder"]}
            or preset("wsi", "encoders"),
        },
        encoder=TMEVOLVE["encoder"],
        device=config["device"],
    script:
        "../scripts/tmevolve/wsi.py"


rule tmevolve_prepare:
    input:
        unpack(lambda wc: tmevolve_grid.cohort_files(TMEVOLVE, wc.cohort)),
    output:
        dataset="results/tmevolve/{cohort}/dataset.pt",
    log:
        logs("tmevolve/prepare/{cohort}"),
    benchmark:
        bench("tmevolve/prepare/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "pca_dim", "knn_k"),
    script:
        "../scripts/tmevolve/prepare.py"


rule tmevolve_folds:
    input:
        manifest=lambda wc: tmevolve_grid.cohort_files(TMEVOLVE, wc.cohort)["manifest"],
    output:
        folds="results/tmevolve/{cohort}/folds.csv",
    log:
        logs("tmevolve/folds/{cohort}"),
    benchmark:
        bench("tmevolve/folds/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "n_folds", "n_repeats"),
    script:
        "../scripts/tmevolve/folds.py"


rule tmevolve_train:
    input:
        dataset="results/tmevolve/{cohort}/dataset.pt",
        folds="results/tmevolve/{cohort}/folds.csv",
        concepts="results/tmevolve/concepts/minilm.npz",
    output:
        metrics="results/tmevolve/{cohort}/train/{task}/{job}/r{repeat}.json",
        model="results/tmevolve/{cohort}/train/{task}/{job}/r{repeat}.pt",
    log:
        logs("tmevolve/train/{cohort}/{task}/{job}/r{repeat}"),
    benchmark:
        bench("tmevolve/train/{cohort}/{task}/{job}/r{repeat}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
        task=TMEVOLVE_TASK,
        job=TMEVOLVE_TRAINED,
        repeat=r"\d+",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=lambda wc: preset("tmevolve", "train_runtime_min")
        * len(TMEVOLVE_JOBS[f"{wc.cohort}/{wc.task}/{wc.job}"]),
    params:
        # the optimiser, every model's settings, and Q and K of this job's task only
        cfg=lambda wc: {
            **preset_slice("tmevolve", "epochs", "lr", "weight_decay", "model", "n_folds", "knn_k"),
            "qk": {task: qk for task, qk in preset("tmevolve", "qk").items() if task == wc.task},
        },
        methods=lambda wc: TMEVOLVE_JOBS[f"{wc.cohort}/{wc.task}/{wc.job}"],
    script:
        "../scripts/tmevolve/train.py"


rule tmevolve_oracles:
    input:
        dataset="results/tmevolve/{cohort}/dataset.pt",
        folds="results/tmevolve/{cohort}/folds.csv",
    output:
        oracles=tmevolve_grid.oracle_file("{cohort}"),
    log:
        logs("tmevolve/oracles/{cohort}"),
    benchmark:
        bench("tmevolve/oracles/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "n_folds", "n_repeats", "tasks"),
        oracles=tmevolve_grid.ORACLES,
    script:
        "../scripts/tmevolve/oracles.py"


rule tmevolve_encoder_probe:
    input:
        dataset="results/tmevolve/{cohort}/dataset.pt",
        folds="results/tmevolve/{cohort}/folds.csv",
    output:
        probe="results/tmevolve/{cohort}/encoder_probe.json",
    log:
        logs("tmevolve/encoder_probe/{cohort}"),
    benchmark:
        bench("tmevolve/encoder_probe/{cohort}")
    wildcard_constraints:
        cohort=TMEVOLVE_COHORT,
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "n_folds", "n_repeats", "tasks"),
    script:
        "../scripts/tmevolve/encoder_probe.py"


rule tmevolve_aggregate:
    input:
        train=built(TMEVOLVE_TRAIN_FILES),
        oracles=built(TMEVOLVE_ORACLE_FILES),
    output:
        metrics="results/tmevolve/metrics.json",
    log:
        logs("tmevolve/aggregate"),
    benchmark:
        bench("tmevolve/aggregate")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "methods", "ablations", "grid", "cohort", "control_cohort"),
        runs=TMEVOLVE_RUNS,
        partial=partial_build(),
        train_cohorts=[TMEVOLVE_TRAIN_FILES[path] for path in built(TMEVOLVE_TRAIN_FILES)],
        oracle_cohorts=[TMEVOLVE_ORACLE_FILES[path] for path in built(TMEVOLVE_ORACLE_FILES)],
    script:
        "../scripts/tmevolve/aggregate.py"


rule tmevolve_tables:
    input:
        metrics="results/tmevolve/metrics.json",
        upstream_logs=logs_of(rules.tmevolve_aggregate),
    output:
        *[f"{stem}.{ext}" for stem in TMEVOLVE_TABLES.values() for ext in ("csv", "md")],
    log:
        logs("tmevolve/tables"),
    benchmark:
        bench("tmevolve/tables")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    params:
        cfg=lambda wc: preset_slice(
            "tmevolve", "tasks", "methods", "ablations", "grid", "cohort", "control_cohort", "shuffle_controls"
        ),
        stems=TMEVOLVE_TABLES,
        titles={
            "table1": "TMEvolve Table 1: every method, shuffle control and oracle on the three tasks, spatial and control cohorts (mean +- sd over folds x repeats)",
            "table3": "TMEvolve Table 3: ablations (mean +- sd over folds)",
            "table4": "TMEvolve Table 4: evolution steps Q x regions K (mean +- sd over folds)",
        },
    script:
        "../scripts/tmevolve/tables.py"


rule tmevolve_fig3:
    input:
        dataset=f"{TMEVOLVE_DIR}/dataset.pt",
        folds=f"{TMEVOLVE_DIR}/folds.csv",
        concepts="results/tmevolve/concepts/minilm.npz",
        model=TMEVOLVE_FIG3_MODEL,
        train=list(TMEVOLVE_FIG3_TRAIN),
        oracles=tmevolve_grid.oracle_file(TMEVOLVE["cohort"]),
        claims=repo_path("workflow/claims/tmevolve.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
        upstream_logs=logs_of(
            rules.tmevolve_prepare,
            rules.tmevolve_folds,
            rules.tmevolve_concepts,
            rules.tmevolve_train,
            rules.tmevolve_oracles,
            files=[
                f"{TMEVOLVE_DIR}/dataset.pt",
                f"{TMEVOLVE_DIR}/folds.csv",
                "results/tmevolve/concepts/minilm.npz",
                TMEVOLVE_FIG3_MODEL,
                *TMEVOLVE_FIG3_TRAIN,
                tmevolve_grid.oracle_file(TMEVOLVE["cohort"]),
            ],
        ),
    output:
        fig=figure("tmevolve", "fig3"),
        table="reports/tmevolve_fig3.csv",
    log:
        logs("tmevolve/fig3"),
    benchmark:
        bench("tmevolve/fig3")
    conda:
        "../../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        cfg=lambda wc: preset_slice("tmevolve", "figure"),
        methods=TMEVOLVE_FIG3_BARS,
        runs=TMEVOLVE_FIG3_RUNS,
        cohort=TMEVOLVE["cohort"],
        slides_dir=f"resources/tmevolve/{TMEVOLVE['cohort']}/slides",
    script:
        "../scripts/tmevolve/fig3.py"
