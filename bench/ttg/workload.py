#!/usr/bin/env python3
"""Seeded background load for the time-to-GPU benchmark (docs/benchmark-time-to-gpu.md).

The cluster's time is compressed: SCALE cluster seconds pass per real second (60: one cluster
minute = one real second, one cluster hour = one real minute = one Slurm `--time` minute).
Everything below is in cluster units unless a name ends in `_real_s`.

`generate(seed, horizon_real_s)` returns the submission sequence of one replay: the jobs that
already run at t0 (pinned to the nodes they were packed on, so every replay of a seed starts from
the same allocation), the queue at t0, and the arrivals until the horizon. Same seed, same
sequence (random.Random(seed), nothing else); `python3 workload.py --seed N` prints it as JSON
lines, which is what the benchmark writes next to its results and what its tests compare.
"""

import argparse
import json
import random
import sys

SCALE = 60  # cluster seconds per real second

# Partitions of the testbed (docs/testbed.md): nodes, GPUs per node, GRES type, CPUs and MiB per
# node, and the load model of each: `busy` = fraction of GPUs held at t0, `queue` = pending jobs at
# t0, `blockers` = high-priority pending jobs sized to the whole node (they hold a reservation,
# which turns the free GPUs in front of it into a backfill window), `rate` = arrivals per cluster
# hour.
PARTITIONS = {
    "gpu-a100": dict(nodes=["a100-1", "a100-2"], gpn=8, gtype="a100", cpus=64, mem=512000,
                     busy=1.0, queue=10, blockers=0, rate=3.0, multi=[(16, 2), (8, 2)]),
    "gpu-h200": dict(nodes=["h200-1"], gpn=4, gtype="h200", cpus=96, mem=1024000,
                     busy=1.0, queue=5, blockers=0, rate=1.5),
    "gpu-a6000": dict(nodes=["a6000-1"], gpn=8, gtype="a6000", cpus=32, mem=256000,
                      busy=0.5, queue=0, blockers=1, rate=1.0),
    "gpu-v100": dict(nodes=["v100-1"], gpn=4, gtype="v100", cpus=32, mem=192000,
                     busy=0.5, queue=0, blockers=0, rate=0.7),
    "gpu-mig": dict(nodes=["mig-1"], gpn=7, gtype="a100_1g.10gb", cpus=16, mem=128000,
                    busy=0.4, queue=0, blockers=0, rate=0.7, mig=True),
}
# The second testbed cluster (Slurm 24.11, testbed/lib2.sh): its own partitions and GPU types, the
# same load model. `multi` = the multi-node sizes (the larger drawn 30 % of the time), `mig` = one
# slice per job.
PARTITIONS2 = {
    "hopper": dict(nodes=["h100-1", "h100-2"], gpn=4, gtype="h100", cpus=48, mem=768000,
                   busy=1.0, queue=6, blockers=0, rate=2.0, multi=[(8, 2), (4, 2)]),
    "ada": dict(nodes=["l40s-1"], gpn=2, gtype="l40s", cpus=32, mem=256000,
                busy=0.5, queue=0, blockers=1, rate=1.0),
    "mig": dict(nodes=["mig-1"], gpn=2, gtype="h100_3g.40gb", cpus=16, mem=128000,
                busy=0.5, queue=0, blockers=0, rate=0.7, mig=True),
}
# The shape of each testbed cluster by its login node's alias (bench/ttg/across.py).
SHAPES = {"rvtb": PARTITIONS, "rvtb2": PARTITIONS2}
# Load profiles: "mixed" (above) and "window", which isolates the backfill window in front of a
# reservation: every other GPU busy, no queue and no arrivals anywhere, gpu-a6000 half busy with
# jobs that hold their GPUs for 6 cluster hours or more (every running job runs into its limit),
# and the high-priority whole-node blocker
# reserving it for when they end. The only GPUs a new job can get within the cap are the ones in
# front of that reservation.
PROFILES = {
    "mixed": PARTITIONS,
    "window": {p: dict(v, busy=(0.5 if p == "gpu-a6000" else 1.0), queue=0, rate=0.0,
                       blockers=(1 if p == "gpu-a6000" else 0))
               for p, v in PARTITIONS.items()},
}
WINDOW_MIN_LEFT_H = 6
USERS = [f"rvbg{i:02d}" for i in range(1, 9)]  # background users (ttglib.Slurm.ensure_users creates them)
SIZES = [(1, 0.40), (2, 0.25), (4, 0.20), (8, 0.15)]  # GPUs per job (capped by the node)
MULTI_NODE = 0.25  # a100 jobs of 8 or 16 GPUs: share spread over both nodes
LIMITS_H = [(1, 0.10), (2, 0.15), (4, 0.20), (8, 0.15), (12, 0.10), (24, 0.20), (48, 0.10)]
# Actual run time / limit: most jobs end well before their limit, some run into it.
ENDS = [((0.05, 0.5), 0.55), ((0.5, 0.9), 0.30), ((0.9, 1.0), 0.10), ((1.0, 1.0), 0.05)]
# Priority tiers as nice values (priority/basic: priority = FIFO order - nice): a "high" QOS that
# jumps the queue (and closes backfill windows when it arrives), normal, and a scavenger tier.
# priority/basic starts at 0xffff0000 and counts down: a nice below -65535 wraps the uint32 around
# to a tiny priority (seen: nice -100000 gave 34463), so the high tier stays at -50000.
TIERS = [("high", -50000, 0.15), ("normal", 0, 0.65), ("low", 50000, 0.20)]


def pick(rng, table):
    """Weighted choice from [(value, weight)...] with one rng draw."""
    x = rng.random() * sum(w for _, w in table)
    for v, w in table:
        x -= w
        if x < 0:
            return v
    return table[-1][0]


def tier(rng):
    x = rng.random()
    for name, nice, w in TIERS:
        x -= w
        if x < 0:
            return name, nice
    return TIERS[-1][0], TIERS[-1][1]


def runtime_h(rng, limit_h):
    lo, hi = pick(rng, ENDS)
    return limit_h * (lo + (hi - lo) * rng.random())


def job(rng, p, part, gpus, nodes, limit_h, run_h, nice, tier_name, t_real_s, kind, pin=None):
    gpn = gpus // nodes
    # Half the node's CPU and memory share per GPU: GPUs, never CPUs or memory, are the bottleneck.
    cpus = max(1, p["cpus"] * gpn // p["gpn"] // 2)
    mem = max(1000, p["mem"] * gpn // p["gpn"] // 2)
    return {
        "t_real_s": round(t_real_s, 2), "kind": kind, "user": rng.choice(USERS), "partition": part,
        "nodes": nodes, "gpus_per_node": gpn, "gres": f"gpu:{p['gtype']}:{gpn}", "cpus": cpus,
        "mem_mb": mem, "limit_h": limit_h, "run_real_s": round(run_h * 3600 / SCALE, 1),
        "nice": nice, "tier": tier_name, "nodelist": pin,
    }


def draw_size(rng, p, room=None):
    if p.get("mig"):
        return 1, 1
    if p.get("multi") and rng.random() < MULTI_NODE:
        return p["multi"][0] if rng.random() < 0.3 else p["multi"][1]
    sizes = [(g, w) for g, w in SIZES if g <= p["gpn"] and (room is None or g <= room)]
    return pick(rng, sizes), 1


def generate(seed, horizon_real_s, profile="mixed", shape=None):
    """`shape`: another cluster's partitions (PARTITIONS2), loaded as the mixed profile."""
    rng = random.Random(seed)
    parts = shape or PROFILES[profile]
    out = []
    # 1. What already runs at t0: each node filled to its partition's `busy`, with the remaining
    # limit and run time of jobs that started at some earlier time.
    for part, p in parts.items():
        free = {n: p["gpn"] for n in p["nodes"]}
        target = round(p["busy"] * p["gpn"] * len(p["nodes"]))
        used = 0
        guard = 0
        while used < target and guard < 200:
            guard += 1
            gpus, nodes = draw_size(rng, p)
            gpn = gpus // nodes
            fits = [n for n in p["nodes"] if free[n] >= gpn]
            if len(fits) < nodes or used + gpus > target + (p["gpn"] if p["busy"] >= 1 else 0):
                continue
            pin = fits[:nodes] if nodes > 1 else [max(fits, key=lambda n: (-free[n], n))]
            if nodes == 1:  # best fit: the fullest node that still fits, so big holes stay
                pin = [min(fits, key=lambda n: (free[n], n))]
            for n in pin:
                free[n] -= gpn
            used += gpus
            limit_h = pick(rng, LIMITS_H)
            left_h = max(1, round(limit_h * (0.2 + 0.8 * rng.random())))  # elapsed part gone
            if profile == "window":
                left_h = max(WINDOW_MIN_LEFT_H, left_h)
            name, nice = tier(rng)
            run_h = runtime_h(rng, left_h)
            if profile == "window":  # nothing ends early: no other GPU frees within the cap
                run_h = left_h
            out.append(job(rng, p, part, gpus, nodes, left_h, run_h, nice, name, 0.0, "running", ",".join(pin)))
    # 2. The queue at t0, in submission order: normal jobs, then the blockers (high priority,
    # the whole node: they reserve it for when the running jobs' limits end).
    for part, p in parts.items():
        for _ in range(p["queue"]):
            gpus, nodes = draw_size(rng, p)
            limit_h = pick(rng, LIMITS_H)
            name, nice = tier(rng)
            out.append(job(rng, p, part, gpus, nodes, limit_h, runtime_h(rng, limit_h), nice, name, 0.0, "queued"))
        for _ in range(p["blockers"]):
            limit_h = pick(rng, LIMITS_H)
            out.append(job(rng, p, part, p["gpn"], 1, limit_h, runtime_h(rng, limit_h), TIERS[0][1], "high", 0.0,
                           "blocker"))
    # 3. Arrivals: Poisson per partition until the horizon, some in bursts of 2-3 (a user's sweep).
    arrivals = []
    for part, p in parts.items():
        if p["rate"] <= 0:
            continue
        t = 0.0
        rate_real = p["rate"] / 3600 * SCALE  # per real second
        while True:
            t += rng.expovariate(rate_real)
            if t >= horizon_real_s:
                break
            burst = 1 if rng.random() < 0.7 else rng.choice([2, 3])
            gpus, nodes = draw_size(rng, p)
            limit_h = pick(rng, LIMITS_H)
            name, nice = tier(rng)
            for _ in range(burst):
                arrivals.append(job(rng, p, part, gpus, nodes, limit_h, runtime_h(rng, limit_h), nice, name, t,
                                    "arrival"))
    arrivals.sort(key=lambda j: (j["t_real_s"], j["partition"]))
    out.extend(arrivals)
    for i, j in enumerate(out):
        j["seq"] = i
    return out


def dumps(seq):
    return "".join(json.dumps(j, sort_keys=True) + "\n" for j in seq)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--horizon", type=float, default=150.0, help="real seconds of arrivals after t0")
    ap.add_argument("--profile", default="mixed", choices=sorted(PROFILES))
    ap.add_argument("--cluster", default="rvtb", choices=sorted(SHAPES),
                    help="the testbed cluster whose partitions are loaded (rvtb2: the 24.11 cluster, mixed load)")
    a = ap.parse_args()
    shape = SHAPES[a.cluster] if a.cluster != "rvtb" else None
    sys.stdout.write(dumps(generate(a.seed, a.horizon, a.profile, shape)))


if __name__ == "__main__":
    main()
