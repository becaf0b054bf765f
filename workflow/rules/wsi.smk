# WSI stage, shared by the pathology papers: synthetic or remote slides -> tissue masks ->
# patch grids -> patch features -> one bags file per cohort and encoder, which MIL models read.
# Rules fan out per slide ({cohort}/{slide}); the slide list of a cohort is fixed by the preset
# (synthetic: S0000..) or by the remote manifest, so the DAG is known up front.
# Wildcards are constrained per rule (a cohort, slide or encoder name is [A-Za-z0-9_.-]+), so that
# nothing here constrains another file's rules.
from repro.wsi.cohort import cohort_slides, slide_path

validate_block("wsi")
source_of(
    "wsi",
    why="wsi.source chooses nothing: the {cohort} of the target names the slides, 'synthetic' or "
    "wsi.<scale>.remote.cohort (docs/stages/wsi.md, Choosing the slides)",
)
WSI_SYNTHETIC_SLIDES = cohort_slides(preset("wsi"), "synthetic")
WSI_NAME = "[A-Za-z0-9_.-]+"
# the checksum file of a fetched slide, which every job that reads the slide checks (none for synthetic slides)
wsi_slide_sha256 = lambda wc: (
    [] if wc.cohort == "synthetic" else sidecar(slide_path(preset("wsi"), wc.cohort, wc.slide, REPO))
)


rule wsi_cohort:
    output:
        manifest="results/wsi/synthetic/manifest.csv",
        slides=expand("resources/wsi/synthetic/slides/{slide}.tiff", slide=WSI_SYNTHETIC_SLIDES),
        truth=expand("results/wsi/synthetic/truth/{slide}.npz", slide=WSI_SYNTHETIC_SLIDES),
    log:
        logs("wsi/cohort/synthetic"),
    benchmark:
        bench("wsi/cohort/synthetic")
    conda:
        "../../envs/wsi.yaml"
    threads: 2
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cfg=lambda wc: preset("wsi", "synthetic"),
    script:
        "../scripts/wsi/cohort.py"


rule wsi_fetch:
    input:
        manifest=lambda wc: repo_path(preset("wsi", "remote", "manifest")),
    output:
        slide="resources/wsi/{cohort}/slides/{slide}.{ext}",
        slide_sha256=sidecar("resources/wsi/{cohort}/slides/{slide}.{ext}"),
    log:
        logs("wsi/fetch/{cohort}/{slide}.{ext}"),
    benchmark:
        bench("wsi/fetch/{cohort}/{slide}.{ext}")
    wildcard_constraints:
        cohort="(?!synthetic/)[A-Za-z0-9_.-]+",
        slide=WSI_NAME,
        ext="svs|tif|tiff|ndpi|mrxs|scn|bif|vms|vmu|svslide",
    retries: 2
    conda:
        "../../envs/wsi.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=120,
    params:
        allow_unverified=lambda wc: preset("wsi", "remote", "allow_unverified"),
    script:
        "../scripts/wsi/fetch.py"


rule wsi_remote_manifest:
    input:
        manifest=lambda wc: repo_path(preset("wsi", "remote", "manifest")),
    output:
        manifest="results/wsi/{cohort}/manifest.csv",
    log:
        logs("wsi/remote_manifest/{cohort}"),
    benchmark:
        bench("wsi/remote_manifest/{cohort}")
    wildcard_constraints:
        cohort="(?!synthetic/)[A-Za-z0-9_.-]+",
    conda:
        "../../envs/wsi.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/wsi/remote_manifest.py"


rule wsi_tissue:
    input:
        slide=lambda wc: slide_path(preset("wsi"), wc.cohort, wc.slide, REPO),
        slide_sha256=wsi_slide_sha256,
    output:
        mask="results/wsi/{cohort}/tissue/{slide}.npz",
    log:
        logs("wsi/tissue/{cohort}/{slide}"),
    benchmark:
        bench("wsi/tissue/{cohort}/{slide}")
    wildcard_constraints:
        cohort=WSI_NAME,
        slide=WSI_NAME,
    conda:
        "../../envs/wsi.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("wsi", "reader", "tissue"),
    script:
        "../scripts/wsi/tissue.py"


rule wsi_patch:
    input:
        slide=lambda wc: slide_path(preset("wsi"), wc.cohort, wc.slide, REPO),
        slide_sha256=wsi_slide_sha256,
        mask="results/wsi/{cohort}/tissue/{slide}.npz",
    output:
        coords="results/wsi/{cohort}/patches/{slide}.h5",
        preview="results/wsi/{cohort}/previews/{slide}.png",
    log:
        logs("wsi/patch/{cohort}/{slide}"),
    benchmark:
        bench("wsi/patch/{cohort}/{slide}")
    wildcard_constraints:
        cohort=WSI_NAME,
        slide=WSI_NAME,
    conda:
        "../../envs/wsi.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        cfg=lambda wc: preset_slice("wsi", "reader", "patch"),
    script:
        "../scripts/wsi/patch.py"


rule wsi_features:
    input:
        slide=lambda wc: slide_path(preset("wsi"), wc.cohort, wc.slide, REPO),
        slide_sha256=wsi_slide_sha256,
        coords="results/wsi/{cohort}/patches/{slide}.h5",
    output:
        features="results/wsi/{cohort}/features/{encoder}/{slide}.h5",
    log:
        logs("wsi/features/{cohort}/{encoder}/{slide}"),
    benchmark:
        bench("wsi/features/{cohort}/{encoder}/{slide}")
    wildcard_constraints:
        cohort=WSI_NAME,
        encoder=WSI_NAME,
        slide=WSI_NAME,
    conda:
        "../../envs/wsi.yaml"
    # threads = the encoder's torch threads (features_step; a reader thread overlaps the slide reads).
    # One per job: slides fan out across cores instead. Two OpenMP threads on a busy node
    # spin-wait each other (measured here: 2 img/s with 2 threads vs 23 with 1 under load).
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        # the reader, the feature settings and this job's encoder (all encoders when it is not
        # configured, so that the error lists them)
        cfg=lambda wc: {
            **preset_slice("wsi", "reader", "features"),
            "encoders": {e: spec for e, spec in preset("wsi", "encoders").items() if e == wc.encoder}
            or preset("wsi", "encoders"),
        },
        device=config["device"],
    script:
        "../scripts/wsi/features.py"


rule wsi_bags:
    input:
        manifest="results/wsi/{cohort}/manifest.csv",
        features=lambda wc: expand(
            "results/wsi/{cohort}/features/{encoder}/{slide}.h5",
            cohort=wc.cohort,
            encoder=wc.encoder,
            slide=cohort_slides(preset("wsi"), wc.cohort, REPO),
        ),
        truth=lambda wc: (
            expand("results/wsi/synthetic/truth/{slide}.npz", slide=WSI_SYNTHETIC_SLIDES)
            if wc.cohort == "synthetic"
            else []
        ),
    output:
        bags="results/wsi/{cohort}/bags/{encoder}.h5",
        summary="results/wsi/{cohort}/bags/{encoder}.json",
    log:
        logs("wsi/bags/{cohort}/{encoder}"),
    benchmark:
        bench("wsi/bags/{cohort}/{encoder}")
    wildcard_constraints:
        cohort=WSI_NAME,
        encoder=WSI_NAME,
    conda:
        "../../envs/wsi.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    script:
        "../scripts/wsi/bags.py"
