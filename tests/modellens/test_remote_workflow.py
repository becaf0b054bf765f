"""source: remote end to end: a dump written here, served from 127.0.0.1 with its sha256, through the DAG.

The claims that need planted truth (run-every-candidate's cost, routing) come out NOT RUN; a
malformed dump or a wrong checksum stops the build with an error naming it, and nothing lands where
later rules read.
"""

import hashlib
import http.server
import json
import socket
import threading

import pytest

from repro.claims import NOT_RUN, PASS, FAIL, INCONCLUSIVE, evaluate, load_claims
from repro.data.sidecar import read_sidecar
from repro.papers.modellens.synth import LeaderboardConfig, leaderboard_dump, simulate_leaderboard
from tests.conftest import REPO

TARGETS = ["reports/modellens_fig1.pdf", "reports/modellens_table1.md", "reports/modellens_ablations.md",
           "results/modellens/metrics.json"]
DUMP = "resources/modellens/remote/leaderboard.csv"


def _remote(url: str, sha: str | None) -> dict:
    # K = 3: NDCG@K counts only the groups with at least K held-out models (the reference's rule), and the
    # unseen x unseen groups of this 80-model dump hold 2 to 6 (at smoke's K = 10 no seed would have a value)
    sha_part = f", sha256: {sha}" if sha else ""
    smoke = "{text_encoder: hashing, ks: [3], main_k: 3}"
    return {"modellens": f"{{source: remote, remote: {{url: '{url}'{sha_part}}}, smoke: {smoke}}}"}


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_remote_dump_builds_and_unmeasurable_claims_are_not_run(served, tmp_path, workflow_build):
    root, base = served
    lb = simulate_leaderboard(LeaderboardConfig(n_models=80, n_datasets=16), 11)
    leaderboard_dump(lb).to_csv(root / "dump.csv", index=False)
    work = tmp_path / "work"
    workflow_build(work, TARGETS, config=_remote(f"{base}/dump.csv", _sha(root / "dump.csv")))
    assert _sha(work / DUMP) == _sha(root / "dump.csv")
    assert read_sidecar(work / DUMP) == _sha(root / "dump.csv")  # written beside it, checked by every reader
    assert not (work / "reports/modellens_fig2.pdf").exists() and not (work / "reports/modellens_fig3.pdf").exists()
    metrics = json.loads((work / "results/modellens/metrics.json").read_text())
    assert metrics["source"] == "remote" and metrics["regret"] == {} and metrics["routing"] == {}
    ndcg = metrics["ndcg"]["unseen_unseen"]
    assert set(ndcg) == {"random", "popularity", "meta_knn", "text_knn", "mf", "modellens"}
    assert ndcg["modellens"]["per_unit"]["ids"] == ndcg["meta_knn"]["per_unit"]["ids"] == ["0", "1", "2"]
    verdicts = {r.claim.id: r.status for r in evaluate(
        load_claims(REPO / "workflow/claims/modellens.yaml", REPO / "workflow/schemas/claims.schema.yaml"),
        work / "results/modellens/metrics.json")}
    assert verdicts["matches_run_every_candidate_at_fraction_of_cost"] == NOT_RUN
    assert verdicts["routing_topk_beats_random_pool"] == NOT_RUN
    assert verdicts["cold_start_beats_metadata_knn"] in (PASS, FAIL, INCONCLUSIVE)
    ablations = (work / "reports/modellens_ablations.md").read_text()
    assert "no_text" in ablations and "no_unk_dropout" in ablations


@pytest.mark.slow
@pytest.mark.parametrize("case", ["missing_column", "wrong_sha256"])
def test_bad_dump_stops_the_build_and_leaves_nothing(served, tmp_path, workflow_run, case):
    root, base = served
    (root / "dump.csv").write_text("model,dataset,metric\na,d,accuracy\nb,d,accuracy\n")
    sha = "0" * 64 if case == "wrong_sha256" else _sha(root / "dump.csv")
    work = tmp_path / "work"
    proc = workflow_run(work, *TARGETS, config=_remote(f"{base}/dump.csv", sha), check=False)
    log = proc.stdout + proc.stderr + "".join(p.read_text() for p in (work / ".snakemake/log").glob("*.log"))
    assert proc.returncode != 0
    assert ("missing column(s) ['value']" if case == "missing_column" else "sha256 mismatch") in log
    assert not (work / DUMP).exists() and not (work / "results/modellens").exists()
    assert not list((work / "resources/modellens/remote").glob("*.csv*"))


@pytest.mark.slow
def test_a_dump_changed_after_its_fetch_is_refused_by_the_job_that_reads_it(served, tmp_path, workflow_run):
    """modellens_fetch writes the dump's sha256 beside it; one byte of the dump flipped afterwards stops the job
    that reads it, naming the dump and both digests, with nothing under that job's output; deleting the dump (as
    the message says) fetches it again and the job runs on the checked copy."""
    root, base = served
    lb = simulate_leaderboard(LeaderboardConfig(n_models=80, n_datasets=16), 11)
    leaderboard_dump(lb).to_csv(root / "dump.csv", index=False)
    sha, work, emb = _sha(root / "dump.csv"), tmp_path / "work", "results/modellens/text_embeddings.npz"
    config = _remote(f"{base}/dump.csv", sha)
    workflow_run(work, f"{DUMP}.sha256", config=config, cores=1)
    assert (work / f"{DUMP}.sha256").read_text() == f"{sha}  leaderboard.csv\n"
    raw = bytearray((work / DUMP).read_bytes())
    raw[len(raw) // 2] ^= 0x01
    (work / DUMP).write_bytes(bytes(raw))
    proc = workflow_run(work, emb, config=config, check=False, cores=1)
    log = proc.stdout + proc.stderr + "".join(p.read_text() for p in (work / "logs/modellens").rglob("*.log"))
    assert proc.returncode != 0
    assert f"{DUMP}: sha256 is {hashlib.sha256(raw).hexdigest()} but {DUMP}.sha256 records {sha}" in log, log[-3000:]
    assert "delete it to rebuild" in log and not (work / emb).exists()
    (work / DUMP).unlink()
    workflow_run(work, emb, config=config, cores=1)
    assert _sha(work / DUMP) == sha and (work / emb).is_file()


def test_remote_without_url_is_refused_at_parse_time(tmp_path, workflow_run):
    proc = workflow_run(tmp_path, "-n", *TARGETS, config={"modellens": "{source: remote}"}, check=False)
    assert proc.returncode != 0 and "modellens.remote.url is not set" in proc.stdout + proc.stderr


def test_download_without_checksum_is_refused(tmp_path, workflow_run):
    proc = workflow_run(tmp_path, "-n", *TARGETS, config=_remote("http://127.0.0.1:9/dump.csv", None), check=False)
    assert proc.returncode != 0 and "modellens.remote.sha256 is required" in proc.stdout + proc.stderr


class _CutOnce(http.server.BaseHTTPRequestHandler):
    """Serves ``body`` at /dump.csv with Range support; while ``cut`` is set, every transfer dies half-way."""

    body, cut, ranges = b"", True, []

    def log_message(self, *args):
        pass

    def do_GET(self):
        rng = self.headers.get("Range")
        type(self).ranges.append(rng)
        start = int(rng.split("=")[1].split("-")[0]) if rng else 0
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{len(self.body) - 1}/{len(self.body)}")
        self.send_header("Content-Length", str(len(self.body) - start))
        self.end_headers()
        if self.cut:
            self.wfile.write(self.body[start:start + (len(self.body) - start) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(self.body[start:])


@pytest.mark.slow
def test_a_cut_download_resumes_from_its_part_file_on_the_next_run(tmp_path, workflow_run):
    """The first run fails naming the URL and keeps <dump>.part; the next asks only for the missing
    bytes (Range) and lands the whole, verified dump; no other partial file is left beside it."""
    lb = simulate_leaderboard(LeaderboardConfig(n_models=80, n_datasets=16), 11)
    _CutOnce.body, _CutOnce.cut, _CutOnce.ranges = leaderboard_dump(lb).to_csv(index=False).encode(), True, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CutOnce)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/dump.csv"
    work = tmp_path / "work"
    config = _remote(url, hashlib.sha256(_CutOnce.body).hexdigest())
    try:
        failed = workflow_run(work, DUMP, config=config, check=False)
        log = failed.stdout + failed.stderr + (work / "logs/modellens/fetch.log").read_text()
        assert failed.returncode != 0 and url in log
        part = work / (DUMP + ".part")
        assert part.is_file() and 0 < part.stat().st_size < len(_CutOnce.body)
        assert sorted(p.name for p in part.parent.iterdir()) == [part.name]
        kept = part.stat().st_size
        _CutOnce.cut, _CutOnce.ranges = False, []
        workflow_run(work, DUMP, config=config)
    finally:
        server.shutdown()
        server.server_close()
    assert _CutOnce.ranges == [f"bytes={kept}-"]
    assert (work / DUMP).read_bytes() == _CutOnce.body
    assert sorted(p.name for p in (work / DUMP).parent.iterdir()) == ["leaderboard.csv", "leaderboard.csv.sha256"]
