"""repro.resources: per-rule mem_mb/runtime proposed from hand-written Snakemake benchmark files."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repro.resources import collect, propose, read_benchmark, rule_of, to_markdown, to_set_resources
from tests.conftest import run_snakemake

REPO = Path(__file__).resolve().parents[2]
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def bench(path: Path, *rows: tuple) -> Path:
    """A benchmark TSV as Snakemake 9 writes it; rows are (s, max_rss, cpu_time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{s}\t0:00:00\t{rss}\t900.0\t{rss}\t{rss}\t0.1\t0.2\t50.0\t{cpu}\n" for s, rss, cpu in rows)
    path.write_text(HEADER + body)
    return path


@pytest.fixture
def benchmarks(tmp_path):
    root = tmp_path / "benchmarks"
    # two jobs of one rule (a wildcard grid): the larger one sets the proposal
    bench(root / "cmcboot/simulate/n100/rep0.tsv", (30.0, 300.0, 29.0))
    bench(root / "cmcboot/simulate/n1000/rep0.tsv", (95.0, 812.0, 180.0))
    # benchmark: repeat("...", 3): three rows in one file
    bench(root / "cmcboot/fig1.tsv", (4.0, 120.0, 3.5), (5.5, 130.0, 4.0), (4.5, 125.0, 3.6))
    # a job too short for a memory sample: Snakemake writes NA
    bench(root / "artifact_evaluation.tsv", (0.4, "NA", "NA"))
    return root


def test_rule_of_follows_the_benchmark_layout(tmp_path):
    assert rule_of(tmp_path / "cmcboot/simulate/n100/rep0.tsv", tmp_path) == "cmcboot_simulate"
    assert rule_of(tmp_path / "cmcboot/fig1.tsv", tmp_path) == "cmcboot_fig1"
    assert rule_of(tmp_path / "artifact_evaluation.tsv", tmp_path) == "artifact_evaluation"


def test_each_job_benchmarks_under_its_own_rule(tmp_path):
    """A benchmark under another step's name files the rule's measurements, and the resources proposed from them
    (a canary's, a cluster profile's set-resources), under a rule that does not exist. One dry run of the whole
    report covers every paper's jobs."""
    proc = run_snakemake(tmp_path, "-n", "reports/artifact_evaluation.md")
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    (?!benchmark:).*\n)*    benchmark: (\S+)$", proc.stdout, re.M)
    assert len({rule for rule, _ in jobs}) > 100, proc.stdout[-3000:]
    wrong = {rule: path for rule, path in jobs if rule_of(Path(path), Path("benchmarks")) != rule}
    assert not wrong, wrong


def test_proposal_covers_the_largest_job_with_headroom(benchmarks):
    proposals = propose(collect(benchmarks))
    assert list(proposals) == ["artifact_evaluation", "cmcboot_fig1", "cmcboot_simulate"]
    sim = proposals["cmcboot_simulate"]
    assert (sim.n_files, sim.n_runs, sim.max_seconds, sim.max_rss_mb) == (2, 2, 95.0, 812.0)
    # 812 MB * 1.5 = 1218 -> next 100 MB: 1300; 95 s * 2 = 190 s -> 4 minutes (rounded up)
    assert (sim.mem_mb, sim.runtime) == (1300, 4)
    # mean busy CPUs over jobs: (29/30 + 180/95) / 2
    assert sim.mean_cpus == pytest.approx((29 / 30 + 180 / 95) / 2)
    assert sim.max_cpu_seconds == 180.0


def test_repeats_count_and_floors_apply(benchmarks):
    proposals = propose(collect(benchmarks))
    fig = proposals["cmcboot_fig1"]
    assert (fig.n_files, fig.n_runs, fig.max_seconds, fig.max_rss_mb) == (1, 3, 5.5, 130.0)
    assert (fig.mem_mb, fig.runtime) == (500, 1)  # 195 MB and 11 s fall under the floors
    ae = proposals["artifact_evaluation"]
    assert ae.max_rss_mb is None and ae.mean_cpus is None and ae.max_cpu_seconds is None and ae.mem_mb == 500


def test_headroom_is_a_parameter(benchmarks):
    sim = propose(collect(benchmarks), mem_headroom=1.0, time_headroom=1.0, min_mem_mb=100)["cmcboot_simulate"]
    assert (sim.mem_mb, sim.runtime) == (900, 2)  # 812 -> 900; 95 s -> 2 min
    with pytest.raises(ValueError, match="headroom"):
        propose(collect(benchmarks), mem_headroom=0.8)


def test_set_resources_block_is_profile_yaml(benchmarks):
    block = yaml.safe_load(to_set_resources(propose(collect(benchmarks))))
    assert block["set-resources"]["cmcboot_simulate"] == {"mem_mb": 1300, "runtime": 4}
    assert "| cmcboot_simulate | 2 | 2 | 95.0 | 812 | 1.43 | 180.0 | 1300 | 4 |" in to_markdown(propose(collect(benchmarks)))


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "b" / "x.tsv"
    bad.parent.mkdir()
    bad.write_text("time\tmemory\n1\t2\n")
    with pytest.raises(ValueError, match=r"x\.tsv.*columns \['s', 'max_rss', 'cpu_time'\] missing"):
        read_benchmark(bad, "x")
    bench(bad, (1.0, "lots", 1.0))
    with pytest.raises(ValueError, match=r"x\.tsv: column 'max_rss' holds 'lots'"):
        read_benchmark(bad, "x")
    bad.write_text(HEADER)
    with pytest.raises(ValueError, match="no rows"):
        read_benchmark(bad, "x")
    with pytest.raises(ValueError, match="does not exist"):
        collect(tmp_path / "nowhere")


def test_command_line_prints_the_block(benchmarks):
    out = subprocess.run([sys.executable, str(REPO / "workflow/scripts/propose_resources.py"), str(benchmarks),
                          "--format", "yaml"], capture_output=True, text=True, check=True).stdout
    assert yaml.safe_load(out)["set-resources"]["cmcboot_fig1"] == {"mem_mb": 500, "runtime": 1}
