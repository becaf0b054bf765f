# incrimination: "Model Forensics: Investigating Whether Concerning Behavior Reflects Misalignment" (paper 14).
# A testbed where the motive is known: scripted agents with planted motives in six environments, and the
# two-step protocol (hypotheses from the CoT, validation by single-factor interventions) scored against them;
# then the protocol applied to the agents under investigation (SmolLM2-135M through repro.llm).
# DAG: testbed {motive} + investigate {agent} -> aggregate (metrics.json, tables) -> fig1, fig2, table1.
from repro.papers.incrimination import grid as incrimination_grid

register_targets(
    "incrimination",
    [
        "reports/incrimination_fig1.pdf",
        "reports/incrimination_fig2.pdf",
        "reports/incrimination_table1.csv",
        "reports/incrimination_table1.md",
        "results/incrimination/metrics.json",
    ],
)


for _scale in ("smoke", "small", "paper"):
    incrimination_grid.check_preset(config["incrimination"][_scale], f"incrimination.{_scale}")


rule incrimination_testbed:
    output:
        runs="results/incrimination/testbed/{motive}.json",
    log:
        logs("incrimination/testbed/{motive}"),
    benchmark:
        bench("incrimination/testbed/{motive}")
    wildcard_constraints:
        motive="|".join(incrimination_grid.MOTIVES),
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=lambda wc: preset("incrimination", "runtime_min"),
    params:
        cfg=lambda wc: incrimination_grid.testbed_config(preset("incrimination")),
    script:
        "../scripts/incrimination/testbed.py"


rule incrimination_investigate:
    input:
        model=lambda wc: incrimination_grid.agent_input(preset("incrimination"), wc.agent),
    output:
        runs="results/incrimination/agents/{agent}.json",
    log:
        logs("incrimination/investigate/{agent}"),
    benchmark:
        bench("incrimination/investigate/{agent}")
    wildcard_constraints:
        agent=r"[\w.-]+",
    conda:
        "../../envs/llm.yaml"
    # one thread: two OpenMP threads spin-wait each other on a busy node (see repro.llm's benchmark)
    threads: 1
    resources:
        mem_mb=4000,
        runtime=lambda wc: preset("incrimination", "runtime_min"),
    params:
        cfg=lambda wc: incrimination_grid.agent_config(preset("incrimination"), wc.agent),
        device=config["device"],
    script:
        "../scripts/incrimination/investigate.py"


rule incrimination_aggregate:
    input:
        testbed=expand(rules.incrimination_testbed.output.runs, motive=incrimination_grid.MOTIVES),
        agents=lambda wc: expand(
            rules.incrimination_investigate.output.runs, agent=[a["name"] for a in preset("incrimination", "agents")]
        ),
    output:
        metrics="results/incrimination/metrics.json",
        accuracy="results/incrimination/accuracy.csv",
        effects="results/incrimination/effects.csv",
        verdicts="results/incrimination/verdicts.csv",
    log:
        logs("incrimination/aggregate"),
    benchmark:
        bench("incrimination/aggregate")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    params:
        cfg=lambda wc: preset_slice("incrimination", "faithfulness", "samples", "claims"),
    script:
        "../scripts/incrimination/aggregate.py"


rule incrimination_fig1:
    input:
        table=rules.incrimination_aggregate.output.accuracy,
        upstream_logs=logs_of(rules.incrimination_aggregate),
    output:
        pdf=figure("incrimination", "fig1"),
        csv="reports/incrimination_fig1.csv",
    log:
        logs("incrimination/fig1"),
    benchmark:
        bench("incrimination/fig1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/incrimination/fig1.py"


rule incrimination_fig2:
    input:
        table=rules.incrimination_aggregate.output.effects,
        upstream_logs=logs_of(rules.incrimination_aggregate),
    output:
        pdf=figure("incrimination", "fig2"),
        csv="reports/incrimination_fig2.csv",
    log:
        logs("incrimination/fig2"),
    benchmark:
        bench("incrimination/fig2")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        **SMALL_JOB,
    script:
        "../scripts/incrimination/fig2.py"


rule incrimination_table1:
    input:
        table=rules.incrimination_aggregate.output.verdicts,
        upstream_logs=logs_of(rules.incrimination_aggregate),
    output:
        csv="reports/incrimination_table1.csv",
        md="reports/incrimination_table1.md",
    log:
        logs("incrimination/table1"),
    benchmark:
        bench("incrimination/table1")
    conda:
        "../../envs/base.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/incrimination/table1.py"
