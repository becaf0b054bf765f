#!/usr/bin/env python3
"""Cluster status command for profiles/cluster-generic: `status.py JOBID` prints running, success or failed.

Asks `sacct` (accounting, knows finished jobs for good) and falls back to `squeue --states=all`
(knows finished jobs for MinJobAge seconds) where there is no accounting database. A job neither
knows is reported failed, with the reason on stderr: Snakemake would otherwise wait for it forever.
"""
import subprocess
import sys
import time

RUNNING = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_FED",
           "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
SUCCESS = {"COMPLETED"}
FAILED = {"FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE",
          "PREEMPTED", "REVOKED"}


def status_of(state: str) -> str:
    """Snakemake's status for a SLURM job state (sacct writes e.g. 'CANCELLED by 0', squeue 'CANCELLED')."""
    word = state.split()[0].rstrip("+").upper() if state.strip() else ""
    if word in SUCCESS:
        return "success"
    if word in FAILED:
        return "failed"
    if word in RUNNING:
        return "running"
    raise ValueError(f"unknown SLURM job state {state!r}")


def query(cmd: list[str]) -> str | None:
    """The first state line a command prints, or None when it fails or knows nothing of the job."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return lines[0] if out.returncode == 0 and lines else None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} JOBID", file=sys.stderr)
        return 2
    jobid = argv[1].split(";")[0]  # sbatch --parsable prints 'id;cluster' on multi-cluster sites
    for attempt in range(3):
        state = query(["sacct", "-j", jobid, "-X", "--noheader", "--parsable2", "--format=State"])
        if state is None:
            state = query(["squeue", "-j", jobid, "--states=all", "--noheader", "--format=%T"])
        if state is not None:
            print(status_of(state))
            return 0
        time.sleep(2 * (attempt + 1))  # a job just submitted may not be listed yet
    print(f"status.py: neither sacct nor squeue knows SLURM job {jobid}; reporting it failed",
          file=sys.stderr)
    print("failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
