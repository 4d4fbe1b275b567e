#!/usr/bin/env python3
"""rv's wait estimates against Slurm's own (issue #30 item 3; docs/benchmark-time-to-gpu.md,
"Estimates"): per seed, the seeded background load (workload.py) on a testbed cluster, then one rv
request of ONE strategy (`--max-strategies 1`, the GPU type pinned: one partition) into each
loaded partition at once, where it waits. The background rv records Slurm's start estimate one
bf_interval after the submission; the benchmark waits for each job to start, up to the cap, and
stops the ones still pending at the cap (censored there). rv's records then give, per partition,
rv's and Slurm's median |error| of the wait (`rv stats --json`, ttglib.estimate_errors).

Each cluster works through the seeds on its own thread, taking its testbed lock per seed (others
interleave). Run it through run.sh (`--estimates`): cluster 1's environment, root.
"""

import argparse
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import threading
import time

import across
import ttglib
import workload

log = ttglib.log
# Per cluster: PARTITION:TYPE:GPUS requests, one per loaded partition (the MIG partitions take one
# slice, which is never short: left out). Sized to wait: a100/h200/hopper are full with a queue,
# a6000/ada half busy with a whole-node blocker, v100 half busy (4 GPUs wait for its running jobs).
REQUESTS = {"rvtb": "gpu-a100:a100:1,gpu-h200:h200:1,gpu-a6000:a6000:4,gpu-v100:v100:4",
            "rvtb2": "hopper:h100:1,ada:l40s:2"}


def iso_epoch(s):
    return int(datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()) if s else None


def records(state_dir):
    rdir = os.path.join(state_dir, "requests")
    out = []
    for f in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
        if f.endswith(".json"):
            with open(os.path.join(rdir, f)) as fh:
                out.append(json.load(fh))
    return out


def submit(env, req, name, work_s, time_h):
    """One rv request of one strategy on `req`'s partition: its record's id, or None."""
    part, gtype, gpus = req
    args = [env.rv, "--ssh-config", env.ssh_config, "--host", env.host, "--json", "run", "--no-checkpoint",
            "--max-strategies", "1", "-t", gtype, "-g", str(gpus), "--time", f"{time_h}h", "--name", name, "--",
            f"sleep {work_s}"]
    p = subprocess.run(args, capture_output=True, text=True, env=env.rv_env, timeout=120)
    rec = next((r for r in records(env.rv_env["RV_STATE_DIR"]) if r.get("name") == name), None)
    if p.returncode != 0 or not rec:
        log(f"{env.host} {part}: rv exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return None
    return rec["id"]


def rv_cmd(env, *args):
    return subprocess.run([env.rv, "--ssh-config", env.ssh_config, "--host", env.host] + list(args),
                          capture_output=True, text=True, env=env.rv_env, timeout=120)


def one_seed(cluster, env, seed, a, reqs):
    """The load of `seed` on `cluster`, the requests, their starts or the cap: the per-job rows."""
    seq = workload.generate(seed, a.cap + a.settle + 30, shape=None if cluster.alias == "rvtb" else cluster.shape)
    with open(os.path.join(a.out, f"workload-seed{seed}-{cluster.alias}.jsonl"), "w") as fh:
        fh.write(workload.dumps(seq))
    rp = ttglib.Replay(seq, f"e{seed}", cluster.slurm)
    rp.start(a.settle)
    tag = f"{ttglib.PREFIX}-est-{seed}-"
    try:
        ids = {}
        for req in reqs:
            name = f"{tag}{req[0]}-{os.getpid()}"
            rid = submit(env, req, name, int(a.cap) + 60, a.time_h)
            if rid:
                ids[name] = rid
        t_end = time.time() + a.cap
        waiting = set(ids)
        while waiting and time.time() < t_end:
            ran = {r["name"] for r in cluster.slurm.squeue(ttglib.PREFIX, users=["rvtest"])
                   if r["state"] in ttglib.RAN and r["start"]}
            waiting -= ran
            time.sleep(1)
        rv_cmd(env, "ps", "-a")  # records the starts (Slurm's StartTime)
        for name in waiting:  # still pending at the cap: censored there
            rv_cmd(env, "stop", ids[name])
        rv_cmd(env, "ps", "-a")
    finally:
        rp.end()
    return [sample(seed, cluster.alias, rec, j) for rec in records(env.rv_env["RV_STATE_DIR"])
            if rec.get("name", "").startswith(tag) for j in rec.get("jobs", []) if j.get("submitted_at")]


def sample(seed, alias, rec, j):
    """One job's numbers for the report: rv's predicted wait, Slurm's estimate as a wait, the
    actual wait (to the start, or to the cancellation at the cap: censored)."""
    sub = iso_epoch(j["submitted_at"])
    start, cancel = iso_epoch(j.get("started_at")), iso_epoch(j.get("cancelled_pending_at"))
    est = j.get("slurm_estimate") or ""
    slurm = None
    if est[:1].isdigit() and rec.get("utc_offset_s") is not None:
        at = datetime.datetime.fromisoformat(est).replace(tzinfo=datetime.timezone.utc).timestamp()
        slurm = int(at - rec["utc_offset_s"]) - sub
    strat = next((s for s in (rec.get("plan") or {}).get("strategies", []) if s.get("id") == j.get("strategy_id")), {})
    # rv's estimate before its history corrected it (the reason says "... corrected by history: X s -> Y s").
    raw = next((int(m.group(1)) for m in (re.search(r"corrected by history: (\d+) s ->", x)
                                          for x in strat.get("reasons", [])) if m), j.get("predicted_wait_s"))
    return dict(seed=seed, cluster=alias, partition=j.get("partition"), job=j.get("job_id"), request=rec["id"],
                rv_s=j.get("predicted_wait_s"), rv_raw_s=raw, slurm_s=slurm, label=strat.get("label"),
                slurm_seen_after_s=(iso_epoch(j.get("slurm_estimate_at")) or sub) - sub if est else None,
                actual_s=(start or cancel or sub) - sub, censored=not start)


def cluster_thread(cluster, a, results, lock):
    """Every seed on one cluster, one rv state dir for them all (rv's history grows as a user's
    would; --history seeds it with earlier runs' records)."""
    reqs = [tuple(x.split(":")[:2]) + (int(x.split(":")[2]),) for x in a.requests[cluster.alias].split(",") if x]
    env = cluster.env
    rdir = os.path.join(env.rv_env["RV_STATE_DIR"], "requests")
    os.makedirs(rdir, exist_ok=True)
    for d in a.history.split(",") if a.history else []:
        src = os.path.join(d, cluster.alias, "state", "requests")
        for f in os.listdir(src) if os.path.isdir(src) else []:
            shutil.copy(os.path.join(src, f), rdir)
    cluster.slurm.ensure_users()
    for seed in a.seed_list:
        t0 = time.time()
        with open(cluster.lock, "a") as fh:
            if not (cluster.alias == "rvtb" and os.environ.get("RV_TESTBED_LOCKED") == "1"):  # a test holds it
                fcntl.flock(fh, fcntl.LOCK_EX)  # per seed: others' tests interleave between seeds
            t_locked = time.time()
            rows = one_seed(cluster, env, seed, a, reqs)
        with lock:
            results.extend(rows)
            with open(os.path.join(a.out, "samples.json"), "w") as fh:
                json.dump(dict(partial=True, seeds=a.seed_list, settings=vars(a), samples=results), fh, indent=1)
        waited = ", ".join(f"{r['partition']} {r['actual_s']} s{' (cap)' if r['censored'] else ''} rv {r['rv_s']} "
                           f"Slurm {r['slurm_s']}" for r in rows)
        log(f"{cluster.alias} seed {seed}: {waited} (lock wait {t_locked - t0:.0f} s, row {time.time() - t_locked:.0f} s)")


def run_stats(a, results, raw=False):
    """`rv stats` over this run's requests only (not the --history ones): ttglib.estimate_errors. With
    `raw`, over the same jobs with rv's estimate before its history corrected it (each record's
    predicted_wait_s replaced): what the plan said without the correction."""
    raw_of = {(r["request"], r["job"]): r.get("rv_raw_s", r["rv_s"]) for r in results}
    tmp = os.path.join(a.out, "stats-raw" if raw else "stats")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "requests"))
    for alias, rid in {(r["cluster"], r["request"]) for r in results}:
        with open(os.path.join(getattr(a, "out_records", a.out), alias, "state", "requests", f"{rid}.json")) as fh:
            rec = json.load(fh)
        for j in rec.get("jobs", []) if raw else []:
            j["predicted_wait_s"] = raw_of.get((rid, j.get("job_id")), j.get("predicted_wait_s"))
        with open(os.path.join(tmp, "requests", f"{rid}.json"), "w") as fh:
            json.dump(rec, fh)
    return ttglib.estimate_errors(a.rv, [tmp])


def render_samples(rows):
    lines = ["", "Every job (real s from submission; actual = start, or the cap when censored; Slurm = its first "
             "estimate, seen that many s after submission):", "",
             "| seed | cluster | partition | strategy | rv | rv before history | Slurm (seen after) | actual | censored |",
             "| --- " * 9 + "|"]
    for r in sorted(rows, key=lambda r: (r["cluster"], r["partition"] or "", r["seed"])):
        slurm = "-" if r["slurm_s"] is None else f"{r['slurm_s']} ({r['slurm_seen_after_s']})"
        raw = r.get("rv_raw_s", r["rv_s"])
        lines.append(f"| {r['seed']} | {r['cluster']} | {r['partition']} | {r['label']} | {r['rv_s']} | "
                     f"{'' if raw == r['rv_s'] else raw} | {slurm} | {r['actual_s']} | {'yes' if r['censored'] else ''} |")
    return lines


def main():
    ttglib.exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--random-seeds", type=int, default=0, help="draw this many seeds at random at run time (printed)")
    ap.add_argument("--seeds", default="", help="exactly these seeds, comma separated (a replay)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cap", type=float, default=180, help="real s a request may wait; still pending = censored")
    ap.add_argument("--settle", type=float, default=5, help="real s between the load and the requests")
    ap.add_argument("--time-h", type=int, default=2, help="each request's --time in cluster hours (real minutes)")
    ap.add_argument("--clusters", default="rvtb", help="rvtb, rvtb2 or rvtb,rvtb2 (both at once, one thread each)")
    ap.add_argument("--history", default="", help="earlier runs' output dirs, comma separated: their rv records "
                    "seed rv's history (its per-partition correction; they are not counted)")
    ap.add_argument("--requests1", default=REQUESTS["rvtb"], help="cluster 1's PARTITION:TYPE:GPUS,...")
    ap.add_argument("--requests2", default=REQUESTS["rvtb2"], help="cluster 2's PARTITION:TYPE:GPUS,...")
    ap.add_argument("--from-dir", help="re-summarise an earlier run's directory from its rv records (a run cut "
                    "short included; no cluster): writes estimates.md and samples.json in --out")
    a = ap.parse_args()
    a.requests = {"rvtb": a.requests1, "rvtb2": a.requests2}
    os.makedirs(a.out, exist_ok=True)
    if a.from_dir:
        return resummarise(a)
    a.seed_list = ttglib.draw_seeds(a)
    log(f"seeds: {','.join(map(str, a.seed_list))} (replay: --seeds {','.join(map(str, a.seed_list))})")
    clusters = [across.Cluster(alias, env_file, lock, a.rv, os.path.join(a.out, alias))
                for alias, env_file, lock in across.CLUSTERS if alias in a.clusters.split(",")]
    results, lock = [], threading.Lock()
    t_all = time.time()
    threads = [threading.Thread(target=cluster_thread, args=(c, a, results, lock)) for c in clusters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    write_report(a, results, time.time() - t_all)


def write_report(a, results, wall):
    est = run_stats(a, results)
    est_raw = run_stats(a, results, raw=True)
    with open(os.path.join(a.out, "samples.json"), "w") as fh:
        json.dump(dict(seeds=a.seed_list, settings=vars(a), wall_s=round(wall), estimates=est,
                       estimates_before_history=est_raw, samples=results), fh, indent=1)
    done = {c: sorted({r["seed"] for r in results if r["cluster"] == c}) for c in a.clusters.split(",")}
    lines = [f"seeds {','.join(map(str, a.seed_list))} on {a.clusters}, cap {a.cap:g} s, wall time {wall:.0f} s; "
             + "; ".join(f"{c}: {len(s)} seeds done" for c, s in done.items())]
    lines += ttglib.render_estimates(est)
    if any(r.get("rv_raw_s") != r["rv_s"] for r in results):  # the history corrected some estimate
        lines += ["", "The same jobs with rv's estimate before its history corrected it:"] + ttglib.render_estimates(est_raw)[3:]
    lines += render_samples(results)
    table = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "estimates.md"), "w") as fh:
        fh.write(table)
    print(table)


def resummarise(a):
    """The report of the run in a.from_dir from its rv records: every ttg-est-SEED- request of each
    cluster's state dir (not the --history ones, which the run copied with their names)."""
    with open(os.path.join(a.from_dir, "samples.json")) as fh:
        old = json.load(fh)
    a.seed_list = old["seeds"]
    a.cap = (old.get("settings") or {}).get("cap", a.cap)
    results, clusters = [], []
    for alias in ("rvtb", "rvtb2"):
        sdir = os.path.join(a.from_dir, alias, "state")
        if not os.path.isdir(sdir):
            continue
        clusters.append(alias)
        for rec in records(sdir):
            m = re.match(rf"^{ttglib.PREFIX}-est-(\d+)-", rec.get("name", ""))
            if m and int(m.group(1)) in a.seed_list and any(j.get("started_at") or j.get("cancelled_pending_at")
                                                            for j in rec.get("jobs", [])):
                results += [sample(int(m.group(1)), alias, rec, j) for j in rec.get("jobs", []) if j.get("submitted_at")]
    a.clusters = ",".join(clusters)
    a.out_records = a.from_dir
    write_report(a, results, old.get("wall_s", 0))


if __name__ == "__main__":
    main()
