#!/usr/bin/env python3
"""Time-to-GPU benchmark: rv against naive sbatch, serial failover and the hindsight bound, each on
the same seeded background load replayed on the local Slurm testbed. Run it through run.sh (the
testbed lock, the environment); docs/benchmark-time-to-gpu.md explains the model and the output.
"""

import argparse
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


def in_root(senv, cmd):
    """A host command (useradd, id) for the cluster of `senv`: inside its root when it has one."""
    root = (senv or {}).get("TB_BIN") and (senv or {}).get("TB_ROOT")
    return ["chroot", root] + cmd if root else cmd


def rvtest_rpcs(senv=None):
    """rvtest's count in sdiag's "Remote Procedure Call statistics by user"."""
    out = sh(["sdiag"], env=senv).stdout
    sect = out.split("statistics by user", 1)[-1]
    m = re.search(r"^\s*rvtest\s.*?count:(\d+)", sect, re.M)
    return int(m.group(1)) if m else 0


def squeue_rows(name_prefix=None, users=None, senv=None):
    """[(id, name, state, start_epoch|None, partition, nodes)] of every job (all states)."""
    cmd = ["squeue", "-h", "-t", "all", "-o", "%i|%j|%T|%S|%P|%N|%u"]
    if users:
        cmd += ["-u", ",".join(users)]
    out = sh(cmd, env=dict(senv or os.environ, SLURM_TIME_FORMAT="%s")).stdout
    rows = []
    for line in out.splitlines():
        f = line.split("|")
        if len(f) < 7 or (name_prefix and not f[1].startswith(name_prefix)):
            continue
        start = int(f[3]) if f[3].isdigit() else None
        rows.append(dict(id=f[0], name=f[1], state=f[2], start=start, partition=f[4], nodes=f[5], user=f[6]))
    return rows


RAN = ("RUNNING", "COMPLETING", "COMPLETED", "TIMEOUT", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY")


def billing_of(job_id, senv=None):
    out = sh(["scontrol", "show", "job", job_id], check=False, env=senv).stdout
    m = re.search(r"\bTRES=\S*billing=(\d+)", out)
    lim = re.search(r"\bTimeLimit=(\S+)", out)
    return (int(m.group(1)) if m else None), (lim.group(1) if lim else None)


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
# The background load: users, purge, replay


def ensure_users(senv=None):
    """The background users exist, each with an association in rvacct (idempotent). useradd
    first: slurmdbd resolves the uid when the user is added (docs/testbed.md)."""
    for u in workload.USERS:
        if sh(in_root(senv, ["id", u]), check=False).returncode != 0:
            sh(in_root(senv, ["useradd", "-M", "-d", "/tmp", "-s", "/usr/sbin/nologin", u]))
    have = set(sh(["sacctmgr", "-n", "-P", "show", "assoc", "format=user"], env=senv).stdout.split())
    missing = [u for u in workload.USERS if u not in have]
    if missing:
        sh(["sacctmgr", "-i", "add", "user", ",".join(missing), "Account=rvacct", "DefaultAccount=rvacct"], env=senv)


def purge(wait_s=60, senv=None):
    """Cancel the background and every contender job; wait until none holds a node."""
    alive = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED")
    ids = [r["id"] for r in squeue_rows(users=workload.USERS, senv=senv) if r["state"] in alive]  # scancel -u: one user
    ids += [r["id"] for r in squeue_rows(PREFIX, users=["rvtest"], senv=senv) if r["state"] in alive]
    if ids:
        sh(["scancel"] + ids, check=False, env=senv)
    t = time.time()
    while time.time() - t < wait_s:
        live = [r for r in squeue_rows(users=workload.USERS + ["rvtest"], senv=senv)
                if r["state"] in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING")
                and (r["user"] != "rvtest" or r["name"].startswith(PREFIX))]
        if not live:
            return
        time.sleep(0.3)
    log(f"warning: jobs still alive after purge: {[(r['id'], r['state']) for r in live]}")


def sbatch_bg(j, name, senv=None):
    cmd = ["sbatch", "--parsable", f"--uid={j['user']}", "-A", "rvacct", "-J", name, "-p", j["partition"],
           "-N", str(j["nodes"]), "--ntasks-per-node=1", f"--gres={j['gres']}", "-c", str(j["cpus"]),
           f"--mem={j['mem_mb']}", f"--time={j['limit_h']}", f"--nice={j['nice']}", "-o", "/dev/null",
           "--chdir=/tmp", "--wrap", f"sleep {j['run_real_s']}"]
    if j.get("nodelist"):
        cmd.insert(2, f"--nodelist={j['nodelist']}")
    r = sh(cmd, check=False, env=senv)
    if r.returncode != 0:
        log(f"warning: background job {j['seq']} refused: {r.stderr.strip()[:200]}")
        return None
    return r.stdout.strip().split(";")[0]


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
                purge(wait_s=10, senv=r.senv)
            except Exception as e:  # noqa: BLE001 - exiting anyway: say what was left
                log(f"purge failed: {e}")
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


class Replay:
    """One replay of a seed: the state at t0 (running set, then the queue), then arrivals on time."""

    def __init__(self, seq, tag, senv=None):
        self.seq = seq
        self.tag = tag
        self.senv = senv
        self.stop = threading.Event()
        self.thread = None
        self.t0 = None

    def start(self, settle_s):
        LIVE.add(self)
        purge(senv=self.senv)
        run = [j for j in self.seq if j["kind"] == "running"]
        ids = [sbatch_bg(j, f"bg-{self.tag}", self.senv) for j in run]
        want = {i for i in ids if i}
        deadline = time.time() + 30
        while time.time() < deadline:
            running = {r["id"] for r in squeue_rows(users=workload.USERS, senv=self.senv) if r["state"] == "RUNNING"}
            if want <= running:
                break
            time.sleep(0.2)
        else:
            log(f"warning: {len(want - running)} of the t0 running set did not start")
        for j in self.seq:
            if j["kind"] in ("queued", "blocker"):
                sbatch_bg(j, f"bg-{self.tag}", self.senv)
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
            sbatch_bg(j, f"bg-{self.tag}", self.senv)

    def end(self):
        self.stop.set()
        if self.thread:
            self.thread.join(timeout=10)
        purge(senv=self.senv)
        LIVE.discard(self)


# ---------------------------------------------------------------------------------------------
# Contenders. Each returns a dict: start (epoch of the first GPU, None = not within the cap),
# t_start (its own t0), jobs (ids it submitted), cancelled, partition/kind of what ran, notes.


def wait_first_start(name, t_limit, poll=0.25, senv=None):
    while time.time() < t_limit:
        ran = [r for r in squeue_rows(name, senv=senv) if r["state"] in RAN and r["start"]]
        if ran:
            return min(ran, key=lambda r: (r["start"], r["id"]))
        time.sleep(poll)
    return None


def share(partition, gpus_per_node):
    _, gpn, cpus, mem = NODE_TYPES[partition]
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


def run_rv(env, sc, name, cap_s, senv=None):
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
    first = wait_first_start(name, t_start + cap_s, senv=senv)
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


def run_hindsight_group(env, sc, name, cap_s, group, senv=None):
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
    first = wait_first_start(name, t_start + cap_s, senv=senv)
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


def finish(res, name, sc, complete, senv=None):
    """Adds what ran: billing, SU of the work, granted limit, counts, completion."""
    rows = squeue_rows(name, users=["rvtest"], senv=senv)
    res["submitted"] = len({r["id"] for r in rows} | set(res.get("jobs", [])))
    if "cancelled" not in res:
        res["cancelled"] = sum(1 for r in rows if r["state"] == "CANCELLED")
    res["ttg_s"] = round(res["start"] - res["t_start"], 1) if res.get("start") else None
    if not res.get("job"):
        return res
    billing, limit = billing_of(res["job"], senv)
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
            mine = [r for r in squeue_rows(name, users=["rvtest"], senv=senv) if r["id"] not in losers]
            fin = [r for r in mine if r["state"] in RAN and r["state"] not in ("RUNNING", "COMPLETING")]
            live = [r for r in mine if r["state"] in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING")]
            if fin and not live:
                state = "COMPLETED" if any(r["state"] == "COMPLETED" for r in fin) else fin[-1]["state"]
                break
            time.sleep(1)
        res["segments_run"] = len({r["id"] for r in squeue_rows(name, users=["rvtest"], senv=senv)
                                   if r["id"] not in losers and r["state"] in RAN})
        res["completed"] = state == "COMPLETED"
        res["completed_how"] = f"measured: {state or 'still running'}"
    else:
        ok = ckpt or (lim_min is not None and lim_min * 60 >= sc["work_real_s"])
        res["completed"] = ok
        res["completed_how"] = ("projected: checkpoint segments" if ckpt else
                                f"projected: limit {lim_min:g} min vs work {sc['work_real_s']} s" if lim_min else "unknown")
    return res


# ---------------------------------------------------------------------------------------------
# Statistics and the report


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


def fmt_t(v, cap):
    return f">{cap:g}" if v is None else f"{v:.1f}"


def explain(rv, hs, naive, serial, sc):
    """Why rv missed, from its plan vs what happened."""
    why = []
    best = hs.get("best") or {}
    wins = {w["partition"]: w for w in (rv.get("plan") or {}).get("windows", []) if w["nodes"] == 1}
    w = wins.get(best.get("partition"), {})
    # The hindsight segment won where rv's probes saw no window at all: the probe was wrong, unless
    # rv's queue model saw the window and planned a strategy that starts there now.
    queue_now = any("queue" in (x.get("window_source") or "") and x["partition"] == best.get("partition")
                    and x.get("est_wait_s") == 0 for x in (rv.get("plan") or {}).get("strategies", []))
    seg_wrong = str(best.get("strategy", "")).endswith("seg") and not w.get("max_now_s") and not queue_now
    if rv.get("start") is None or (best.get("ttg_s") is not None and rv["ttg_s"] > 1.2 * best["ttg_s"] and seg_wrong):
        qws = [q for q in (rv.get("plan") or {}).get("queue_windows", [])
               if q.get("partition") == best.get("partition") and q.get("idle_now") and q.get("nodes") == 1]
        if seg_wrong and qws:
            q = max(qws, key=lambda q: q.get("walltime_s") or 0)
            return [f"window sized too small: rv's queue model saw {q.get('gpus_per_node')} GPUs idle on "
                    f"{best.get('partition')} for {q.get('until_s')} s but sized them to {q.get('walltime_s')} s, below "
                    f"the {SEGMENT_S} s segment that started after {max(0, best['ttg_s'])} s in hindsight"]
        if seg_wrong:
            shortest = min((p["walltime_s"] for p in w.get("probes", [])), default=None)
            return [f"probe wrong: on {best.get('partition')} even rv's {shortest} s probe was told to start in "
                    f"{w.get('now_start_in_s') if w.get('max_now_s') else w.get('full_start_in_s')} s (no window, so no "
                    f"checkpoint segment planned), but a {SEGMENT_S} s segment started after {max(0, best['ttg_s'])} s in hindsight: "
                    f"sbatch --test-only does not see the backfill window in front of a higher-priority job's reservation"]
        if rv.get("start") is None:
            return ["nothing of rv's fan-out started within the cap" +
                    (", nor anything in hindsight" if best.get("ttg_s") is None else "")]
    over = rv.get("submit_s") or 0
    if best.get("ttg_s") is not None and rv["ttg_s"] > 1.2 * best["ttg_s"]:
        plan = rv.get("plan") or {}
        strat = {s["id"]: s for s in plan.get("strategies", [])}
        b = strat.get(best.get("strategy"))
        if rv["ttg_s"] - over <= 1.2 * best["ttg_s"] + 1:
            why.append(f"overhead: rv spent {over:.1f} s planning and submitting (uncompressed; {over * SCALE / 60:.0f} cluster-min)")
        if b and rv.get("strategy") != b["id"]:
            est = b.get("est_wait_s")
            if b["id"] in (rv.get("strategies") or {}).values():
                why.append(f"window closed or tie lost: {b['label']} (plan est_wait {est} s) was in rv's fan-out and "
                           f"started after {max(0, best['ttg_s'])} s in hindsight, but {rv.get('label')} claimed rv's race first")
            else:
                why.append(f"ranking chose slower: {b['label']} was not submitted")
        elif b and est_later(b):
            why.append(f"probe wrong: {b['label']} estimated {b.get('est_wait_s')} s, started in {best['ttg_s']} s")
    cands = list(hs.get("groups", [])) + [naive, serial]
    cheaper = [g for g in cands if g.get("ttg_s") is not None and g["ttg_s"] <= rv["ttg_s"] + 1 and g.get("su")
               and rv.get("su") and g["su"] < rv["su"] / 1.1]
    if cheaper:
        ids = set((rv.get("strategies") or {}).values())
        g = min(cheaper, key=lambda g: (g["su"], g.get("strategy") not in ids))
        what = g.get("label") or f"{g.get('partition')} {g.get('kind')}"
        if g.get("strategy") and g["strategy"] in ids:
            why.append(f"SU: {what} (SU {g['su']}) was in rv's fan-out and starts as early; "
                       f"{rv.get('label')} (SU {rv['su']}) got its GPUs first (a tie goes to the first to start, not the cheapest)")
        else:
            why.append(f"SU: {what} (SU {g['su']}) starts as early and was not in rv's fan-out")
    for other, nm in ((naive, "naive"), (serial, "serial")):
        if other.get("ttg_s") is not None and rv["ttg_s"] > 0.5 * other["ttg_s"]:
            why.append(f"{nm} started after {other['ttg_s']} s on {other.get('partition')}: "
                       + ("its first choice had room" if nm == "naive" or other.get("tries", [None])[0] == other.get("partition")
                          else "a free type was reached quickly"))
    return why


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


def run_verdict(r, cap, resolution):
    """The issue's targets for one run (one seed of one scenario), as summarize() judges medians."""
    rv = r.get("rv") or {}
    best = (r.get("hindsight") or {}).get("best") or {}
    t = None if rv.get("ttg_s") is None else max(0.0, rv["ttg_s"])
    h = None if best.get("ttg_s") is None else max(0.0, best["ttg_s"])
    out = dict(seed=r.get("seed"), scenario=r.get("scenario"), rv=t, hindsight=h, targets={})
    tg = out["targets"]
    tg["vs_hindsight"], ratio = vs_bound(t, h, resolution)
    if ratio is not None:
        out["ratio_hindsight"] = ratio
    for k in ("naive", "serial"):
        o = r.get(k) or {}
        ot = None if o.get("ttg_s") is None else max(0.0, o["ttg_s"])
        out[k] = ot
        if t is None:
            tg[f"vs_{k}"] = "n/a" if ot is None else "MISS"
        elif ot is None:
            out[f"ratio_{k}"] = f"<{t / cap:.2f}"
            tg[f"vs_{k}"] = "PASS" if t / cap <= 0.5 else "n/a"
        elif ot == 0:
            tg[f"vs_{k}"] = "n/a"
        else:
            out[f"ratio_{k}"] = round(t / ot, 2)
            tg[f"vs_{k}"] = "PASS" if t / ot <= 0.5 else "MISS"
    if t is not None and rv.get("su"):
        cands = list((r.get("hindsight") or {}).get("groups", [])) + [r.get("naive") or {}, r.get("serial") or {}]
        sus = [g["su"] for g in cands if g.get("ttg_s") is not None and g["ttg_s"] <= t + 1 and g.get("su")]
        if sus:
            out["su_ratio"] = round(rv["su"] / min(sus), 2)
    tg["su"] = "n/a" if "su_ratio" not in out else "PASS" if out["su_ratio"] <= 1.1 else "MISS"
    out["where"] = f"{rv.get('partition')}:{rv.get('kind')}" if rv.get("partition") else "-"
    out["miss"] = any(v == "MISS" for v in tg.values())
    return out


def render_runs(runs, cap):
    """Every run: the targets per seed, the distribution of rv/hindsight, and why each miss missed."""
    lines = ["", "### Every run (seed x request)", "",
             "| seed | request | rv | hindsight | naive | serial | rv/hindsight | rv/naive | rv/serial | SU vs cheapest as early | rv ran on | targets |",
             "| --- " * 12 + "|"]
    for v in runs:
        tg = " ".join(f"{k}:{x}" for k, x in v["targets"].items())
        lines.append(f"| {v['seed']} | {v['scenario']} | {fmt_t(v['rv'], cap)} | {fmt_t(v['hindsight'], cap)} | "
                     f"{fmt_t(v['naive'], cap)} | {fmt_t(v['serial'], cap)} | {v.get('ratio_hindsight', '-')} | "
                     f"{v.get('ratio_naive', '-')} | {v.get('ratio_serial', '-')} | {v.get('su_ratio', '-')} | "
                     f"{v['where']} | {tg} |")
    lines.append("")
    for sc in dict.fromkeys(v["scenario"] for v in runs):
        vs = [v for v in runs if v["scenario"] == sc]
        ratios = sorted(v["ratio_hindsight"] for v in vs if v.get("ratio_hindsight") is not None)
        gaps = sorted(round(v["rv"] - v["hindsight"], 1) for v in vs if v["rv"] is not None and v["hindsight"] is not None)
        got = sum(1 for v in vs if v["hindsight"] is not None)
        misses = [v for v in vs if v["miss"]]
        lines.append(f"- {sc}: {len(vs)} runs, hindsight got a GPU in {got}, rv in "
                     f"{sum(1 for v in vs if v['rv'] is not None)}; misses {len(misses)}"
                     + (f" (seeds {', '.join(str(v['seed']) for v in misses)})" if misses else "")
                     + (f"; rv/hindsight {ratios}" if ratios else "") + (f"; rv - hindsight s {gaps}" if gaps else ""))
        for v in misses:
            for w in v.get("why", []):
                lines.append(f"  - seed {v['seed']} why: {w}")
    return lines


def est_later(s):
    return s.get("est_wait_s") is None or s["est_wait_s"] > 5


def main():
    exit_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--rv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--random-seeds", type=int, default=0,
                    help="draw this many seeds at random at run time (printed; replay one with --seeds N); "
                         "overrides --seed/--repeats")
    ap.add_argument("--seeds", default="", help="exactly these seeds, comma separated (overrides --seed/--repeats)")
    ap.add_argument("--scenarios", default="1x3h,2x30m,4x24h,8x3h", help="GPUSxWORK, comma separated")
    ap.add_argument("--cap", type=float, default=30, help="real seconds a contender may wait")
    ap.add_argument("--resolution", type=float, default=2.0,
                    help="real s below which a difference to the bound is not counted (bf_interval)")
    ap.add_argument("--settle", type=float, default=2.5)
    ap.add_argument("--preferred", default="gpu-a100")
    ap.add_argument("--serial-order", default="gpu-a100,gpu-h200,gpu-a6000,gpu-v100")
    ap.add_argument("--serial-wait", type=float, default=2.0, help="real seconds per partition (2 cluster-min)")
    ap.add_argument("--hindsight-groups", type=int, default=2)
    ap.add_argument("--complete-upto", type=float, default=30, help="run work of at most this many real s to the end")
    ap.add_argument("--contenders", default="rv,naive,serial,hindsight")
    ap.add_argument("--host", default="rvtb",
                    help="the login node's alias for rv and serial failover (rvtb-wan: through the WAN proxy)")
    ap.add_argument("--from-json", help="re-summarise the rows of earlier results.json files, comma separated "
                                        "(runs of one benchmark in parts; no cluster needed)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.from_json:
        rows, plans, wall = [], {}, 0
        for path in a.from_json.split(","):
            with open(path) as fh:
                old = json.load(fh)
            rows += old["rows"]
            wall += (old.get("summary") or {}).get("wall_s", 0)
            # rv's plans: in the rows, or else in the request records rv left in the run's state dir.
            rdir = os.path.join(os.path.dirname(os.path.abspath(path)), "state", "requests")
            for f in (os.listdir(rdir) if os.path.isdir(rdir) else []):
                if not f.endswith(".json"):
                    continue
                with open(os.path.join(rdir, f)) as fh:
                    rec = json.load(fh)
                for j in rec.get("jobs", []):
                    plans[j.get("job_id")] = rec.get("plan")
        for r in rows:
            rvr = r.get("rv") or {}
            if not rvr.get("plan"):
                rvr["plan"] = next((plans[j] for j in rvr.get("jobs", []) if j in plans), None)
            # Runs before the fix in run_rv projected a checkpoint winner from its segment's limit.
            if rvr.get("kind") == "checkpoint" and str(rvr.get("completed_how", "")).startswith("projected"):
                rvr.update(completed=True, completed_how="projected: checkpoint segments")
        keys = list(dict.fromkeys(r["scenario"] for r in rows))
        scenarios = [dict(key=k, gpus=int(parse_scenario(k)[0]), work=parse_scenario(k)[1]) for k in keys]
        a.state_dirs = [os.path.join(os.path.dirname(os.path.abspath(p)), "state") for p in a.from_json.split(",")]
        report(rows, scenarios, a, wall)
        return
    env = Env(a.rv, a.out, a.host)
    a.state_dirs = [os.path.join(a.out, "state")]
    ensure_users()
    scenarios = []
    for s in a.scenarios.split(","):
        g, w, profile = parse_scenario(s)
        if profile not in workload.PROFILES:
            raise SystemExit(f"ttg: unknown load profile '{profile}' in {s} (known: {', '.join(sorted(workload.PROFILES))})")
        work_real = {"30m": 30, "3h": 180, "24h": 1440}.get(w)
        if work_real is None:
            unit = w[-1]
            work_real = int(float(w[:-1]) * {"m": 1, "h": 60, "d": 1440}[unit])
        scenarios.append(dict(key=s, gpus=int(g), work=w, profile=profile, work_real_s=work_real,
                              work_limit_min=max(1, math.ceil(work_real / 60))))
    contenders = a.contenders.split(",")
    a.seed_list = draw_seeds(a)
    log(f"seeds: {','.join(map(str, a.seed_list))} (replay one: --seeds N)")
    results = []
    t_all = time.time()
    # Seed by seed, every scenario of a seed before the next: a run cut short keeps whole seeds.
    for rep, seed in enumerate(a.seed_list):
        for si, sc in enumerate(scenarios):
            seq = workload.generate(seed, a.cap + a.settle + 30, sc["profile"])
            suffix = "" if sc["profile"] == "mixed" else f"-{sc['profile']}"
            with open(os.path.join(a.out, f"workload-seed{seed}{suffix}.jsonl"), "w") as fh:
                fh.write(workload.dumps(seq))
            row = dict(scenario=sc["key"], gpus=sc["gpus"], work=sc["work"], repeat=rep, seed=seed)
            tag = f"{si}{rep}"
            for c in contenders:
                groups = [None]
                if c == "hindsight":
                    plan = (row.get("rv") or {}).get("plan")
                    if not plan:
                        log(f"{sc['key']} seed {seed}: no rv plan, no hindsight")
                        continue
                    groups = hindsight_groups(plan, a.hindsight_groups, sc["work_real_s"])
                    row["hindsight"] = dict(groups=[])
                for gi, group in enumerate(groups):
                    name = f"{PREFIX}-{tag}-{c[:2]}{gi}-{os.getpid()}"
                    rp = Replay(seq, tag)
                    t_setup = time.time()
                    rp.start(a.settle)
                    t_setup = time.time() - t_setup
                    c0 = rvtest_rpcs()
                    try:
                        if c == "rv":
                            res = run_rv(env, sc, name, a.cap)
                        elif c == "naive":
                            res = run_naive(env, sc, name, a.cap, a.preferred)
                        elif c == "serial":
                            res = run_serial(env, sc, name, a.cap, a.serial_order.split(","), a.serial_wait)
                        else:
                            # Only the earliest start counts: a later group need not wait longer than
                            # the best one so far (plus the resolution).
                            done = [g["ttg_s"] for g in row["hindsight"]["groups"] if g.get("ttg_s") is not None]
                            gcap = min([a.cap] + [t + a.resolution + 1 for t in done])
                            res = run_hindsight_group(env, sc, name, gcap, group)
                        res["rpcs"] = rvtest_rpcs() - c0
                        res["t_after_t0"] = round(res["t_start"] - rp.t0, 2)
                        # Completion is measured for rv (the contender under test) and projected from the
                        # granted limit for the others: waiting out every contender's work costs minutes.
                        finish(res, name, sc, complete=c == "rv" and sc["work_real_s"] <= a.complete_upto and res.get("start"))
                        if c == "rv":
                            settle_records(env)
                    finally:
                        rp.end()
                    if c == "rv" and res.get("plan"):
                        strat = {s["id"]: s for s in res["plan"].get("strategies", [])}
                        w = strat.get(res.get("strategy"))
                        if w:
                            res.update(kind=w["kind"], label=w["label"], est_wait_s=w.get("est_wait_s"))
                            if w["kind"] == "checkpoint":
                                res["su"] = round(w["est_su"] * SCALE, 1)
                    if c == "hindsight":
                        row["hindsight"]["groups"].append(res)
                    else:
                        row[c] = res
                    plan_s = f", plan+submit {res.get('submit_s')} s" if c == "rv" else ""
                    log(f"{sc['key']} seed {seed} {c}{gi if c == 'hindsight' else ''}: ttg {res.get('ttg_s')} s on "
                        f"{res.get('partition')} ({res.get('label') or res.get('kind')}){plan_s}, {res.get('submitted')} jobs, "
                        f"{res.get('rpcs')} RPCs, SU {res.get('su')}, done {res.get('completed')} (setup {t_setup:.1f} s)")
            if "hindsight" in row:
                started = [g for g in row["hindsight"]["groups"] if g.get("ttg_s") is not None]
                row["hindsight"]["best"] = min(started, key=lambda g: g["ttg_s"]) if started else {}
            results.append(row)
            with open(os.path.join(a.out, "results.json"), "w") as fh:
                json.dump(dict(partial=True, rows=results), fh, indent=1, default=str)
    report(results, scenarios, a, time.time() - t_all)


def report(results, scenarios, a, wall):
    summary = summarize(results, scenarios, a, wall)
    summary["estimates"] = estimate_errors(a.rv, getattr(a, "state_dirs", []))
    with open(os.path.join(a.out, "results.json"), "w") as fh:
        json.dump(dict(settings=vars(a), scale=SCALE, summary=summary, rows=strip(results)), fh, indent=1, default=str)
    table = render(summary, a.cap)
    with open(os.path.join(a.out, "table.md"), "w") as fh:
        fh.write(table)
    print(table)
    plot(summary, a.out, a.cap)


def strip(rows):
    """The rows as written: rv's plan stays (explain() reads it when re-summarising)."""
    return rows


def summarize(results, scenarios, a, wall):
    out = dict(wall_s=round(wall, 1), scenarios=[], runs=[])
    keys = {sc["key"]: sc for sc in scenarios}
    for r in results:
        v = run_verdict(r, a.cap, a.resolution)
        if v["miss"]:
            v["why"] = explain(r.get("rv") or {}, r.get("hindsight") or {}, r.get("naive") or {}, r.get("serial") or {},
                               keys.get(r["scenario"], {}))
        out["runs"].append(v)
    for sc in scenarios:
        rows = [r for r in results if r["scenario"] == sc["key"]]
        s = dict(scenario=sc["key"], gpus=sc["gpus"], work=sc["work"], repeats=len(rows), contenders={})
        for c in ("rv", "naive", "serial", "hindsight"):
            rs = [(r.get(c, {}) if c != "hindsight" else (r.get("hindsight") or {}).get("best") or {}) for r in rows]
            if c == "hindsight":
                groups = [g for r in rows for g in (r.get("hindsight") or {}).get("groups", [])]
                subs = sum(g.get("submitted", 0) for g in groups)
                canc = sum(g.get("cancelled", 0) for g in groups)
                rpcs = [sum(g.get("rpcs", 0) for g in (r.get("hindsight") or {}).get("groups", [])) for r in rows]
            else:
                subs = sum(x.get("submitted", 0) for x in rs)
                canc = sum(x.get("cancelled", 0) for x in rs)
                rpcs = [x.get("rpcs") for x in rs]
            # StartTime has whole seconds: a start in the contender's first second can read -0.x.
            ttg = [None if x.get("ttg_s") is None else max(0.0, x["ttg_s"]) for x in rs]
            s["contenders"][c] = dict(
                ttg_median=med_censored(ttg), ttg_min=spread(ttg)[0], ttg_max=spread(ttg)[1], ttg_all=ttg,
                censored=sum(1 for t in ttg if t is None), su_median=med([x.get("su") for x in rs]),
                completed=sum(1 for x in rs if x.get("completed")), runs=len(rs),
                submitted_per_run=round(subs / max(1, len(rs)), 1), cancelled_per_run=round(canc / max(1, len(rs)), 1),
                rpcs_median=med(rpcs), where=sorted({f"{x.get('partition')}:{x.get('kind') or ''}" for x in rs if x.get("partition")}))
        cm = s["contenders"]
        rvm = cm["rv"]["ttg_median"]
        cap = a.cap

        def ratio(x, y, y_censored_is_cap=True):
            if x is None:
                return None
            if y is None:
                return f"<{x / cap:.2f}" if y_censored_is_cap else None
            return round(x / y, 2) if y > 0 else "-"

        s["ratio_vs_hindsight"] = ratio(rvm, cm["hindsight"]["ttg_median"], False)
        s["ratio_vs_naive"] = ratio(rvm, cm["naive"]["ttg_median"])
        s["ratio_vs_serial"] = ratio(rvm, cm["serial"]["ttg_median"])
        # SU: the cheapest strategy (hindsight runs, naive, serial) that started no later than rv.
        early = []
        for r in rows:
            t = (r.get("rv") or {}).get("ttg_s")
            if t is None:
                continue
            cands = [g for g in (r.get("hindsight") or {}).get("groups", [])] + [r.get("naive") or {}, r.get("serial") or {}]
            sus = [g.get("su") for g in cands if g.get("ttg_s") is not None and g["ttg_s"] <= t + 1 and g.get("su")]
            if sus and (r.get("rv") or {}).get("su"):
                early.append(r["rv"]["su"] / min(sus))
        s["su_vs_cheapest_as_early"] = round(med(early), 2) if early else None
        targets = {}

        def check(val, limit):
            if val is None:
                return "n/a"
            if val == "-":
                return "n/a"
            if isinstance(val, str):  # "<x": the other never started within the cap
                return "PASS" if float(val[1:]) <= limit else "n/a"
            return "PASS" if val <= limit else "MISS"

        hm = cm["hindsight"]["ttg_median"]
        if rvm is not None and hm is not None and rvm <= hm + a.resolution:
            targets["vs_hindsight<=1.2"] = "PASS" if rvm <= 1.2 * hm else "PASS(res)"
        else:
            targets["vs_hindsight<=1.2"] = check(s["ratio_vs_hindsight"], 1.2)
        targets["vs_naive<=0.5"] = check(s["ratio_vs_naive"], 0.5)
        targets["vs_serial<=0.5"] = check(s["ratio_vs_serial"], 0.5)
        if rvm is None:  # rv got nothing within the cap: a miss wherever another contender did
            for k, c in (("vs_hindsight<=1.2", "hindsight"), ("vs_naive<=0.5", "naive"), ("vs_serial<=0.5", "serial")):
                if cm[c]["ttg_median"] is not None:
                    targets[k] = "MISS"
        targets["su<=1.1x"] = check(s["su_vs_cheapest_as_early"], 1.1)
        s["targets"] = targets
        submit_median = med([(r.get("rv") or {}).get("submit_s") for r in rows])
        s["rv_submit_s_median"] = None if submit_median is None else round(submit_median, 3)  # no 0.4499999...
        s["rv_submit_s_all"] = [(r.get("rv") or {}).get("submit_s") for r in rows]
        s["seeds"] = [r.get("seed") for r in rows]
        if any(v.startswith(("MISS", "PASS(res)")) for v in targets.values()):
            whys = []
            for r in rows:
                for w in explain(r.get("rv") or {}, r.get("hindsight") or {}, r.get("naive") or {}, r.get("serial") or {}, sc):
                    whys.append(f"seed {r['seed']}: {w}")
            s["why"] = whys
        out["scenarios"].append(s)
    return out


def label(s):
    """The table's request cell: "4 GPU x 24h", and the load profile when it is not the mixed one."""
    profile = s["scenario"].partition("@")[2]
    return f"{s['gpus']} GPU x {s['work']}" + (f" ({profile} load)" if profile else "")


def render(summary, cap):
    lines = [f"time to first GPU in real seconds (1 s = 1 cluster-minute), median [min-max] of the repeats; "
             f">{cap:g} = not started within the cap", "",
             "| request | rv | naive sbatch | serial failover | hindsight | rv/hindsight | rv/naive | rv/serial | rv plan+submit s | rv SU | SU vs cheapest as early | jobs sub/cancel rv, naive, serial | RPCs rv, naive, serial | work done rv | targets |",
             "| --- " * 15 + "|"]
    for s in summary["scenarios"]:
        c = s["contenders"]

        def cell(k):
            x = c[k]
            m = fmt_t(x["ttg_median"], cap) if x["runs"] else "-"
            if x["runs"] > 1:
                lo = fmt_t(x["ttg_min"], cap)
                hi = fmt_t(x["ttg_max"], cap) if x["censored"] == 0 else f">{cap:g}"
                m += f" [{lo}-{hi}]"
            return m

        t = s["targets"]
        tstr = " ".join(f"{k.split('<')[0]}:{v}" for k, v in t.items())
        lines.append(
            f"| {label(s)} | {cell('rv')} | {cell('naive')} | {cell('serial')} | {cell('hindsight')} | "
            f"{s['ratio_vs_hindsight']} | {s['ratio_vs_naive']} | {s['ratio_vs_serial']} | {s['rv_submit_s_median']} | {c['rv']['su_median']} | "
            f"{s['su_vs_cheapest_as_early']} | "
            f"{c['rv']['submitted_per_run']}/{c['rv']['cancelled_per_run']}, {c['naive']['submitted_per_run']}/{c['naive']['cancelled_per_run']}, "
            f"{c['serial']['submitted_per_run']}/{c['serial']['cancelled_per_run']} | "
            f"{c['rv']['rpcs_median']}, {c['naive']['rpcs_median']}, {c['serial']['rpcs_median']} | "
            f"{c['rv']['completed']}/{c['rv']['runs']} | {tstr} |")
    lines.append("")
    for s in summary["scenarios"]:
        w = s["contenders"]["rv"]["where"]
        lines.append(f"- {s['scenario']}: rv ran on {', '.join(w) or '-'}; hindsight best on "
                     f"{', '.join(s['contenders']['hindsight']['where']) or '-'}")
        per_seed = ", ".join(f"seed {sd}: {t} s" for sd, t in zip(s.get("seeds", []), s.get("rv_submit_s_all", [])))
        if per_seed:
            lines.append(f"  - rv plan+submit: {per_seed}")
        for why in s.get("why", []):
            lines.append(f"  - why: {why}")
    if summary.get("runs"):
        lines += render_runs(summary["runs"], cap)
    if summary.get("estimates"):
        lines += render_estimates(summary["estimates"])
    lines.append(f"\nwall time {summary['wall_s']:.0f} s")
    return "\n".join(lines) + "\n"


def plot(summary, out, cap):
    if not shutil_which("gnuplot"):
        log("gnuplot not installed (apt-get install gnuplot-nox): no PNG")
        return
    dat = os.path.join(out, "ttg.dat")
    with open(dat, "w") as fh:
        fh.write("# request rv naive serial hindsight\n")
        for s in summary["scenarios"]:
            vals = []
            for k in ("rv", "naive", "serial", "hindsight"):
                v = s["contenders"][k]["ttg_median"]
                vals.append(f"{cap if v is None else v:.1f}")
            fh.write(f"\"{s['gpus']}g {s['work']}\" " + " ".join(vals) + "\n")
    gp = f"""set terminal pngcairo size 900,500
set output '{out}/ttg.png'
set title 'Median time to first GPU (real s; 1 s = 1 cluster-minute; bars at {cap:g} = not started within the cap)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'seconds'
set yrange [0:{cap * 1.1:g}]
set key outside bottom center horizontal
plot '{dat}' using 2:xtic(1) title 'rv', '' using 3 title 'naive sbatch', '' using 4 title 'serial failover', '' using 5 title 'hindsight bound'
"""
    r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    if r.returncode != 0:
        gp = gp.replace("pngcairo", "png")
        r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    log(f"plot: {out}/ttg.png" if r.returncode == 0 else f"gnuplot failed: {r.stderr[:300]}")


def shutil_which(x):
    import shutil
    return shutil.which(x)


if __name__ == "__main__":
    main()
