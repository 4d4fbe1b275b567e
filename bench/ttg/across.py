#!/usr/bin/env python3
"""Time to GPU across two clusters (docs/benchmark-time-to-gpu.md, "Across clusters"; #29): one
request raced by rv across the testbed's two clusters (rvtb, Slurm 22.05, and rvtb2, Slurm 24.11),
each loaded by its own seed, against rv on each cluster alone, serial failover from the first
cluster to the second, and each cluster's hindsight bound. Run it through across.sh (both testbed
locks, cluster 1's environment).

Targets per run (seed pair x request): rv across within 1.2x of the better cluster's hindsight
bound (or within the resolution), and at most 0.5x of the worse cluster alone where the two
clusters' waits differ.
"""

import argparse
import contextlib
import fcntl
import json
import os
import random
import statistics
import subprocess
import threading
import time

import ttglib
import workload

CLUSTERS = [("rvtb", "/tmp/rv-testbed/env", "/tmp/rv-testbed.lock"),
            ("rvtb2", "/tmp/rv-testbed2/env", "/tmp/rv-testbed2.lock")]
log = ttglib.log


class Cluster:
    def __init__(self, alias, env_file, lock, rv, work):
        self.alias = alias
        self.lock = lock
        self.slurm = ttglib.LOCAL if alias == "rvtb" else ttglib.Slurm.of_env_file(env_file)
        self.env = ttglib.Env(rv, work, alias)
        self.shape = workload.SHAPES[alias]


@contextlib.contextmanager
def testbed_locks(clusters):
    """Both clusters' testbed locks, per row: other users of the testbed interleave between rows."""
    fhs = []
    try:
        for c in clusters:
            fh = open(c.lock, "a")
            fcntl.flock(fh, fcntl.LOCK_EX)
            fhs.append(fh)
        yield
    finally:
        for fh in fhs:
            fh.close()


@contextlib.contextmanager
def loaded(clusters, seqs, tag, settle_s):
    """The seeded background load replayed on `clusters` at once (one thread each), then the
    settle time; ends every replay (purge) afterwards."""
    reps = [ttglib.Replay(seqs[c.alias], tag, c.slurm) for c in clusters]
    threads = [threading.Thread(target=r.start, args=(0,)) for r in reps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(settle_s)  # one backfill cycle on each cluster plans its queue
    try:
        yield
    finally:
        for r in reps:
            r.end()


def first_start_any(clusters, name, t_limit):
    """The first started job named `name` on any of `clusters`: (cluster, squeue row) or None."""
    while time.time() < t_limit:
        for c in clusters:
            ran = [r for r in c.slurm.squeue(name) if r["state"] in ttglib.RAN and r["start"]]
            if ran:
                return c, min(ran, key=lambda r: (r["start"], r["id"]))
        time.sleep(0.25)
    return None


def member_records(state_dir, name):
    out = []
    rdir = os.path.join(state_dir, "requests")
    for f in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
        if f.endswith(".json"):
            with open(os.path.join(rdir, f)) as fh:
                r = json.load(fh)
            if r.get("name") == name:
                out.append(r)
    return out


def run_across(clusters, work, rv, sc, name, cap_s):
    """rv racing the request across every cluster: the time to the chosen member's start."""
    env = ttglib.Env(rv, work, clusters[0].alias)
    hosts = [a for c in clusters for a in ("--host", c.alias)]
    args = [rv, "--ssh-config", env.ssh_config] + hosts + [
        "run", "--checkpoint", "-g", str(sc["gpus"]), "--time", f"{sc['work_real_s']}s", "--name", name, "--",
        f"date +%s.%N >~/.{name}.go; sleep {sc['work_real_s']}"]
    t_start = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env.rv_env, timeout=180)
    res = dict(t_start=t_start, submit_s=round(time.time() - t_start, 2), start=None)
    if p.returncode != 0:
        res["error"] = f"rv exit {p.returncode}: {p.stderr.strip()[-400:]}"
        return res
    first = first_start_any(clusters, name, t_start + cap_s)
    state_dir = env.rv_env["RV_STATE_DIR"]
    chosen = None
    deadline = time.time() + 15  # the background settler chooses within its poll interval
    while first and time.time() < deadline and not chosen:
        members = member_records(state_dir, name)
        cids = {(r.get("race") or {}).get("chosen") for r in members} - {None, ""}
        chosen = next((m for m in members if m.get("id") in cids), None)
        if not chosen:
            time.sleep(0.5)
    res["members"] = len(member_records(state_dir, name))
    if not first:
        return res
    if not chosen:
        res["error"] = "a job started but no member was chosen within 15 s"
        return res
    where = next(c for c in clusters if c.alias == (chosen.get("destination") or clusters[0].alias))
    ran = [r for r in where.slurm.squeue(name) if r["state"] in ttglib.RAN and r["start"]]
    won = min(ran, key=lambda r: (r["start"], r["id"])) if ran else first[1]
    res.update(start=won["start"], job=won["id"], partition=won["partition"], cluster=where.alias,
               first_cluster=first[0].alias, ttg_s=round(won["start"] - t_start, 1))
    # When the command itself began: the gate opened (`go`), after the settler's choice.
    deadline = time.time() + 10
    while time.time() < deadline and "go_s" not in res:
        r = where.env.ssh(f"cat ~/.{name}.go 2>/dev/null && rm -f ~/.{name}.go", check=False).stdout.strip()
        if r:
            res["go_s"] = round(float(r) - t_start, 1)
        else:
            time.sleep(0.5)
    # Losers on the other cluster: cancelled by the settler (pending ones may take a poll or two).
    time.sleep(3)
    res["left_elsewhere"] = sum(1 for c in clusters if c is not where for r in c.slurm.squeue(name)
                                if r["state"] in ttglib.ALIVE)
    return res


def run_alone(c, sc, name, cap_s):
    res = ttglib.run_rv(c.env, sc, name, cap_s, slurm=c.slurm)
    res["cluster"] = c.alias
    if res.get("start"):
        res["ttg_s"] = round(res["start"] - res["t_start"], 1)
    return res


def run_failover(clusters, sc, name, cap_s, wait_s):
    """Serial failover, as comparable tools move between infrastructures: rv on the first cluster;
    when nothing started within `wait_s`, stop it there and ask the next cluster."""
    t0 = time.time()
    tries = []
    for i, c in enumerate(clusters):
        last = i == len(clusters) - 1
        left = cap_s - (time.time() - t0)
        res = ttglib.run_rv(c.env, sc, f"{name}-{i}", left if last else min(wait_s, left), slurm=c.slurm)
        tries.append(c.alias)
        if res.get("start"):
            return dict(t_start=t0, start=res["start"], ttg_s=round(res["start"] - t0, 1), cluster=c.alias,
                        partition=res.get("partition"), tries=tries)
        subprocess.run([c.env.rv, "--ssh-config", c.env.ssh_config, "--host", c.alias, "stop", f"{name}-{i}"],
                       capture_output=True, text=True, env=c.env.rv_env, timeout=120)
        if time.time() - t0 >= cap_s:
            break
    return dict(t_start=t0, start=None, tries=tries)


def run_hindsight(c, seqs, tag, a, sc, name, plan):
    """The cluster's hindsight bound: each group of single strategies from rv's plan there
    (ttglib.hindsight_groups) on a replay of its own; the earliest start. A later group need not wait
    past the best so far (plus the resolution)."""
    best = {}
    for gi, group in enumerate(ttglib.hindsight_groups(plan, a.hindsight_groups, sc["work_real_s"])):
        gcap = a.cap if best.get("ttg_s") is None else min(a.cap, best["ttg_s"] + a.resolution + 1)
        with loaded([c], seqs, tag, a.settle):
            res = ttglib.run_hindsight_group(c.env, sc, f"{name}{gi}", gcap, group, slurm=c.slurm)
        if res.get("start"):
            res["ttg_s"] = round(res["start"] - res["t_start"], 1)
            if best.get("ttg_s") is None or res["ttg_s"] < best["ttg_s"]:
                best = res
    return best


def verdict(row, cap, resolution):
    """Judged on the chosen member's allocation, as every other contender (its StartTime); when the
    command began (after the in-cluster tie settle and the gate) is reported beside it."""
    def at(res):  # StartTime has whole seconds: a start in the first second can read -0.x
        return None if res.get("ttg_s") is None else max(0.0, res["ttg_s"])

    t = at(row["across"])
    h = [at(row[f"hindsight-{a}"]) for a in ("rvtb", "rvtb2")]
    alone = [at(row[f"alone-{a}"]) for a in ("rvtb", "rvtb2")]
    out = dict(across=t, across_command=row["across"].get("go_s"), hindsight=h, alone=alone, failover=at(row["failover"]),
               targets={})
    hb = min([x for x in h if x is not None], default=None)
    tg = out["targets"]
    tg["vs_better_hindsight"], out["ratio_better_hindsight"] = ttglib.vs_bound(t, hb, resolution)
    worse = [cap if x is None else x for x in alone]
    if abs(worse[0] - worse[1]) <= resolution:
        tg["vs_worse_alone"] = "n/a (same wait)"
    elif t is None:
        tg["vs_worse_alone"] = "MISS"
    elif None in alone:  # the worse one never started within the cap: t/cap is an upper bound
        out["ratio_worse_alone"] = f"<{t / cap:.2f}"
        tg["vs_worse_alone"] = "PASS" if t <= 0.5 * cap else "n/a (censored)"
    else:
        w = max(worse)
        out["ratio_worse_alone"] = f"{t / w:.2f}"
        tg["vs_worse_alone"] = "PASS" if t <= 0.5 * w else "MISS"
    fo = out["failover"]
    if t is not None:
        out["ratio_failover"] = f"<{t / cap:.2f}" if fo is None else (round(t / fo, 2) if fo > 0 else "-")
    out["miss"] = any(v == "MISS" for v in tg.values())
    return out


def fmt(v, cap):
    return f">{cap:g}" if v is None else f"{v:g}"


def render(rows, verdicts, cap, wall):
    lines = ["time to first GPU in real seconds (1 s = 1 cluster-minute); >cap = not started within the cap", "",
             "| seeds (rvtb, rvtb2) | request | rv across: allocation (command) | chosen | rv alone rvtb | rv alone rvtb2 | serial failover | "
             "hindsight rvtb | hindsight rvtb2 | across/better hindsight | across/worse alone | across/failover | targets |",
             "| --- " * 13 + "|"]
    for r, v in zip(rows, verdicts):
        a = r["across"]
        lines.append(
            f"| {r['seeds'][0]}, {r['seeds'][1]} | {r['scenario']} | {fmt(v['across'], cap)} ({fmt(v['across_command'], cap)}) | "
            f"{a.get('cluster', '-')}:{a.get('partition', '-')} | {fmt(v['alone'][0], cap)} | {fmt(v['alone'][1], cap)} | "
            f"{fmt(v['failover'], cap)} | {fmt(v['hindsight'][0], cap)} | {fmt(v['hindsight'][1], cap)} | "
            + " | ".join("-" if v.get(k) is None else str(v[k])
                         for k in ("ratio_better_hindsight", "ratio_worse_alone", "ratio_failover")) + " | "
            + " ".join(f"{k}:{x}" for k, x in v["targets"].items()) + " |")
    misses = [(r, v) for r, v in zip(rows, verdicts) if v["miss"]]
    subs = [r["across"].get("submit_s") for r in rows if r["across"].get("submit_s") is not None]
    left = sum(r["across"].get("left_elsewhere", 0) for r in rows)
    lag = [round(r["across"]["go_s"] - r["across"]["ttg_s"], 1) for r in rows
           if r["across"].get("go_s") is not None and r["across"].get("ttg_s") is not None]
    lines += ["", f"- runs {len(rows)}, misses {len(misses)}"
              + (": " + ", ".join(f"seeds {r['seeds']} {r['scenario']}" for r, _ in misses) if misses else ""),
              f"- rv across plan+submit (both clusters): median {statistics.median(subs) if subs else '-'} s, all {subs}",
              f"- jobs of rv across still pending or running on the losing cluster 3 s after the choice: {left}",
              f"- rv across, the command began after the allocation by (s; the in-cluster tie settle of 2 s, the "
              f"settle step and the gate): median {statistics.median(lag) if lag else '-'}, all {lag}",
              f"\nwall time {wall:.0f} s"]
    return "\n".join(lines) + "\n"


def main():
    ttglib.exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--random-seeds", type=int, default=3, help="seed pairs drawn at run time (printed)")
    ap.add_argument("--seeds", default="", help="exact pairs to replay: A:B,C:D (rvtb's seed : rvtb2's)")
    ap.add_argument("--scenarios", default="1x3h,4x3h", help="GPUSxWORK, comma separated (mixed load)")
    ap.add_argument("--cap", type=float, default=30, help="real seconds a contender may wait")
    ap.add_argument("--resolution", type=float, default=2.0)
    ap.add_argument("--settle", type=float, default=2.5)
    ap.add_argument("--failover-wait", type=float, default=10.0,
                    help="real seconds serial failover waits on the first cluster (10 cluster-minutes)")
    ap.add_argument("--hindsight-groups", type=int, default=1)
    ap.add_argument("--from-json", help="re-summarise the rows of earlier across.json files, comma separated (no cluster)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.from_json:
        rows = []
        for path in a.from_json.split(","):
            with open(path) as fh:
                rows += json.load(fh)["rows"]
        verdicts = [verdict(r, a.cap, a.resolution) for r in rows]
        table = render(rows, verdicts, a.cap, 0)
        with open(os.path.join(a.out, "across.md"), "w") as fh:
            fh.write(table)
        print(table)
        return
    clusters = [Cluster(alias, f, lock, a.rv, os.path.join(a.out, alias)) for alias, f, lock in CLUSTERS]
    if a.seeds:
        pairs = [tuple(int(x) for x in p.split(":")) for p in a.seeds.split(",")]
    else:
        rng = random.SystemRandom()
        pairs = [(rng.randrange(100, 1000000), rng.randrange(100, 1000000)) for _ in range(a.random_seeds)]
    log(f"seed pairs: {','.join(f'{x}:{y}' for x, y in pairs)} (replay one: --seeds A:B)")
    with testbed_locks(clusters):
        for c in clusters:
            c.slurm.ensure_users()
    rows, verdicts, t_all = [], [], time.time()
    for pi, (s1, s2) in enumerate(pairs):
        for si, key in enumerate(a.scenarios.split(",")):
            g, w, _ = ttglib.parse_scenario(key)
            work = {"30m": 30, "3h": 180, "24h": 1440}[w]
            sc = dict(key=key, gpus=int(g), work=w, work_real_s=work, work_limit_min=max(1, work // 60))
            seqs = {c.alias: workload.generate(s, a.cap + a.settle + 30, "mixed", c.shape)
                    for c, s in zip(clusters, (s1, s2))}
            row = dict(seeds=[s1, s2], scenario=key)
            tag = f"x{pi}{si}"
            base = f"{ttglib.PREFIX}-{tag}-{os.getpid()}"
            with testbed_locks(clusters):
                with loaded(clusters, seqs, tag, a.settle):
                    row["across"] = run_across(clusters, os.path.join(a.out, "across"), a.rv, sc, f"{base}-ac", a.cap)
                for c in clusters:
                    with loaded([c], seqs, tag, a.settle):
                        row[f"alone-{c.alias}"] = run_alone(c, sc, f"{base}-{c.alias[-1]}al", a.cap)
                with loaded(clusters, seqs, tag, a.settle):
                    row["failover"] = run_failover(clusters, sc, f"{base}-fo", a.cap, a.failover_wait)
                for c in clusters:
                    plan = row[f"alone-{c.alias}"].get("plan") or {}
                    row[f"hindsight-{c.alias}"] = run_hindsight(c, seqs, tag, a, sc, f"{base}-{c.alias[-1]}h", plan)
            for k, res in row.items():
                if isinstance(res, dict):
                    log(f"{key} seeds {s1}:{s2} {k}: ttg {res.get('ttg_s')} s" + (f", command {res['go_s']} s" if "go_s" in res else "")
                        + f" on {res.get('cluster', k.rsplit('-', 1)[-1])}:{res.get('partition')}"
                        + (f" ({res['error']})" if res.get("error") else ""))
            v = verdict(row, a.cap, a.resolution)
            log(f"{key} seeds {s1}:{s2}: across {v['across']} on {row['across'].get('cluster')} "
                f"(alone {v['alone']}, failover {v['failover']}, hindsight {v['hindsight']}) {v['targets']}")
            rows.append(row)
            verdicts.append(v)
            with open(os.path.join(a.out, "across.json"), "w") as fh:
                json.dump(dict(settings=vars(a), rows=rows, verdicts=verdicts), fh, indent=1, default=str)
    table = render(rows, verdicts, a.cap, time.time() - t_all)
    with open(os.path.join(a.out, "across.md"), "w") as fh:
        fh.write(table)
    print(table)


if __name__ == "__main__":
    main()
