#!/usr/bin/env python3
"""A whole study raced (docs/benchmark-time-to-gpu.md, "Studies"; issue #41 item 5): N one-GPU
tasks on the seeded loaded testbed, four ways, each on its own replay of the same load:

  array  a Slurm job array on the one partition a user would pick: the cheapest (per GPU) with
         free GPUs at submission (sinfo)
  loop   N independent `rv run`s, one per task, one after the other (a shell loop)
  every  the array submitted to every partition, cheapest first; as a task ends its copies
         elsewhere are cancelled, and once every task has ended, the rest
  rv     `rv run --array 0-(N-1)`: one study, workers that claim tasks
  rvcost the same with `--prefer cost` (only with --arms ...,rvcost): the pool keeps to the
         cheapest GPUs that start

Each task appends one line (job, array job, start, end) to its own marker file in rvtest's home on
the cluster that ran it; the markers are the one measure of every arm: makespan (the last task's
first end after the arm began), the sum of the tasks' waits (first start after the arm began),
duplicates (a task's extra lines). SU: sacct's billing x elapsed of every job of the arm, in
cluster hours (ttglib's SU). Peak queued: the most pending+running jobs of the arm at once
(squeue -r every 0.5 s; an array's pending elements count one each, as MaxSubmitJobs counts them).
The association's MaxSubmitJobs is read with sacctmgr; when none is set, --max-submit is set for
rvtest for the arm and cleared after it. Run it through run.sh --study (cluster 1's environment).
"""

import argparse
import atexit
import contextlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import tempfile
import subprocess
import threading
import time

import across
import ttglib
import workload

log = ttglib.log
USER = "rvtest"
ARMS = ("array", "loop", "every", "rv", "rvcost")
DEFAULT_ARMS = ("array", "loop", "every", "rv")  # rvcost (`--prefer cost`) on request: --arms array,rv,rvcost
RESTORE = []  # (slurm, user, value) to put back: MaxSubmitJobs set for an arm
LIMITS = {}  # alias: the limit of the last arm, where it comes from, whether slurmctld enforces it


def on_signal(signum, _frame):
    """SIGTERM/SIGINT: the limits put back, the load and every job of ours gone, then exit."""
    log(f"signal {signum}: restoring limits, purging")
    for slurm, user, val in list(RESTORE):
        with contextlib.suppress(Exception):
            slurm.set_max_submit(user, val)
    for r in list(ttglib.LIVE):
        with contextlib.suppress(Exception):
            r.stop.set()
            r.slurm.purge(wait_s=10)
    os._exit(128 + signum)


@contextlib.contextmanager
def locks(clusters):
    """The testbed locks of the arm's clusters, for the arm only (cluster 1's is the caller's when
    RV_TESTBED_LOCKED=1: a test holds it)."""
    held = [c for c in clusters if not (c.alias == "rvtb" and os.environ.get("RV_TESTBED_LOCKED") == "1")]
    with across.testbed_locks(held):
        yield


@contextlib.contextmanager
def submit_limit(clusters, want):
    """{alias: MaxSubmitJobs in force}: the association's own, else `want` set for the arm."""
    got, set_here = {}, []
    try:
        for c in clusters:
            have, src = c.slurm.max_submit(USER)
            if have is None and want:
                RESTORE.append((c.slurm, USER, None))
                c.slurm.set_max_submit(USER, want)
                set_here.append(c)
                have, src = want, "association MaxSubmitJobs set for the arm"
            enforced = c.slurm.run(["scontrol", "show", "config"]).stdout
            enforced = "limits" in (re.search(r"AccountingStorageEnforce\s*=\s*(\S+)", enforced) or [""," "])[1]
            got[c.alias] = have
            LIMITS[c.alias] = dict(limit=have, source=src, enforced=enforced)
        if set_here:
            time.sleep(1)  # slurmdbd pushes the association to slurmctld
        yield got
    finally:
        for c in set_here:
            c.slurm.set_max_submit(USER, None)
            RESTORE[:] = [r for r in RESTORE if r[0] is not c.slurm]


def task_cmd(task_s, mdir, task):
    """The task: its start, the work, then one line at its end (a killed attempt writes none)."""
    return (f"mkdir -p {mdir} && s=$(date +%s.%N) && sleep {task_s} && "
            f"printf '%s %s %s %s\\n' \"$SLURM_JOB_ID\" \"${{SLURM_ARRAY_JOB_ID:-0}}\" \"$s\" \"$(date +%s.%N)\" "
            f">>{mdir}/m.{task}")


def read_markers(clusters, mdir):
    """{task: [(job, array_job, start, end, alias)]} from every cluster's marker files."""
    out = {}
    for c in clusters:
        p = c.env.ssh(f"cd {mdir} 2>/dev/null && grep -H . m.* 2>/dev/null", check=False)
        if p.returncode == 255:  # ssh itself failed: no markers read is not "no task ended"
            raise RuntimeError(f"study: reading the markers on {c.alias} failed: {p.stderr.strip()[:300]}")
        r = p.stdout
        for line in r.splitlines():
            fn, _, rest = line.partition(":")
            f = rest.split()
            if len(f) == 4 and fn.startswith("m."):
                out.setdefault(int(fn[2:]), []).append((f[0], f[1], float(f[2]), float(f[3]), c.alias))
    return out


class Sampler:
    """The arm's pending+running jobs on its clusters, sampled every 0.5 s: the peak."""

    def __init__(self, clusters, prefix):
        self.clusters, self.prefix = clusters, prefix
        self.peak, self.samples = 0, 0
        self.peak_by = {c.alias: 0 for c in clusters}  # each cluster's own: a limit is per cluster
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            n = 0
            for c in self.clusters:
                with contextlib.suppress(Exception):
                    k = sum(1 for r in c.slurm.squeue(self.prefix, users=[USER], array=True) if r["state"] in ttglib.ALIVE)
                    self.peak_by[c.alias] = max(self.peak_by[c.alias], k)
                    n += k
            self.peak = max(self.peak, n)
            self.samples += 1
            self.stop.wait(0.5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)


def gpu_partitions(c):
    """The cluster's GPU partitions a one-GPU task may use: MIG slices left out, as rv leaves them
    out by default (a 1g.10gb slice is not the GPU the user asked for)."""
    return [p for p, v in c.shape.items() if not v.get("mig")]


def array_line(c, name, part, n, task_s, mdir):
    p = c.shape[part]
    cpus, mem = ttglib.share(part, 1, c.shape)
    parts = ["sbatch", "--parsable", "-J", name, "-p", part, "-N", "1", "--ntasks-per-node=1",
             f"--gres=gpu:{p['gtype']}:1", "-c", str(cpus), f"--mem={mem}", "--time=1", f"--array=0-{n - 1}",
             "-o", "/dev/null", "--wrap", task_cmd(task_s, mdir, "$SLURM_ARRAY_TASK_ID")]
    return " ".join(shlex.quote(x) for x in parts)


def wait_tasks(clusters, mdir, n, t_end, on_poll=None):
    """Polls the markers until every task has ended once or t_end; returns the last markers."""
    marks = {}
    while time.time() < t_end:
        marks = read_markers(clusters, mdir)
        if on_poll:
            on_poll(marks)
        if len(marks) >= n:
            break
        time.sleep(1.0)
    return marks


def arm_array(ctx, name, mdir):
    """The user's pick: the cheapest partition with a free GPU now (else the cheapest)."""
    cands, prices = [], {}
    for c in ctx["clusters"]:
        parts = gpu_partitions(c)
        free, w = c.slurm.free_gpus(parts), c.slurm.gpu_weights()
        cands += [(free[p] == 0, w.get(p, 1.0), c.alias, p, free[p]) for p in parts]
        prices.update({f"{c.alias}:{p}": v for p, v in c.slurm.gpu_prices(parts, c.shape).items()})
    _, weight, alias, part, free = min(cands)
    c = next(c for c in ctx["clusters"] if c.alias == alias)
    t0 = time.time()
    r = c.env.ssh(array_line(c, name, part, ctx["n"], ctx["task_s"], mdir), check=False)
    res = dict(t0=t0, where=f"{alias}:{part}", free_at_submission=free, gpu_weight=weight, gpu_prices=prices)
    if r.returncode != 0:
        res["error"] = f"sbatch refused: {r.stderr.strip()[:200]}"
        return res
    res["marks"] = wait_tasks(ctx["clusters"], mdir, ctx["n"], t0 + ctx["cap"])
    return res


def arm_every(ctx, name, mdir):
    """The array on every partition, cheapest first; a task's copies elsewhere are cancelled when
    it ends (pending or running), everything left once every task has ended."""
    subs, refused = [], []
    t0 = time.time()
    order = sorted(((c.slurm.gpu_weights().get(p, 1.0), c.alias, p) for c in ctx["clusters"] for p in gpu_partitions(c)))
    cl = {c.alias: c for c in ctx["clusters"]}
    for _, alias, part in order:
        r = cl[alias].env.ssh(array_line(cl[alias], name, part, ctx["n"], ctx["task_s"], mdir), check=False)
        if r.returncode == 0:
            subs.append((alias, part, r.stdout.strip().split(";")[0]))
        else:
            refused.append(f"{alias}:{part} ({r.stderr.strip().splitlines()[-1][:120] if r.stderr.strip() else r.returncode})")
    cancelled = set()

    def cancel_copies(marks):
        for t, lines in marks.items():
            if t in cancelled:
                continue
            cancelled.add(t)
            ran = {(l[4], l[1]) for l in lines}
            for alias, part, jid in subs:
                if (alias, jid) not in ran:
                    cl[alias].env.ssh(f"scancel {jid}_{t}", check=False)

    res = dict(t0=t0, submitted=[f"{a}:{p}" for a, p, _ in subs], refused=refused)
    if subs:
        res["marks"] = wait_tasks(ctx["clusters"], mdir, ctx["n"], t0 + ctx["cap"], cancel_copies)
    return res


def rv_args(ctx, hosts):
    env = ctx["clusters"][0].env
    return [env.rv, "--ssh-config", env.ssh_config] + [x for h in hosts for x in ("--host", h)]


def arm_loop(ctx, name, mdir):
    """One `rv run` per task, in a loop (the user's shell loop: one after the other)."""
    env = ctx["clusters"][0].env
    t0 = time.time()
    errors = []
    for t in range(ctx["n"]):
        p = subprocess.run(rv_args(ctx, ctx["hosts"]) + ["run", "-g", "1", "--time", f"{ctx['task_s']}s", "--name",
                           f"{name}-t{t}", "--", task_cmd(ctx["task_s"], mdir, t)],
                           capture_output=True, text=True, env=env.rv_env, timeout=180)
        if p.returncode != 0:
            errors.append(f"task {t}: rv exit {p.returncode}: {p.stderr.strip().splitlines()[-1][:160] if p.stderr.strip() else ''}")
    res = dict(t0=t0, submit_s=round(time.time() - t0, 1), errors=errors)
    res["marks"] = wait_tasks(ctx["clusters"], mdir, ctx["n"], t0 + ctx["cap"])
    if len(ctx["hosts"]) > 1:  # the background settlers of the races across clusters end with their requests
        for t in range(ctx["n"]):
            subprocess.run(rv_args(ctx, ctx["hosts"][:1]) + ["stop", f"{name}-t{t}"], capture_output=True,
                           env=env.rv_env, timeout=120)
    return res


def arm_rv_cost(ctx, name, mdir):
    """`rv run --array --prefer cost`: the study whose pool keeps to the cheapest GPUs that start."""
    return arm_rv(ctx, name, mdir, ["--prefer", "cost"])


def arm_rv(ctx, name, mdir, extra=()):
    """`rv run --array`: one study (no -f: the background settler tops the pool up)."""
    env = ctx["clusters"][0].env
    t0 = time.time()
    p = subprocess.run(rv_args(ctx, ctx["hosts"]) + ["--json", "run", "--array", f"0-{ctx['n'] - 1}", "-g", "1", "--time",
                       f"{ctx['task_s']}s", *extra, "--name", name, "--", task_cmd(ctx["task_s"], mdir, "{task}")],
                       capture_output=True, text=True, env=env.rv_env, timeout=180)
    res = dict(t0=t0, submit_s=round(time.time() - t0, 1))
    if p.returncode != 0:
        msg = " / ".join(l.strip() for l in p.stderr.strip().splitlines() if "warning" not in l)[:300]
        res.update(skip=f"rv refused (exit {p.returncode}): {msg}")
        return res
    try:
        out = json.loads(p.stdout)
        rid = out.get("id") or out.get("request_id") or (out.get("request") or {}).get("id")
    except json.JSONDecodeError:
        rid = None
    res["request"] = rid
    res["marks"] = wait_tasks(ctx["clusters"], mdir, ctx["n"], t0 + ctx["cap"])
    # The workers end by themselves once the queue is empty (docs/studies.md): give them 10 s.
    deadline = time.time() + 10
    while time.time() < deadline and any(r["state"] in ttglib.ALIVE for c in ctx["clusters"]
                                         for r in c.slurm.squeue(name, users=[USER])):
        time.sleep(0.5)
    res["alive_10s_after"] = sum(1 for c in ctx["clusters"] for r in c.slurm.squeue(name, users=[USER])
                                 if r["state"] in ttglib.ALIVE)
    if rid:
        ps = subprocess.run(rv_args(ctx, ctx["hosts"][:1]) + ["--json", "ps", rid], capture_output=True, text=True,
                            env=env.rv_env, timeout=120)
        with contextlib.suppress(json.JSONDecodeError):
            res["ps"] = json.loads(ps.stdout)
        subprocess.run(rv_args(ctx, ctx["hosts"][:1]) + ["stop", rid], capture_output=True, env=env.rv_env, timeout=120)
    return res


def measure(res, ctx, name):
    """Makespan, waits, duplicates from the markers; SU from sacct; once every job has ended."""
    n, cap = ctx["n"], ctx["cap"]
    marks = res.pop("marks", None) or {}
    t0 = res["t0"]
    firsts = {t: min(lines, key=lambda l: l[3]) for t, lines in marks.items()}
    res["done"] = len(firsts)
    res["makespan_s"] = round(max(l[3] for l in firsts.values()) - t0, 1) if len(firsts) == n else None
    waits = [round(min(l[2] for l in marks[t]) - t0, 1) if t in marks else None for t in range(n)]
    res["waits_s"] = waits
    # Each task's first attempt, (start, end) from the arm's start: the array's tell how its
    # partition's GPUs came free (su_floor).
    res["spans_s"] = [[round(firsts[t][2] - t0, 1), round(firsts[t][3] - t0, 1)] if t in firsts else None
                      for t in range(n)]
    res["wait_sum_s"] = round(sum(cap if w is None else w for w in waits), 1)
    res["wait_sum_censored"] = sum(1 for w in waits if w is None)
    res["duplicates"] = sum(len(v) - 1 for v in marks.values())
    res["ran_on"] = {}
    for lines in marks.values():
        for l in lines:
            res["ran_on"][l[4]] = res["ran_on"].get(l[4], 0) + 1
    # SU: every job of the arm, from the accounting once it has ended (billing x elapsed).
    rows = []
    deadline = time.time() + 20
    while time.time() < deadline:
        rows = [dict(r, cluster=c.alias) for c in ctx["clusters"] for r in c.slurm.accounting(USER, t0, name)]
        if all(r["ended"] for r in rows):
            break
        time.sleep(1)
    res["jobs"] = len(rows)
    res["jobs_ran"] = sum(1 for r in rows if r["elapsed_s"] > 0)
    res["su"] = round(sum(r["billing"] * r["elapsed_s"] for r in rows) / 60, 1)  # cluster hours: 1 real min = 1 h
    res["su_by_partition"], res["jobs_ran_by_partition"] = {}, {}
    for r in rows:
        k = f"{r['cluster']}:{r['partition']}"
        res["su_by_partition"][k] = round(res["su_by_partition"].get(k, 0) + r["billing"] * r["elapsed_s"] / 60, 1)
        if r["elapsed_s"] > 0:
            res["jobs_ran_by_partition"][k] = res["jobs_ran_by_partition"].get(k, 0) + 1
    return res


def run_arm(arm, ctx, seqs, tag, run_id):
    clusters = ctx["clusters"]
    name = f"{ttglib.PREFIX}-{tag}-{'rc' if arm == 'rvcost' else arm[:2]}-{os.getpid()}"
    mdir = f"~/.ttg-study/{run_id}/{tag}-{arm}"
    fn = dict(array=arm_array, loop=arm_loop, every=arm_every, rv=arm_rv, rvcost=arm_rv_cost)[arm]
    t_lock = time.time()
    with locks(clusters):
        lock_wait = time.time() - t_lock
        with submit_limit(clusters, ctx["max_submit"]) as limit:
            with across.loaded(clusters, seqs, tag, ctx["settle"]):
                with Sampler(clusters, name) as smp:
                    res = fn(ctx, name, mdir)
            # The replay's end purged the load and every job of ours: check that none is left.
            left = [r["id"] for c in clusters for r in c.slurm.squeue(ttglib.PREFIX, users=[USER]) if r["state"] in ttglib.ALIVE]
        res.update(arm=arm, name=name, limit=limit, limit_how={k: dict(v) for k, v in LIMITS.items()}, peak_queued=smp.peak, peak_by_cluster=smp.peak_by, samples=smp.samples, left=left,
                   lock_wait_s=round(lock_wait, 1))
        if "skip" not in res:
            measure(res, ctx, name)
        for c in clusters:
            c.env.ssh(f"rm -rf {mdir}", check=False)
    # Let a test waiting for the lock have it: taken again at once, the lock starved them (flock
    # wakes its waiters but does not queue them; seen: two `flock -w 60` timing out between arms).
    time.sleep(ctx.get("yield_s", 3))
    return res


def fmt(v, cap, censored=False):
    return "-" if v is None and not censored else (f">{cap:g}" if v is None else f"{v:g}")


def over_limit(x):
    """(the arm went past a cluster's limit, some limit was set): each cluster's peak against its
    own limit (runs before peak_by_cluster: the total against the smallest)."""
    lims = {k: v for k, v in (x.get("limit") or {}).items() if v}
    if not lims:
        return False, False
    by = x.get("peak_by_cluster")
    if by:
        return any(by.get(k, 0) > v for k, v in lims.items()), True
    return (x.get("peak_queued") or 0) > min(lims.values()), True


TARGET_MAKESPAN, TARGET_SU = 0.7, 1.1  # issue #41's targets: rv against the array, per seed


def gpu_lanes(spans, task_s):
    """The GPUs of the array's partition as the array found them: a task that starts while every
    lane so far still runs one of its tasks took a GPU of its own. The time each lane was first
    seen taken (from the arm's start), in order."""
    ends, first = [], []
    for start, end in sorted(s for s in spans if s):
        free = [i for i, e in enumerate(ends) if e <= start + 0.5]
        if free:
            ends[free[0]] = end if end else start + task_s
        else:
            ends.append(end if end else start + task_s)
            first.append(start)
    return first


def su_floor(array, n, task_s, at=TARGET_MAKESPAN, slack_s=1.0):
    """The least SU, as a multiple of the array's, that any pool could spend and still end all n
    tasks within `at` x the array's makespan; every assumption is in the pool's favour:
    - the array's partition has the GPUs the array found there (gpu_lanes), each free `slack_s`
      before the array's first start on it and the pool's from then on;
    - tasks there run back to back, no start or claim time, at the array's own SU per task;
    - every other task runs at once on the cheapest other partition (price per GPU with its share
      of CPUs and memory, ttglib's gpu_prices), which has a GPU for each.
    So a floor above 1.1 says no pool meets both targets on that seed; below it, a pool might.
    Returns dict(floor, cheap_tasks, lanes, price_ratio) or None (array not ended, no prices)."""
    prices, where = array.get("gpu_prices") or {}, array.get("where")
    spans = array.get("spans_s") or [[w, None] if w is not None else None for w in array.get("waits_s") or []]
    if not array.get("makespan_s") or where not in prices or not spans or not array.get("su"):
        return None
    others = [p for k, p in prices.items() if k != where]
    if not others or not prices[where]:
        return None
    ratio = min(others) / prices[where]
    horizon = at * array["makespan_s"]
    lanes = gpu_lanes(spans, task_s)
    cheap = min(n, sum(max(0, int((horizon - max(0.0, f - slack_s)) // task_s)) for f in lanes))
    # A cheaper partition than the array's (no GPU free there at submission) could take every task.
    floor = ratio if ratio < 1 else (cheap + (n - cheap) * ratio) / n
    return dict(floor=round(floor, 3), cheap_tasks=cheap, lanes=len(lanes), price_ratio=round(ratio, 3))


def self_test():
    """su_floor on arrays whose answer is known by hand (ctest bench.study_floor)."""
    prices = {"c:cheap": 100.0, "c:next": 125.0, "c:dear": 300.0}
    # Two GPUs, a task every 12 s on each (10 s of work, 2 s for Slurm to start the next): 8 rounds.
    spans = [[0.3 + 12 * (t // 2), 10.3 + 12 * (t // 2)] for t in range(16)]
    arr = dict(makespan_s=94.3, spans_s=spans, su=160.0, where="c:cheap", gpu_prices=prices)
    f = su_floor(arr, 16, 10)
    # 0.7 x 94.3 = 66.0 s: each of 2 lanes holds 6 tasks back to back; 4 go to next at 1.25.
    assert f == dict(floor=1.062, cheap_tasks=12, lanes=2, price_ratio=1.25), f
    # Two more GPUs came free at 40 s: the pool has them too (2 x 2 more tasks by 66 s).
    more = spans[:8] + [[40.5, 50.5], [40.5, 50.5]] + [[s + 0, e] for s, e in spans[8:14]]
    f = su_floor(dict(arr, spans_s=more, makespan_s=80.0), 16, 10)
    assert f["lanes"] == 4 and f["cheap_tasks"] == 2 * 5 + 2 * 1 and f["floor"] == 1.062, f  # 56 s: 5 + 5 + 1 + 1
    # A fast array (4 GPUs, 4 rounds of 12 s = 46 s): 0.7x leaves 3 rounds there, 4 tasks elsewhere.
    fast = [[0.3 + 12 * (t // 4), 10.3 + 12 * (t // 4)] for t in range(16)]
    f = su_floor(dict(arr, spans_s=fast, makespan_s=46.3), 16, 10)
    assert f["cheap_tasks"] == 12 and f["floor"] == 1.062, f
    # The floor says infeasible when the next partition is dear: 4 tasks at 3x.
    f = su_floor(dict(arr, gpu_prices={"c:cheap": 100.0, "c:dear": 300.0}), 16, 10)
    assert f["floor"] == 1.5, f
    # Old records without spans: the waits and a task's length stand in.
    old = dict(arr, spans_s=None, waits_s=[s for s, _ in spans])
    assert su_floor(old, 16, 10)["floor"] == 1.062
    assert su_floor(dict(arr, makespan_s=None), 16, 10) is None  # the array did not end: no floor
    assert su_floor(dict(arr, gpu_prices={}), 16, 10) is None
    assert su_floor(dict(arr, gpu_prices={"c:cheap": 100.0, "c:less": 80.0}), 16, 10)["floor"] == 0.8
    print("study.py self-test: ok")


def verdict(row, cap):
    """The targets for one seed: rv's makespan <= 0.7x the array's, SU <= 1.1x, peak queued <= the
    limit, no duplicates."""
    a, rv = row["array"], row["rv"]
    out = {}
    if rv.get("skip"):
        return dict(makespan="SKIP", su="SKIP", peak="SKIP", duplicates="SKIP")
    ma, mr = a.get("makespan_s"), rv.get("makespan_s")
    if mr is None:
        out["makespan"] = "MISS"
    elif ma is None:  # the array did not finish within the cap: its makespan is above it
        out["makespan"] = "PASS" if mr <= 0.7 * cap else "n/a (array censored)"
    else:
        out["makespan"] = "PASS" if mr <= 0.7 * ma else "MISS"
    sa, sr = a.get("su"), rv.get("su")
    n = len(rv.get("waits_s") or []) or 1
    if sr is not None and sa and rv.get("done", n) < n:
        # rv did not end every task: its SU is for fewer tasks; per task done it can still miss.
        per = (sr / max(1, rv["done"])) / (sa / max(1, a.get("done") or n))
        out["su"] = "MISS" if per > 1.1 else f"n/a ({rv['done']}/{n} done)"
    elif sr is None or not sa:
        out["su"] = "n/a"
    elif sr <= 1.1 * sa:
        out["su"] = "PASS"  # a censored array's SU is a lower bound: a pass holds
    else:
        out["su"] = "MISS" if ma is not None else "n/a (array censored)"
    out["peak"] = "no limit" if not over_limit(rv)[1] else ("MISS" if over_limit(rv)[0] else "PASS")
    out["duplicates"] = "PASS" if rv.get("duplicates") == 0 else "MISS"
    return out


def explain_rv(x, n):
    """rv's pool as it ran, from `rv ps REQ --json`: per strategy the workers, how many started,
    the plan's wait for them; and whether the pool was ever topped up."""
    ps = x.get("ps")
    rec = (ps[0] if isinstance(ps, list) and ps else ps) or {}
    jobs = rec.get("jobs") or []
    if not jobs:
        return []
    per = {}
    for j in jobs:
        p = per.setdefault(j.get("partition"), dict(n=0, ran=0, est=set(), pending=0))
        p["n"] += 1
        p["ran"] += 1 if j.get("started_at") else 0
        p["pending"] += 1 if j.get("state") == "PENDING" else 0
        if j.get("predicted_wait_s") is not None:
            p["est"].add(j["predicted_wait_s"])
    parts = [f"{k}: {v['n']} worker(s), {v['ran']} started" + (f", {v['pending']} still pending" if v["pending"] else "")
             + f" (plan's wait {'/'.join(str(e) for e in sorted(v['est']))} s)" for k, v in per.items()]
    ran = sum(v["ran"] for v in per.values())
    out = ["workers " + "; ".join(parts)]
    out.append(f"{len(jobs)} worker(s) for {n} task(s): {'no top-up' if len(jobs) <= n else f'{len(jobs) - n} added by top-ups'}; "
               f"{x.get('done', 0)} task(s) done by {ran} started worker(s)")
    return out


def render(rows, a, wall):
    cap = a.cap
    lines = [f"{a.tasks} one-GPU tasks of {a.task_s:g} s (= {a.task_s:g} cluster-minutes) each; times in real s "
             f"from the arm's first submission; >{cap:g} = not done within the cap; SU = billing x elapsed of every "
             f"job of the arm, cluster hours", "",
             "| seed | arm | where | makespan | sum of waits | SU | peak queued (limit) | jobs (ran) | duplicates | notes |",
             "| --- " * 10 + "|"]
    for r in rows:
        for arm in ARMS:
            if arm not in r:  # a run from before the arm existed
                continue
            x = r.get(arm) or {}
            if x.get("skip"):
                lines.append(f"| {r['seed']} | {arm} | - | SKIP | SKIP | SKIP | SKIP | - | - | {x['skip']} |")
                continue
            where = x.get("where") or ", ".join(f"{k.split(':', 1)[1] if len(x.get('limit') or {}) < 2 else k} x{v}"
                                                for k, v in sorted((x.get("jobs_ran_by_partition") or {}).items()))
            lim = ", ".join(f"{v if v else 'none'}" for v in (x.get("limit") or {}).values())
            if over_limit(x)[0]:
                lim += ", OVER"
            if len(x.get("peak_by_cluster") or {}) > 1:
                lim += "; " + ", ".join(f"{k} {v}" for k, v in x["peak_by_cluster"].items())
            notes = []
            if x.get("error"):
                notes.append(x["error"])
            if x.get("refused"):
                notes.append("refused: " + "; ".join(x["refused"]))
            if x.get("errors"):
                notes.append(f"{len(x['errors'])} rv run(s) failed: " + "; ".join(x["errors"][:3]))
            if x.get("left"):
                notes.append(f"LEFT: {len(x['left'])} job(s) alive after the purge")
            if arm in ("rv", "rvcost") and x.get("alive_10s_after"):
                notes.append(f"{x['alive_10s_after']} worker(s) alive 10 s after the last task")
            if x.get("done", a.tasks) < a.tasks:
                notes.append(f"{x.get('done')}/{a.tasks} tasks done")
            wsum = f"{x.get('wait_sum_s')}" + (f" ({x['wait_sum_censored']} at the cap)" if x.get("wait_sum_censored") else "")
            lines.append(f"| {r['seed']} | {arm} | {where} | {fmt(x.get('makespan_s'), cap, True)} | {wsum} | "
                         f"{x.get('su')} | {x.get('peak_queued')} ({lim}) | {x.get('jobs')} ({x.get('jobs_ran')}) | "
                         f"{x.get('duplicates')} | {' / '.join(notes)} |")
    lines += ["", "| seed | rv/array makespan | rv/array SU | least SU of any pool at 0.7x (su_floor) | rv/loop makespan | "
              "rv/every makespan | rv/every SU | targets |",
              "| --- " * 8 + "|"]
    for r in rows:
        v = r["verdict"]

        def ratio(k, other):
            x, y = (r.get("rv") or {}).get(k), (r.get(other) or {}).get(k)
            if x is None:
                return "-"
            if y is None:
                return f"<{x / cap:.2f}" if k == "makespan_s" else "-"
            return f"{x / y:.2f}" if y else "-"

        fl = r.get("floor")
        floor = "-" if not fl else (f"{fl['floor']:.3f} ({fl['cheap_tasks']} of {a.tasks} tasks on {fl['lanes']} GPU(s) "
                                    f"there, the rest at {fl['price_ratio']:.2f}x)")
        lines.append(f"| {r['seed']} | {ratio('makespan_s', 'array')} | {ratio('su', 'array')} | {floor} | "
                     f"{ratio('makespan_s', 'loop')} | {ratio('makespan_s', 'every')} | {ratio('su', 'every')} | "
                     + " ".join(f"{k}:{x}" for k, x in v.items()) + " |")
    cost_rows = [r for r in rows if (r.get("rvcost") or {}).get("makespan_s") is not None]
    if cost_rows:  # the same study with --prefer cost, against the array and against rv's default
        lines += ["", "| seed | rv --prefer cost / array: makespan | SU | rv --prefer time / array: makespan | SU |",
                  "| --- " * 5 + "|"]
        for r in cost_rows:
            a_, c_, t_ = r.get("array") or {}, r["rvcost"], r.get("rv") or {}

            def rel(x, k):
                return f"{x[k] / a_[k]:.2f}" if x.get(k) is not None and a_.get(k) else "-"

            lines.append(f"| {r['seed']} | {rel(c_, 'makespan_s')} | {rel(c_, 'su')} | {rel(t_, 'makespan_s')} | "
                         f"{rel(t_, 'su')} |")
    miss = [r["seed"] for r in rows if any(x == "MISS" for x in r["verdict"].values())]
    whys = [f"- seed {r['seed']} rv: {w}" for r in rows if any(v == "MISS" for v in r["verdict"].values())
            and not (r.get("rv") or {}).get("skip") for w in explain_rv(r.get("rv") or {}, a.tasks)]
    if whys:
        lines += ["", "Where rv missed, its pool as it ran (`rv ps REQ --json`):", ""] + whys
    how = {}
    for r in rows:
        for arm in ARMS:
            for alias, h in ((r.get(arm) or {}).get("limit_how") or {}).items():
                how[alias] = h
    for alias, h in sorted(how.items()):
        lines.append(f"- {alias}: limit {h.get('limit')} ({h.get('source')}), "
                     + ("enforced by slurmctld" if h.get("enforced") else
                        "NOT enforced by slurmctld (AccountingStorageEnforce has no 'limits'): an arm over it "
                        "would be refused at a site that enforces it"))
    beyond = [r["seed"] for r in rows if (r.get("floor") or {}).get("floor", 0) > TARGET_SU]
    lines += ["", f"- seeds where no pool can meet both targets (least SU at {TARGET_MAKESPAN}x the array's makespan "
              f"above {TARGET_SU}x, su_floor): {len(beyond)} of {len(rows)}" + (f" ({', '.join(map(str, beyond))})" if beyond else "")]
    lines += [f"- seeds {len(rows)}, with a miss: {len(miss)}" + (f" ({', '.join(map(str, miss))})" if miss else ""),
              f"\nwall time {wall:.0f} s"]
    return "\n".join(lines) + "\n"


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true", help="check su_floor on known arrays and exit")
    ap.add_argument("--rv")
    ap.add_argument("--out")
    ap.add_argument("--random-seeds", type=int, default=5, help="seeds drawn at run time (printed)")
    ap.add_argument("--seeds", default="", help="exactly these seeds, comma separated (--across: A:B pairs, "
                                                "rvtb's seed : rvtb2's)")
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--task-s", type=float, default=10, help="real s per task (= cluster minutes)")
    ap.add_argument("--cap", type=float, default=120, help="real s an arm may take")
    ap.add_argument("--settle", type=float, default=2.5)
    ap.add_argument("--max-submit", type=int, default=32,
                    help="MaxSubmitJobs set for rvtest for each arm when its association has none (0: leave none)")
    ap.add_argument("--arms", default=",".join(DEFAULT_ARMS))
    ap.add_argument("--across", action="store_true", help="the user's two clusters: rv and the loop pass both "
                                                          "hosts, the array and every partition span both")
    ap.add_argument("--from-json", help="re-render earlier study.json files, comma separated (no cluster)")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if not a.out or not (a.rv or a.from_json):
        ap.error("--out and --rv are required (--from-json needs no --rv)")
    os.makedirs(a.out, exist_ok=True)
    if a.from_json:  # runs of one study in parts: their rows together (each file's settings must match)
        rows, wall = [], 0
        for path in a.from_json.split(","):
            with open(path) as fh:
                old = json.load(fh)
            for k in ("tasks", "task_s", "cap"):
                if old["settings"][k] != getattr(a, k):
                    raise SystemExit(f"study: {path} ran with --{k.replace('_', '-')} {old['settings'][k]}, not {getattr(a, k)}")
            rows += [r for r in old["rows"] if "verdict" in r]  # a seed cut short is left out
            wall += old.get("wall_s", 0)
        for r in rows:
            r["verdict"] = verdict(r, a.cap)
            arr = r.get("array") or {}
            if "gpu_prices" not in arr and str(arr.get("where", "")).startswith("rvtb:"):
                # Runs before the prices were kept: cluster 1's partitions as its slurm.conf has them now
                # (testbed/up.sh writes the same weights every time), when this shell reaches it.
                with contextlib.suppress(Exception):
                    arr["gpu_prices"] = {f"rvtb:{p}": v for p, v in ttglib.LOCAL.gpu_prices(
                        [p for p in workload.PARTITIONS if not workload.PARTITIONS[p].get("mig")]).items()}
            r["floor"] = su_floor(arr, a.tasks, a.task_s)
        table = render(rows, a, wall)
        with open(os.path.join(a.out, "study.md"), "w") as fh:
            fh.write(table)
        with open(os.path.join(a.out, "study.json"), "w") as fh:
            json.dump(dict(settings=vars(a), rows=rows, wall_s=wall), fh, indent=1, default=str)
        print(table)
        return
    if a.tasks < 1 or a.task_s <= 0 or a.task_s >= 55:
        raise SystemExit("study: --tasks >= 1 and 0 < --task-s < 55 (a task must end within its 1-minute limit)")
    arms = a.arms.split(",")
    bad = [x for x in arms if x not in ARMS]
    if bad:
        raise SystemExit(f"study: unknown arm {bad[0]!r} (known: {', '.join(ARMS)})")
    picked = across.CLUSTERS if a.across else across.CLUSTERS[:1]
    clusters = [across.Cluster(alias, f, lock, a.rv, os.path.join(a.out, alias)) for alias, f, lock in picked]
    # The shared ssh connection's socket in a short directory of its own: under a long --out (a
    # test's temp dir) `ssh-%C` passed the 108 bytes of a Unix socket path and every sbatch failed.
    sockets = tempfile.mkdtemp(prefix="ttgs-", dir="/tmp")
    atexit.register(shutil.rmtree, sockets, True)
    for c in clusters:
        c.env.control = os.path.join(sockets, f"{c.alias}-%C")
    rng = random.SystemRandom()
    if a.seeds:
        seeds = [tuple(int(x) for x in s.split(":")) for s in a.seeds.split(",") if s.strip()]
    else:
        seeds = [tuple(rng.randrange(100, 1000000) for _ in clusters) for _ in range(a.random_seeds)]
    if any(len(s) != len(clusters) for s in seeds):
        raise SystemExit(f"study: give {'A:B pairs' if a.across else 'one seed each'} to --seeds")
    log(f"seeds: {','.join(':'.join(map(str, s)) for s in seeds)} (replay: --seeds "
        f"{','.join(':'.join(map(str, s)) for s in seeds)})")
    with locks(clusters):
        for c in clusters:
            c.slurm.ensure_users()
    ctx = dict(clusters=clusters, hosts=[c.alias for c in clusters], n=a.tasks, task_s=a.task_s, cap=a.cap,
               settle=a.settle, max_submit=a.max_submit)
    run_id = f"{time.strftime('%H%M%S')}-{os.getpid()}"
    rows, t_all = [], time.time()
    for si, seed in enumerate(seeds):
        horizon = a.cap + a.settle + 30
        seqs = {c.alias: workload.generate(s, horizon, "mixed", None if c.alias == "rvtb" else c.shape)
                for c, s in zip(clusters, seed)}
        for c, s in zip(clusters, seed):
            with open(os.path.join(a.out, f"workload-{c.alias}-seed{s}.jsonl"), "w") as fh:
                fh.write(workload.dumps(seqs[c.alias]))
        row = dict(seed=":".join(map(str, seed)))
        for arm in ARMS:
            if arm not in arms:
                if arm in DEFAULT_ARMS:
                    row[arm] = dict(skip="not run (--arms)")
                continue
            t = time.time()
            res = run_arm(arm, ctx, seqs, f"s{si}", run_id)
            row[arm] = res
            log(f"seed {row['seed']} {arm}: " + (res["skip"] if res.get("skip") else
                f"makespan {res.get('makespan_s')} s, waits {res.get('wait_sum_s')} s, SU {res.get('su')}, peak "
                f"{res.get('peak_queued')} (limit {res.get('limit')}), {res.get('jobs')} jobs, dup {res.get('duplicates')}, "
                f"done {res.get('done')}/{a.tasks}" + (f", left {res['left']}" if res.get("left") else "")
                + (f" [{res.get('error') or ''}{'; '.join(res.get('errors') or [])[:200]}]" if res.get('error') or res.get('errors') else ""))
                + f" ({time.time() - t:.0f} s)")
        row["verdict"] = verdict(row, a.cap)
        row["floor"] = su_floor(row.get("array") or {}, a.tasks, a.task_s)
        log(f"seed {row['seed']}: {row['verdict']}, least SU of any pool at {TARGET_MAKESPAN}x the array's makespan: "
            f"{row['floor']}")
        rows.append(row)
        with open(os.path.join(a.out, "study.json"), "w") as fh:
            json.dump(dict(settings=vars(a), rows=rows, wall_s=round(time.time() - t_all, 1)), fh, indent=1, default=str)
    for c in clusters:  # the arms removed their marker directories; the run's own goes too
        c.env.ssh(f"rmdir ~/.ttg-study/{run_id} ~/.ttg-study 2>/dev/null", check=False)
    table = render(rows, a, time.time() - t_all)
    with open(os.path.join(a.out, "study.md"), "w") as fh:
        fh.write(table)
    print(table)


if __name__ == "__main__":
    main()
