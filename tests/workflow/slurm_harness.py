"""A throw-away single-node SLURM (slurm-wlm + munge from Debian packages) for the cluster tests.

``SingleNodeSlurm(root).start()`` writes its own ``slurm.conf``, munge key and spool folders under
``root`` (nothing in /etc is touched), starts ``munged`` (as user munge), ``slurmctld -i`` and
``slurmd`` in the foreground as child processes, waits until the node is idle, and ``stop()``
ends exactly those processes by pid. Commands that talk to this cluster need ``env()``
(``SLURM_CONF`` points at the private configuration; jobs inherit it through sbatch's
``--export=ALL``).

Facts this relies on (SLURM run as root on a Debian machine): without systemd and usable cgroups the daemons
run with ``proctrack/linuxproc``, ``task/none``, ``jobacct_gather/none`` and
``accounting_storage/none``; without slurmdbd there is no ``sacct``/``sacctmgr``, so job status
comes from ``squeue`` and no account is passed to sbatch.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "srun")
APT_PACKAGES = ("slurm-wlm", "munge")
#: Installing packages changes the machine, so the harness only does it where that is expected.
INSTALL_ENV = ("CI", "REPRO_SLURM_INSTALL")


def _missing_binaries() -> list[str]:
    return [b for b in DAEMONS + CLIENTS if shutil.which(b) is None]


def _install_allowed() -> bool:
    return any(os.environ.get(var, "").lower() in ("1", "true", "yes") for var in INSTALL_ENV)


def unavailable_reason() -> str | None:
    """Why a private SLURM cannot run here (``None`` when it can, after installing it if allowed)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root (slurmd and munged run as root/munge)"
    missing = _missing_binaries()
    if missing:
        if shutil.which("apt-get") is None:
            return f"SLURM binaries {missing} missing and no apt-get to install slurm-wlm and munge"
        if not _install_allowed():
            return (f"SLURM binaries {missing} missing; set CI=true or REPRO_SLURM_INSTALL=1 to let the "
                    "test apt-get install slurm-wlm munge")
        try:
            install()
        except subprocess.CalledProcessError as err:
            return f"apt-get install {' '.join(APT_PACKAGES)} failed: {err.stderr[-500:] if err.stderr else err}"
        missing = _missing_binaries()
        if missing:
            return f"SLURM binaries {missing} still missing after apt-get install"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no user 'munge' (the munge package creates it)"
    return None


def install() -> None:
    """``apt-get install`` slurm-wlm and munge (about 10 s); updates the index only when needed."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *APT_PACKAGES]
    if subprocess.run(cmd, env=env, capture_output=True, text=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True, capture_output=True, text=True)
        subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_resources() -> tuple[int, int]:
    """(CPUs, RealMemory in MB) to declare for this node; memory a little under MemTotal.

    slurmd drains a node whose declared RealMemory exceeds what it finds, so declare 90 %.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with open("/proc/meminfo") as fh:
        kib = next(int(line.split()[1]) for line in fh if line.startswith("MemTotal:"))
    return cpus, int(kib / 1024 * 0.9)


@dataclass
class SingleNodeSlurm:
    """One slurmctld + one slurmd (+ munged) on this machine, configured under ``root``."""

    root: Path
    partition: str = "debug"
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def __post_init__(self):
        self.root = Path(self.root)
        self.node = socket.gethostname().split(".")[0]  # what `hostname -s` prints; slurmd looks itself up by it
        self.cpus, self.memory_mb = machine_resources()

    # -- configuration -------------------------------------------------------------------------
    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "munge.socket"

    def env(self) -> dict[str, str]:
        """The environment for clients (sbatch, squeue, snakemake) of this cluster."""
        path = os.pathsep.join([str(self.root / "bin"), os.environ.get("PATH", "")])
        return {**os.environ, "SLURM_CONF": str(self.conf), "PATH": path}

    def write_config(self) -> None:
        for sub in ("etc", "state", "spool", "log", "munge", "bin"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        # Inside a job, snakemake-executor-plugin-slurm-jobstep (0.6.1) drops every SLURM_* variable
        # but the job's identity before it calls `srun`, SLURM_CONF included; a real cluster has
        # /etc/slurm/slurm.conf or DNS SRV records instead. An srun on PATH (exported to jobs by
        # sbatch --export=ALL) puts it back without touching /etc.
        srun = self.root / "bin" / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec {shutil.which("srun")} "$@"\n')
        srun.chmod(0o755)
        # munged runs as user munge: it must reach its folder, which it insists nobody else can write.
        self.root.chmod(0o755)
        munge = pwd.getpwnam("munge")
        mdir = self.root / "munge"
        key = mdir / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        for path, mode in ((mdir, 0o755), (key, 0o400)):  # clients need x on the socket folder
            os.chown(path, munge.pw_uid, munge.pw_gid)
            path.chmod(mode)
        r = self.root
        self.conf.write_text(f"""\
# Written by tests/workflow/slurm_harness.py for one test session; nothing here is site advice.
ClusterName=repro-test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/state/slurmctld.pid
SlurmdPidFile={r}/spool/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
MailProg=/bin/true
MpiDefault=none
SwitchType=switch/none
# no systemd and no usable cgroups here
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
# cores and memory are consumable: jobs share the node as their requests allow
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# finished jobs stay visible to squeue (the only status source without slurmdbd) for 5 minutes
MinJobAge=300
InactiveLimit=0
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN
PartitionName={self.partition} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")

    # -- daemons -------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], **user) -> None:
        log = open(self.root / "log" / f"{name}.out", "ab")
        # own session: a Ctrl-C of pytest does not hit the daemons before stop() does; no fork
        # in between (no runuser/su), so the pid kept here is the daemon's own
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                            start_new_session=True, **user)
        log.close()

    def start(self, timeout: float = 60) -> "SingleNodeSlurm":
        self.write_config()
        m = self.root / "munge"
        try:
            self._spawn("munged", ["munged", "--foreground",
                                   f"--key-file={m / 'munge.key'}", f"--socket={self.munge_socket}",
                                   f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
                                   f"--seed-file={m / 'munged.seed'}"],
                        user="munge", group="munge", extra_groups=[])
            self._wait(lambda: self.munge_socket.exists(), timeout, "munged socket")
            self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
            self._wait(lambda: self._run("sinfo", "-h").returncode == 0, timeout, "slurmctld answering sinfo")
            self._spawn("slurmd", ["slurmd", "-D", "-N", self.node, "-f", str(self.conf)])
            self._wait(self._node_idle, timeout, f"node {self.node} idle")
        except Exception:
            self.stop()
            raise
        return self

    def _run(self, *cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env(), timeout=30)

    def _node_idle(self) -> bool:
        out = self._run("sinfo", "-h", "-N", "-o", "%T").stdout.strip()
        if out.startswith(("drain", "down", "fail")) and "slurmd" in self.procs:
            self._run("scontrol", "update", f"nodename={self.node}", "state=resume")
        return out == "idle"  # not "idle*" (not responding)

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode} while waiting for {what}:\n"
                                       f"{self.logs()}")
            if ready():
                return
            time.sleep(0.5)
        raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}:\n{self.logs()}")

    def logs(self, tail: int = 2000) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")) + [self.root / "munge" / "munged.log"]:
            if path.is_file():
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)

    def squeue(self) -> str:
        return self._run("squeue", "-h", "-o", "%i %j %T %r").stdout

    def stop(self) -> None:
        """Cancel this cluster's jobs, then end the daemons this object started, by pid, in reverse."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                self._run("scancel", "--user", pwd.getpwuid(os.getuid()).pw_name)
                # wait for the jobs' slurmstepd to clean up, so none outlives slurmd
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and self._run(
                        "squeue", "-h", "--states=PENDING,RUNNING,COMPLETING,CONFIGURING").stdout.strip():
                    time.sleep(0.5)
            except (OSError, subprocess.SubprocessError):
                pass
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        self.procs.clear()

    def __enter__(self) -> "SingleNodeSlurm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
