# groupfdr: "Model-Agnostic FDR Control via Group Gaussian Mirror and Permutation SHAP".
# DAG: macrodata table -> real-data table; simulate + select per {setting}/{method}/chunk{chunk}
# -> block-size-1 check -> aggregate (metrics.json) -> Fig. 1, Fig. 2, Table 1; runtime benchmark;
# null sign symmetry per {design} of the symmetry grid -> Table 3.
# Each rule's params hold only the preset keys it reads (repro.papers.groupfdr.grid), so editing a
# figure-only key such as figure_q reruns only the figures. Rule files share one namespace, so the
# grid module is imported under the paper's name.
from repro.papers.groupfdr import grid as groupfdr_grid

register_targets(
    "groupfdr",
    [
        "reports/groupfdr_fig1.pdf",
        "reports/groupfdr_fig2.pdf",
        "reports/groupfdr_table1.md",
        "reports/groupfdr_table2.md",
        "reports/groupfdr_table3.md",
        "results/groupfdr/metrics.json",
        "results/groupfdr/runtime.json",
    ],
)


rule groupfdr_macrodata:
    output:
        csv="resources/groupfdr/macrodata_long.csv",
    log:
        logs("groupfdr/macrodata"),
    benchmark:
        bench("groupfdr/macrodata")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/groupfdr/macrodata.py"


rule groupfdr_run:
    input:
        # a selector that differs from another only in its rule reuses that one's statistics
        statistics=lambda wc: groupfdr_grid.statistics_input(preset("groupfdr"), wc.setting, wc.method, wc.chunk),
    output:
        run="results/groupfdr/runs/{setting}/{method}/chunk{chunk}.json",
    log:
        logs("groupfdr/run/{setting}/{method}/chunk{chunk}"),
    benchmark:
        bench("groupfdr/run/{setting}/{method}/chunk{chunk}")
    wildcard_constraints:
        setting=r"[a-z0-9_]+",
        method=r"[a-z0-9_]+",
        chunk=r"[0-9]+",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        cfg=lambda wc: groupfdr_grid.run_config(preset("groupfdr"), wc.setting, wc.method),
    script:
        "../scripts/groupfdr/run.py"


rule groupfdr_block1:
    output:
        check="results/groupfdr/block1.json",
    log:
        logs("groupfdr/block1"),
    benchmark:
        bench("groupfdr/block1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: preset("groupfdr", "block1"),
    script:
        "../scripts/groupfdr/block1.py"


rule groupfdr_aggregate:
    input:
        runs=lambda wc: groupfdr_grid.chunk_targets(preset("groupfdr")),
        block1="results/groupfdr/block1.json",
        claims=repo_path("workflow/claims/groupfdr.yaml"),
        schema=repo_path("workflow/schemas/claims.schema.yaml"),
    output:
        metrics="results/groupfdr/metrics.json",
        summary="results/groupfdr/summary.csv",
    log:
        logs("groupfdr/aggregate"),
    benchmark:
        bench("groupfdr/aggregate")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cfg=lambda wc: groupfdr_grid.aggregate_config(preset("groupfdr")),
    script:
        "../scripts/groupfdr/aggregate.py"


rule groupfdr_realdata:
    input:
        table="resources/groupfdr/macrodata_long.csv",
        upstream_logs=logs_of(rules.groupfdr_macrodata),
    output:
        csv="reports/groupfdr_table2.csv",
        md="reports/groupfdr_table2.md",
    log:
        logs("groupfdr/realdata"),
    benchmark:
        bench("groupfdr/realdata")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: preset("groupfdr", "realdata"),
    script:
        "../scripts/groupfdr/realdata.py"


rule groupfdr_runtime:
    output:
        runtime="results/groupfdr/runtime.json",
    log:
        logs("groupfdr/runtime"),
    benchmark:
        bench("groupfdr/runtime")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: groupfdr_grid.runtime_config(preset("groupfdr")),
    script:
        "../scripts/groupfdr/runtime.py"


rule groupfdr_fig1:
    input:
        summary="results/groupfdr/summary.csv",
        upstream_logs=logs_of(rules.groupfdr_aggregate),
    output:
        pdf=figure("groupfdr", "fig1"),
        csv="reports/groupfdr_fig1.csv",
    log:
        logs("groupfdr/fig1"),
    benchmark:
        bench("groupfdr/fig1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: groupfdr_grid.figure_config(preset("groupfdr")),
    script:
        "../scripts/groupfdr/fig1.py"


rule groupfdr_fig2:
    input:
        run=lambda wc: f"results/groupfdr/runs/{preset('groupfdr', 'fig2_setting')}/group_gm/chunk0.json",
        upstream_logs=lambda wc: logs_of(
            rules.groupfdr_run,
            files=f"results/groupfdr/runs/{preset('groupfdr', 'fig2_setting')}/group_gm/chunk0.json",
        ),
    output:
        pdf=figure("groupfdr", "fig2"),
        csv="reports/groupfdr_fig2.csv",
        curve="reports/groupfdr_fig2_fdp_curve.csv",
    log:
        logs("groupfdr/fig2"),
    benchmark:
        bench("groupfdr/fig2")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: groupfdr_grid.figure_config(preset("groupfdr")),
    script:
        "../scripts/groupfdr/fig2.py"


rule groupfdr_table1:
    input:
        summary="results/groupfdr/summary.csv",
        upstream_logs=logs_of(rules.groupfdr_aggregate),
    output:
        csv="reports/groupfdr_table1.csv",
        md="reports/groupfdr_table1.md",
    log:
        logs("groupfdr/table1"),
    benchmark:
        bench("groupfdr/table1")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/groupfdr/table1.py"


rule groupfdr_symmetry:
    output:
        run="results/groupfdr/symmetry/{design}.json",
    log:
        logs("groupfdr/symmetry/{design}"),
    benchmark:
        bench("groupfdr/symmetry/{design}")
    wildcard_constraints:
        design=r"[a-z0-9_]+",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        cfg=lambda wc: groupfdr_grid.symmetry_config(preset("groupfdr"), wc.design),
    script:
        "../scripts/groupfdr/symmetry.py"


rule groupfdr_table3:
    input:
        runs=lambda wc: groupfdr_grid.symmetry_targets(preset("groupfdr")),
        upstream_logs=lambda wc: logs_of(
            rules.groupfdr_symmetry, files=groupfdr_grid.symmetry_targets(preset("groupfdr"))
        ),
    output:
        csv="reports/groupfdr_table3.csv",
        md="reports/groupfdr_table3.md",
        long="results/groupfdr/symmetry_summary.csv",
    log:
        logs("groupfdr/table3"),
    benchmark:
        bench("groupfdr/table3")
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/groupfdr/table3.py"
