"""The time-to-GPU benchmark's library (docs/benchmark-time-to-gpu.md): the testbed as the
contenders see it (Env), the benchmark's one Slurm client (Slurm: the background load's users,
submissions, the purge, and what squeue says), the seeded replays of the background load, the
contenders (rv, naive sbatch, serial failover, the hindsight bound) and the statistics their
verdicts share. Its entry points: ttg.py (rv against the baselines), across.py (one request raced
across both clusters), estimates.py (rv's wait estimates against Slurm's).
"""

import atexit
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import workload

SCALE = workload.SCALE
HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "ttg"  # every contender job's name starts with it (the purge finds them by it)
NODE_TYPES = {p: (v["gtype"], v["gpn"], v["cpus"], v["mem"]) for p, v in workload.PARTITIONS.items()}


def log(msg):
    print(f"[ttg {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(cmd, check=True, env=None, timeout=120):
    r = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, env=env, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd!r} failed ({r.returncode}): {r.stderr.strip()[:500]}")
    return r


class Env:
    """The testbed as seen from root (background, observation) and from rvtest (contenders)."""

    def __init__(self, rv, work, host="rvtb"):
        self.rv = rv
        self.work = work
        self.host = host  # the login node's alias: rvtb, or rvtb-wan behind the WAN proxy
        self.ssh_config = os.environ["TB_SSH_CONFIG"]
        self.control = os.path.join(work, "ssh-%C")
        os.makedirs(os.path.join(work, "config", "rv"), exist_ok=True)
        # The held connection (docs/ssh.md) of this run's own: in the shared default directory
        # (/tmp/rv-UID) rv would use a holder another build started, and measure that build.
        os.makedirs(os.path.join(work, "run"), mode=0o700, exist_ok=True)
        self.rv_env = dict(os.environ, RV_STATE_DIR=os.path.join(work, "state"),
                           XDG_CONFIG_HOME=os.path.join(work, "config"), NO_COLOR="1",
                           RV_TIME_SCALE=str(SCALE), XDG_RUNTIME_DIR=os.path.join(work, "run"))
        for k in ("RV_HOST", "RV_CONFIG", "RV_ACCOUNT"):
            self.rv_env.pop(k, None)
        atexit.register(subprocess.run, [rv, "disconnect", "--all"], env=self.rv_env, capture_output=True)

    def ssh(self, remote, check=True):
        """One command on the login node as rvtest (its RPCs count as rvtest's), over a shared
        OpenSSH connection as SkyPilot keeps one."""
        return sh(["ssh", "-F", self.ssh_config, "-o", "ControlMaster=auto", "-o", f"ControlPath={self.control}",
                   "-o", "ControlPersist=120", self.host, remote], check=check)


def cluster_env(env_file):
    """The environment of one testbed cluster's Slurm commands, from its env file (testbed/up.sh
    writes one per cluster): cluster 2's commands are wrappers in its TB_BIN that chroot into its
    root (testbed/lib2.sh). The benchmark's own process keeps cluster 1's (run.sh sources it)."""
    env = dict(os.environ)
    with open(env_file) as fh:
        for line in fh:
            m = re.match(r"^export (\w+)=(.*)$", line.strip())
            if m:
                env[m.group(1)] = shlex.split(m.group(2))[0] if m.group(2) else ""
    if env.get("TB_BIN"):
        env["PATH"] = env["TB_BIN"] + ":" + env.get("PATH", "")
    return env


# ---------------------------------------------------------------------------------------------
# The one Slurm client: what the benchmark asks one cluster's Slurm as root (the background load,
# the purge, the observation of every job), and the one vocabulary of job states.

# A job that has not ended: it waits, starts, runs or is ending (it may hold a node).
ALIVE = frozenset(("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"))
# A job that got its GPUs (it runs, or ran and ended).
RAN = frozenset(("RUNNING", "COMPLETING", "COMPLETED", "TIMEOUT", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY"))


class Slurm:
    """One cluster's Slurm commands: cluster 1's from this process's environment (env None),
    cluster 2's from its env file (Slurm.of_env_file)."""

    def __init__(self, env=None):
        self.env = env

    @classmethod
    def of_env_file(cls, env_file):
        return cls(cluster_env(env_file))

    def run(self, cmd, check=True):
        return sh(cmd, check=check, env=self.env)

    def in_root(self, cmd):
        """A host command (useradd, id) for this cluster: inside its root when it has one."""
        root = (self.env or {}).get("TB_BIN") and (self.env or {}).get("TB_ROOT")
        return ["chroot", root] + cmd if root else cmd

    def rvtest_rpcs(self):
        """rvtest's count in sdiag's "Remote Procedure Call statistics by user"."""
        out = self.run(["sdiag"]).stdout
        sect = out.split("statistics by user", 1)[-1]
        m = re.search(r"^\s*rvtest\s.*?count:(\d+)", sect, re.M)
        return int(m.group(1)) if m else 0

    def squeue(self, name_prefix=None, users=None, array=False):
        """[(id, name, state, start_epoch|None, partition, nodes)] of every job (all states);
        `array`: a job array's pending elements one row each (`-r`), as MaxSubmitJobs counts them."""
        cmd = ["squeue", "-h", "-t", "all", "-o", "%i|%j|%T|%S|%P|%N|%u"] + (["-r"] if array else [])
        if users:
            cmd += ["-u", ",".join(users)]
        out = sh(cmd, env=dict(self.env or os.environ, SLURM_TIME_FORMAT="%s")).stdout
        rows = []
        for line in out.splitlines():
            f = line.split("|")
            if len(f) < 7 or (name_prefix and not f[1].startswith(name_prefix)):
                continue
            start = int(f[3]) if f[3].isdigit() else None
            rows.append(dict(id=f[0], name=f[1], state=f[2], start=start, partition=f[4], nodes=f[5], user=f[6]))
        return rows

    def free_gpus(self, partitions):
        """{partition: GPUs idle now} (sinfo's Gres less GresUsed, per node of each partition, nodes
        that take no job left out)."""
        out = self.run(["sinfo", "-h", "-N", "-p", ",".join(partitions), "-O",
                        "NodeList:40,Partition:40,StateCompact:20,Gres:80,GresUsed:120"]).stdout
        free = {p: 0 for p in partitions}
        for line in out.splitlines():
            f = line.split()
            if len(f) < 5 or f[1] not in free or any(x in f[2] for x in ("down", "drain", "fail", "maint")):
                continue
            tot = sum(int(x) for x in re.findall(r"gpu:[^:,(]+:(\d+)", f[3]))
            used = sum(int(x) for x in re.findall(r"gpu:[^:,(]+:(\d+)", f[4]))
            free[f[1]] += max(0, tot - used)
        return free

    def gpu_weights(self):
        """{partition: TRESBillingWeights' GRES/gpu} (scontrol show partition; 1 when unset)."""
        out = self.run(["scontrol", "show", "partition", "-o"]).stdout
        w = {}
        for line in out.splitlines():
            name = re.search(r"PartitionName=(\S+)", line)
            m = re.search(r"GRES/gpu=([0-9.]+)", line)
            if name:
                w[name.group(1)] = float(m.group(1)) if m else 1.0
        return w

    def gpu_prices(self, partitions, shape=None):
        """{partition: billing of one GPU with its node's share of CPUs and memory} from each
        partition's whole TRESBillingWeights, summed as slurmctld sums them (no MAX_TRES): CPU per
        CPU, Mem per MB (per GB with a G suffix, per TB with T), GRES/gpu per GPU; a TRES without a
        weight costs 0."""
        out = self.run(["scontrol", "show", "partition", "-o"]).stdout
        mb_per = {"": 1.0, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}
        prices = {}
        for line in out.splitlines():
            name = re.search(r"PartitionName=(\S+)", line)
            if not name or name.group(1) not in partitions:
                continue
            cpus, mem_mb = share(name.group(1), 1, shape)
            m = re.search(r"TRESBillingWeights=(\S+)", line)
            price = 0.0
            for item in (m.group(1).strip('"').split(",") if m else []):
                k, _, v = item.partition("=")
                k = k.lower()
                if k == "cpu":
                    price += float(v) * cpus
                elif k == "mem":
                    suffix = v[-1] if v[-1:].isalpha() else ""
                    price += float(v[:-1] if suffix else v) * mem_mb / mb_per[suffix.upper()]
                elif k == "gres/gpu":
                    price += float(v)
            prices[name.group(1)] = price
        return prices

    def accounting(self, user, since_epoch, name_prefix):
        """sacct's record of `user`'s jobs named `name_prefix`* since `since_epoch`, one row per job
        (array elements each): [dict(id, name, state, elapsed_s, billing, partition, ended)]."""
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(since_epoch - 5))
        out = self.run(["sacct", "-X", "-n", "-P", "-u", user, "-S", since, "-o",
                        "JobID,JobName,State,ElapsedRaw,AllocTRES,Partition,End"]).stdout
        rows = []
        for line in out.splitlines():
            f = line.split("|")
            if len(f) < 7 or not f[1].startswith(name_prefix):
                continue
            m = re.search(r"\bbilling=(\d+)", f[4])
            rows.append(dict(id=f[0], name=f[1], state=f[2].split()[0], elapsed_s=int(f[3] or 0),
                             billing=int(m.group(1)) if m else 0, partition=f[5],
                             ended=f[6] not in ("", "Unknown", "None")))
        return rows

    def max_submit(self, user):
        """The pending+running jobs `user` may have: the smaller of the association's MaxSubmitJobs
        and its default QOS's MaxSubmitJobsPerUser (sacctmgr, as discovery reads them); (limit or
        None, where it comes from)."""
        out = self.run(["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", "format=maxsubmit,defaultqos"]).stdout
        found = []
        qos = set()
        for line in out.splitlines():
            f = line.split("|")
            if f[0].strip().isdigit():
                found.append((int(f[0]), "association MaxSubmitJobs"))
            if len(f) > 1 and f[1].strip():
                qos.add(f[1].strip())
        if qos:
            q = self.run(["sacctmgr", "-n", "-P", "show", "qos", ",".join(sorted(qos)), "format=name,maxsubmitpu"]).stdout
            for line in q.splitlines():
                f = line.split("|")
                if len(f) > 1 and f[1].strip().isdigit():
                    found.append((int(f[1]), f"QOS {f[0]} MaxSubmitJobsPerUser"))
        return min(found) if found else (None, None)

    def set_max_submit(self, user, n):
        """Sets (n) or clears (None) the MaxSubmitJobs of `user`'s associations."""
        self.run(["sacctmgr", "-i", "modify", "user", user, "set", f"MaxSubmitJobs={-1 if n is None else n}"])

    def billing_of(self, job_id):
        out = self.run(["scontrol", "show", "job", job_id], check=False).stdout
        m = re.search(r"\bTRES=\S*billing=(\d+)", out)
        lim = re.search(r"\bTimeLimit=(\S+)", out)
        return (int(m.group(1)) if m else None), (lim.group(1) if lim else None)

    def ensure_users(self):
        """The background users exist, each with an association in rvacct (idempotent). useradd
        first: slurmdbd resolves the uid when the user is added (docs/testbed.md)."""
        for u in workload.USERS:
            if sh(self.in_root(["id", u]), check=False).returncode != 0:
                sh(self.in_root(["useradd", "-M", "-d", "/tmp", "-s", "/usr/sbin/nologin", u]))
        have = set(self.run(["sacctmgr", "-n", "-P", "show", "assoc", "format=user"]).stdout.split())
        missing = [u for u in workload.USERS if u not in have]
        if missing:
            self.run(["sacctmgr", "-i", "add", "user", ",".join(missing), "Account=rvacct", "DefaultAccount=rvacct"])

    def ours(self):
        """The jobs of this benchmark not yet ended: the background users' and the contenders'."""
        return [r for r in self.squeue(users=workload.USERS + ["rvtest"])
                if r["state"] in ALIVE and (r["user"] != "rvtest" or r["name"].startswith(PREFIX))]

    def purge(self, wait_s=60):
        """Cancel the background and every contender job; wait until none holds a node."""
        ids = [r["id"] for r in self.ours()]
        if ids:
            self.run(["scancel"] + ids, check=False)
        t = time.time()
        while time.time() - t < wait_s:
            live = self.ours()
            if not live:
                return
            time.sleep(0.3)
        log(f"warning: jobs still alive after purge: {[(r['id'], r['state']) for r in live]}")

    def sbatch_bg(self, j, name):
        cmd = ["sbatch", "--parsable", f"--uid={j['user']}", "-A", "rvacct", "-J", name, "-p", j["partition"],
               "-N", str(j["nodes"]), "--ntasks-per-node=1", f"--gres={j['gres']}", "-c", str(j["cpus"]),
               f"--mem={j['mem_mb']}", f"--time={j['limit_h']}", f"--nice={j['nice']}", "-o", "/dev/null",
               "--chdir=/tmp", "--wrap", f"sleep {j['run_real_s']}"]
        if j.get("nodelist"):
            cmd.insert(2, f"--nodelist={j['nodelist']}")
        r = self.run(cmd, check=False)
        if r.returncode != 0:
            log(f"warning: background job {j['seq']} refused: {r.stderr.strip()[:200]}")
            return None
        return r.stdout.strip().split(";")[0]


LOCAL = Slurm()  # cluster 1, the benchmark's own environment


def limit_minutes(s):
    """Slurm's [D-]HH:MM:SS or MM:SS limit in minutes."""
    if not s or s in ("UNLIMITED", "Partition_Limit"):
        return None
    d = 0
    if "-" in s:
        d, s = s.split("-", 1)
    parts = [int(x) for x in s.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return int(d) * 1440 + parts[0] * 60 + parts[1] + parts[2] / 60


# ---------------------------------------------------------------------------------------------
# The background load: replays


LIVE = set()  # the replays started and not yet ended (exit_on_sigterm ends them)


def exit_on_sigterm():
    """SIGTERM (a `timeout`, a killed session) ends the run as its `finally` blocks would: every
    live replay's load and the contenders' jobs are purged first. Without it a killed run left its
    load holding the testbed's GPUs under the next benchmark."""
    def handler(signum, _frame):
        log(f"signal {signum}: purging {len(LIVE)} live replay(s) before exiting")
        for r in list(LIVE):
            try:
                r.stop.set()
                r.slurm.purge(wait_s=10)
            except Exception as e:  # noqa: BLE001 - exiting anyway: say what was left
                log(f"purge failed: {e}")
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


class Replay:
    """One replay of a seed: the state at t0 (running set, then the queue), then arrivals on time."""

    def __init__(self, seq, tag, slurm=LOCAL):
        self.seq = seq
        self.tag = tag
        self.slurm = slurm
        self.stop = threading.Event()
        self.thread = None
        self.t0 = None

    def start(self, settle_s):
        LIVE.add(self)
        self.slurm.purge()
        run = [j for j in self.seq if j["kind"] == "running"]
        ids = [self.slurm.sbatch_bg(j, f"bg-{self.tag}") for j in run]
        want = {i for i in ids if i}
        deadline = time.time() + 30
        while time.time() < deadline:
            running = {r["id"] for r in self.slurm.squeue(users=workload.USERS) if r["state"] == "RUNNING"}
            if want <= running:
                break
            time.sleep(0.2)
        else:
            log(f"warning: {len(want - running)} of the t0 running set did not start")
        for j in self.seq:
            if j["kind"] in ("queued", "blocker"):
                self.slurm.sbatch_bg(j, f"bg-{self.tag}")
        self.t0 = time.time()
        self.thread = threading.Thread(target=self._arrivals, daemon=True)
        self.thread.start()
        time.sleep(settle_s)  # one backfill cycle (bf_interval=2) plans the queue
        return self.t0

    def _arrivals(self):
        for j in self.seq:
            if j["kind"] != "arrival":
                continue
            delay = self.t0 + j["t_real_s"] - time.time()
            if delay > 0 and self.stop.wait(delay):
                return
            self.slurm.sbatch_bg(j, f"bg-{self.tag}")

    def end(self):
        self.stop.set()
        if self.thread:
            self.thread.join(timeout=10)
        self.slurm.purge()
        LIVE.discard(self)


def wait_first_start(name, t_limit, poll=0.25, slurm=LOCAL):
    while time.time() < t_limit:
        ran = [r for r in slurm.squeue(name) if r["state"] in RAN and r["start"]]
        if ran:
            return min(ran, key=lambda r: (r["start"], r["id"]))
        time.sleep(poll)
    return None


def share(partition, gpus_per_node, shape=None):
    """A node's CPUs and memory per GPU (`shape`: another cluster's partitions, workload.SHAPES)."""
    _, gpn, cpus, mem = NODE_TYPES[partition] if shape is None else (
        shape[partition]["gtype"], shape[partition]["gpn"], shape[partition]["cpus"], shape[partition]["mem"])
    return max(1, cpus * gpus_per_node // gpn), max(1000, mem * gpus_per_node // gpn)


def sbatch_line(name, partition, nodes, gpn, limit_min, work_s, gres=None, cpus=None, mem=None, time_min=None,
                constraint=None):
    c, m = share(partition, gpn) if cpus is None or mem is None else (cpus, mem)  # other clusters: given
    gres = gres or f"gpu:{NODE_TYPES[partition][0]}:{gpn}"
    parts = ["sbatch", "--parsable", "-J", name, "-p", partition, "-N", str(nodes), "--ntasks-per-node=1",
             f"--gres={gres}", "-c", str(cpus or c), f"--mem={mem or m}", f"--time={limit_min}", "-o", "/dev/null"]
    if time_min:
        parts.append(f"--time-min={time_min}")
    if constraint:
        parts.append(f"--constraint={constraint}")
    parts += ["--wrap", f"sleep {work_s}"]
    return " ".join(shlex.quote(p) for p in parts)


def parse_scenario(key):
    """"4x24h" -> ("4", "24h", "mixed"); "4x24h@window" -> ("4", "24h", "window") (workload.PROFILES)."""
    spec, _, profile = key.partition("@")
    g, w = spec.split("x")
    return g, w, profile or "mixed"


def run_rv(env, sc, name, cap_s, slurm=LOCAL):
    args = [env.rv, "--ssh-config", env.ssh_config, "--host", env.host, "--json", "run", "--checkpoint", "-g", str(sc["gpus"]),
            "--time", f"{sc['work_real_s']}s", "--name", name, "--", f"sleep {sc['work_real_s']}"]
    t_start = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env.rv_env, timeout=120)
    t_sub = time.time()
    rec = None
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else {}
        rid = out.get("id") or out.get("request_id") or out.get("request", {}).get("id")
    except json.JSONDecodeError:
        rid = None
        m = re.search(r"^request ([0-9a-f]+)", p.stdout, re.M)
        rid = m.group(1) if m else None
    state_dir = os.path.join(env.rv_env["RV_STATE_DIR"], "requests")
    if not rid and os.path.isdir(state_dir):  # one request per state dir and name: find it by name
        for f in os.listdir(state_dir):
            with open(os.path.join(state_dir, f)) as fh:
                r = json.load(fh)
            if r.get("name") == name:
                rec = r
    elif rid:
        with open(os.path.join(state_dir, f"{rid}.json")) as fh:
            rec = json.load(fh)
    if p.returncode != 0 or not rec:
        return dict(t_start=t_start, start=None, error=f"rv exit {p.returncode}: {p.stderr.strip()[-400:]}",
                    jobs=[], plan=None, submit_s=t_sub - t_start)
    first = wait_first_start(name, t_start + cap_s, slurm=slurm)
    jobs = [j for j in rec["jobs"] if j.get("job_id")]
    res = dict(t_start=t_start, submit_s=round(t_sub - t_start, 2), plan=rec.get("plan"), jobs=[j["job_id"] for j in jobs],
               strategies={j["job_id"]: j["strategy_id"] for j in jobs}, start=None)
    if first:
        res.update(start=first["start"], job=first["id"], partition=first["partition"],
                   strategy=res["strategies"].get(first["id"]))
        # What won, before finish() projects the work: a checkpoint winner's work is its chain.
        won = {s["id"]: s for s in (res["plan"] or {}).get("strategies", [])}.get(res["strategy"])
        if won:
            res.update(kind=won["kind"], label=won["label"], est_wait_s=won.get("est_wait_s"), est_su=won["est_su"])
        time.sleep(3)  # the winner's guard cancels its siblings (templates/guard.cpp)
    return res


def settle_records(env):
    """`rv ps -a` once the race is decided, before the purge: rv records which of its jobs started
    and which were cancelled while pending (and when), the truth its and Slurm's estimates are
    measured against (#30 item 3, `rv stats`)."""
    subprocess.run([env.rv, "--ssh-config", env.ssh_config, "--host", env.host, "ps", "-a"], capture_output=True,
                   text=True, env=env.rv_env, timeout=120)


def estimate_errors(rv, state_dirs):
    """rv's and Slurm's median |error| of the wait per partition over every rv request of
    `state_dirs` (their records merged into one state dir, then `rv stats --json`: the one home of
    the computation, strategy/history.hpp estimate_errors)."""
    tmp = tempfile.mkdtemp(prefix="ttg-stats-")
    try:
        os.makedirs(os.path.join(tmp, "requests"))
        for d in state_dirs:
            rdir = os.path.join(d, "requests")
            for f in (os.listdir(rdir) if os.path.isdir(rdir) else []):
                if f.endswith(".json"):
                    shutil.copy(os.path.join(rdir, f), os.path.join(tmp, "requests", f))
        p = subprocess.run([rv, "--json", "stats", "--last", "100000", "--days", "36500"], capture_output=True,
                           text=True, env=dict(os.environ, RV_STATE_DIR=tmp), timeout=60)
        stats = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = []
    for h in stats.get("hosts", []):
        for q in h.get("partitions", []):
            out.append(dict(partition=q["partition"], rv_samples=q["started"] + q["cancelled_pending"],
                            rv_median_abs_s=q["median_abs_error_s"], slurm_samples=q.get("slurm_samples", 0),
                            slurm_median_abs_s=q.get("slurm_median_abs_error_s"), paired=q.get("paired", 0),
                            rv_paired_s=q.get("rv_paired_median_abs_error_s"),
                            slurm_paired_s=q.get("slurm_paired_median_abs_error_s")))
    return out


def render_estimates(rows):
    lines = ["", "rv's predicted wait against Slurm's estimate at submission (squeue StartTime, first seen within "
             "120 s), median |error| in real s over the jobs that inform both (paired); censored = cancelled while "
             "pending, counted once past the estimate (docs/requests.md)", "",
             "| partition | paired | rv median abs error | Slurm median abs error | rv/Slurm | rv alone (n) | Slurm alone (n) |",
             "| --- " * 7 + "|"]
    for e in rows:
        ratio = (f"{e['rv_paired_s'] / e['slurm_paired_s']:.2f}" if e["paired"] and e["slurm_paired_s"]
                 else ("-" if not e["paired"] else "0 / 0" if not e["rv_paired_s"] else "inf"))
        lines.append(f"| {e['partition']} | {e['paired']} | {e['rv_paired_s'] if e['paired'] else '-'} | "
                     f"{e['slurm_paired_s'] if e['paired'] else '-'} | {ratio} | {e['rv_median_abs_s']} ({e['rv_samples']}) | "
                     f"{e['slurm_median_abs_s'] if e['slurm_samples'] else '-'} ({e['slurm_samples']}) |")
    return lines


def run_naive(env, sc, name, cap_s, partition):
    t_start = time.time()
    gpn = min(sc["gpus"], NODE_TYPES[partition][1])
    nodes = sc["gpus"] // gpn
    r = env.ssh(sbatch_line(name, partition, nodes, gpn, sc["work_limit_min"], sc["work_real_s"]))
    jid = r.stdout.strip().split(";")[0]
    first = wait_first_start(name, t_start + cap_s)
    res = dict(t_start=t_start, jobs=[jid], start=None, partition=partition, kind="direct")
    if first:
        res.update(start=first["start"], job=first["id"])
    return res


def run_serial(env, sc, name, cap_s, order, wait_s):
    """SkyPilot's Slurm failover: one partition at a time, full walltime, cancel after wait_s."""
    t_start = time.time()
    jobs, cancelled = [], 0
    res = dict(t_start=t_start, start=None, kind="direct", tries=[])
    order = [p for p in order if NODE_TYPES[p][1] >= sc["gpus"]]
    while time.time() - t_start < cap_s:
        for part in order:
            jid = env.ssh(sbatch_line(name, part, 1, sc["gpus"], sc["work_limit_min"], sc["work_real_s"])).stdout.strip()
            jobs.append(jid)
            res["tries"].append(part)
            t_try = time.time()
            state = ""
            while time.time() - t_try < wait_s:
                time.sleep(min(1.0, max(0.0, wait_s - (time.time() - t_try))))
                state = env.ssh(f"squeue -h -j {jid} -o %T", check=False).stdout.strip()
                if state in RAN:
                    break
            if state not in RAN:
                state = env.ssh(f"squeue -h -j {jid} -o %T", check=False).stdout.strip()
            if state in RAN:
                first = wait_first_start(name, time.time() + 5)
                res.update(start=first["start"] if first else None, job=jid, partition=part)
                res.update(jobs=jobs, cancelled=cancelled)
                return res
            env.ssh(f"scancel {jid}", check=False)
            cancelled += 1
            if time.time() - t_start >= cap_s:
                break
    res.update(jobs=jobs, cancelled=cancelled)
    return res


SEGMENT_S = 120  # the shortest checkpoint segment rv plans at 60x (strategy::compress_time)


def hindsight_groups(plan, max_groups, work_real_s):
    """Replays of single strategies where no two share a partition (strategies on different
    partitions do not interact). Group 1: each partition's best-ranked strategy of rv's plan.
    Group 2 (when the work is longer than a segment): each partition's first single-node shape as
    a first checkpoint segment of SEGMENT_S, the shortest rv would plan: what a correct window
    probe would have let rv submit. Groups 3..: each partition's 2nd, 3rd... ranked strategy."""
    per = {}
    for s in plan.get("strategies", []):
        per.setdefault(s["partition"], []).append(s)
    groups = [[v[0] for v in per.values()]]
    if work_real_s > SEGMENT_S and max_groups >= 2:
        seg = []
        for v in per.values():
            base = next((s for s in v if s["nodes"] == 1), v[0])
            if base["walltime_s"] > SEGMENT_S:
                seg.append(dict(base, id=base["id"] + "seg", kind="checkpoint", walltime_s=SEGMENT_S, time_min_s=0,
                                label=f"{base['label'].split(' on ')[0].rsplit(' ', 2)[0]} first {SEGMENT_S // 60}m segment"
                                      f" (hindsight only) on {base['partition']}"))
        if seg:  # first: when it starts at once, the other groups need not wait past it
            groups.insert(0, seg)
    k = 1
    while len(groups) < max_groups and any(len(v) > k for v in per.values()):
        groups.append([v[k] for v in per.values() if len(v) > k])
        k += 1
    return groups


def run_hindsight_group(env, sc, name, cap_s, group, slurm=LOCAL):
    t_start = time.time()
    lines, names = [], {}
    for s in group:
        limit = max(1, math.ceil(s["walltime_s"] / 60))
        tmin = max(1, math.ceil(s["time_min_s"] / 60)) if s.get("time_min_s") else None
        jname = f"{name}-{s['id']}"
        names[jname] = s
        lines.append(sbatch_line(jname, s["partition"], s["nodes"], s["gpus_per_node"], limit, sc["work_real_s"],
                                 gres=s["gres"], cpus=s["cpus_per_task"], mem=s["mem_mb"], time_min=tmin,
                                 constraint=s.get("constraint") or None))
    out = env.ssh(" ; ".join(lines)).stdout.split()
    first = wait_first_start(name, t_start + cap_s, slurm=slurm)
    if first:  # the bound is the first start: the others would only hold GPUs from here on
        others = [j for j in out if j != first["id"]]
        if others:
            env.ssh("scancel " + " ".join(others), check=False)
    res = dict(t_start=t_start, jobs=out, start=None, strategies=[s["id"] for s in group])
    if first:
        s = names.get(first["name"], {})
        res.update(start=first["start"], job=first["id"], partition=first["partition"], strategy=s.get("id"),
                   kind=s.get("kind"), label=s.get("label"), est_su=s.get("est_su"))
    return res


def finish(res, name, sc, complete, slurm=LOCAL):
    """Adds what ran: billing, SU of the work, granted limit, counts, completion."""
    rows = slurm.squeue(name, users=["rvtest"])
    res["submitted"] = len({r["id"] for r in rows} | set(res.get("jobs", [])))
    if "cancelled" not in res:
        res["cancelled"] = sum(1 for r in rows if r["state"] == "CANCELLED")
    res["ttg_s"] = round(res["start"] - res["t_start"], 1) if res.get("start") else None
    if not res.get("job"):
        return res
    billing, limit = slurm.billing_of(res["job"])
    res["billing"] = billing
    lim_min = limit_minutes(limit)
    res["granted_limit_min"] = lim_min
    work_h = sc["work_real_s"] / 60  # cluster hours (1 real minute = 1 cluster hour)
    ckpt = res.get("kind") == "checkpoint"
    res["su"] = round(billing * work_h, 1) if billing else None
    if ckpt and res.get("est_su") is not None:
        res["su"] = round(res["est_su"] * SCALE, 1)  # rv's own model: segments and their margins
    if complete:
        # The winner, and what it resubmitted (checkpoint segments: same name, new ids).
        losers = set(res.get("jobs", [])) - {res["job"]}
        deadline = time.time() + sc["work_real_s"] + 120
        state = None
        while time.time() < deadline:
            mine = [r for r in slurm.squeue(name, users=["rvtest"]) if r["id"] not in losers]
            fin = [r for r in mine if r["state"] in RAN and r["state"] not in ("RUNNING", "COMPLETING")]
            live = [r for r in mine if r["state"] in ALIVE]
            if fin and not live:
                state = "COMPLETED" if any(r["state"] == "COMPLETED" for r in fin) else fin[-1]["state"]
                break
            time.sleep(1)
        res["segments_run"] = len({r["id"] for r in slurm.squeue(name, users=["rvtest"])
                                   if r["id"] not in losers and r["state"] in RAN})
        res["completed"] = state == "COMPLETED"
        res["completed_how"] = f"measured: {state or 'still running'}"
    else:
        ok = ckpt or (lim_min is not None and lim_min * 60 >= sc["work_real_s"])
        res["completed"] = ok
        res["completed_how"] = ("projected: checkpoint segments" if ckpt else
                                f"projected: limit {lim_min:g} min vs work {sc['work_real_s']} s" if lim_min else "unknown")
    return res


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def med_censored(xs):
    """Median where None = not within the cap (counts as later than everything); None if the
    median itself is censored."""
    if not xs:
        return None
    m = statistics.median_low([math.inf if x is None else x for x in xs]) if len(xs) % 2 else \
        statistics.median([math.inf if x is None else x for x in xs])
    return None if math.isinf(m) or math.isnan(m) else m


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def draw_seeds(a):
    """The seeds of this run: --seeds, else --random-seeds drawn now (from the OS: nobody chose
    them), else --seed, --seed+1, ... for --repeats."""
    if getattr(a, "seeds", ""):
        return [int(s) for s in a.seeds.split(",") if s.strip()]
    if getattr(a, "random_seeds", 0) > 0:
        rng = random.SystemRandom()
        seeds = []
        while len(seeds) < a.random_seeds:
            s = rng.randrange(100, 1000000)
            if s not in seeds:
                seeds.append(s)
        return seeds
    return [a.seed + r for r in range(a.repeats)]


def vs_bound(t, h, resolution):
    """(verdict, ratio) of a time to GPU `t` against the hindsight bound `h` (None = not within the
    cap): PASS within 1.2x, PASS(res) within the resolution, else MISS; n/a without a bound."""
    if h is None:
        return "n/a", None
    if t is None:
        return "MISS", None
    return ("PASS" if t <= 1.2 * h else "PASS(res)" if t <= h + resolution else "MISS"), (round(t / h, 2) if h > 0 else None)
