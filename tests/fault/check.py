#!/usr/bin/env python3
"""The invariants of one fault-injection run (tests/fault/campaign.sh), checked after `rv ps`.

check.py after STATE_DIR RUN_NAME SQUEUE_BEFORE SQUEUE_AFTER HOME
    After the fault and one `rv ps` (SQUEUE_* = `squeue -u rvtest -h -o '%i|%j|%T|%k'` taken just
    before and just after that `rv ps`). Prints one line per violation, `KIND: detail`, where KIND
    is orphan, unreadable, inconsistent or secret; exit 0 either way.
check.py live STATE_DIR RUN_NAME
    Prints the ids of this run's requests that are not in a final state (for the cleanup's rv stop).
check.py final STATE_DIR RUN_NAME SQUEUE HOME
    After the cleanup (rv stop of every live request, then rv ps): nothing of the run is pending or
    running, every secrets file of the run is gone.

HOME is the login node's home of the user as a path here; on the testbed's cluster 2 the login
node runs in a root (TB_ROOT in the environment), under which the records' absolute remote paths
are read too.
"""
import glob
import json
import os
import sys

FINAL = {"done", "failed", "cancelled"}
LIVE = {"submitting", "submitted", "won"}
JOB_TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                "DEADLINE", "OUT_OF_MEMORY", "REFUSED", "SPECIAL_EXIT", "REVOKED"}
QUEUED = {"PENDING", "RUNNING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED",
          "RESV_DEL_HOLD", "SIGNALING", "STAGE_OUT", "RESIZING"}


def load_records(state_dir):
    """{id: record} of every readable record, and the list of unreadable ones."""
    records, bad = {}, []
    for path in sorted(glob.glob(os.path.join(state_dir, "requests", "*.json"))):
        name = os.path.basename(path)
        try:
            with open(path, "rb") as f:
                rec = json.loads(f.read())
        except (OSError, ValueError) as e:
            bad.append(f"{name}: {e}")
            continue
        why = shape_error(rec)
        if why:
            bad.append(f"{name}: {why}")
            continue
        records[rec["id"]] = rec
    return records, bad


def shape_error(rec):
    if not isinstance(rec, dict):
        return "not an object"
    for key in ("id", "name", "state", "remote_root", "secrets_file"):
        if not isinstance(rec.get(key), str):
            return f"'{key}' is not a string"
    if rec["state"] not in FINAL | LIVE:
        return f"unknown state '{rec['state']}'"
    if not isinstance(rec.get("jobs"), list) or not all(isinstance(j, dict) for j in rec["jobs"]):
        return "'jobs' is not a list of objects"
    for j in rec["jobs"]:
        if not isinstance(j.get("job_id"), str) or not isinstance(j.get("state"), str):
            return "a job without a string job_id/state"
    return ""


def read_squeue(path):
    """{job id: (name, state, comment)} of the jobs still queued (pending, running...)."""
    jobs = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("|", 3)
            if len(parts) == 4 and parts[2] in QUEUED:
                jobs[parts[0]] = (parts[1], parts[2], parts[3])
    return jobs


def remote_path(path, home):
    if path.startswith("~/"):
        return home + path[1:]
    return os.environ.get("TB_ROOT", "") + path if path.startswith("/") else path


def secrets_files(rec, home):
    """Every path where this request's secrets file may be: the recorded one and the standard one."""
    paths = set()
    if rec["secrets_file"]:
        paths.add(remote_path(rec["secrets_file"], home))
    if rec["remote_root"]:
        paths.add(os.path.join(remote_path(rec["remote_root"], home), "requests", rec["id"], "env"))
    return paths


def run_records(records, run_name):
    return {i: r for i, r in records.items() if r["name"] == run_name}


def ours(job, run_name, records):
    """The request id a queued job belongs to ('' for none) if it is this run's, else None."""
    name, _state, comment = job
    rid = comment[3:] if comment.startswith("rv:") else ""
    if name == run_name or (rid and rid in records and records[rid]["name"] == run_name):
        return rid
    return None


def after(state_dir, run_name, before_path, after_path, home):
    records, bad = load_records(state_dir)
    out = [f"unreadable: {b}" for b in bad]
    before, now = read_squeue(before_path), read_squeue(after_path)
    mine = run_records(records, run_name)
    for job_id, job in sorted(now.items()):
        rid = ours(job, run_name, records)
        if rid is None:
            continue
        rec = records.get(rid)
        if rec is None:
            out.append(f"orphan: job {job_id} ({job[1]}, comment '{job[2]}') has no request record")
        elif rec["state"] in FINAL:
            out.append(f"orphan: job {job_id} ({job[1]}) belongs to request {rid}, which is {rec['state']}")
        elif job_id not in {j["job_id"] for j in rec["jobs"]} and rec["state"] != "submitting":
            out.append(f"orphan: job {job_id} ({job[1]}) is not in the record of request {rid} ({rec['state']})")
    for rid, rec in sorted(mine.items()):
        if rec["state"] == "submitting":
            out.append(f"inconsistent: request {rid} is still 'submitting' after rv ps")
        winner = rec.get("winner") or ""
        for j in rec["jobs"]:
            jid, st = j["job_id"], j["state"]
            if not jid:
                continue
            if jid in now and st in JOB_TERMINAL:
                out.append(f"inconsistent: request {rid}: job {jid} is {st} in the record, {now[jid][1]} in squeue")
            if jid in now and winner and j.get("strategy_id") != winner:
                out.append(f"inconsistent: request {rid}: loser {jid} still {now[jid][1]} after rv ps (winner {winner})")
            if jid not in before and jid not in now and st not in JOB_TERMINAL:
                out.append(f"inconsistent: request {rid}: job {jid} left the queue before rv ps, record says '{st}'")
        if rec["state"] in FINAL:
            for p in sorted(secrets_files(rec, home)):
                if os.path.exists(p):
                    out.append(f"secret: request {rid} is {rec['state']} but its secrets file {p} exists")
    print("\n".join(out))


def live(state_dir, run_name):
    records, _bad = load_records(state_dir)
    for rid, rec in sorted(run_records(records, run_name).items()):
        if rec["state"] not in FINAL:
            print(rid)


def final(state_dir, run_name, squeue_path, home):
    records, bad = load_records(state_dir)
    out = [f"unreadable: {b}" for b in bad]
    for job_id, job in sorted(read_squeue(squeue_path).items()):
        rid = ours(job, run_name, records)
        if rid is not None:
            out.append(f"orphan: job {job_id} ({job[1]}, request '{rid}') still queued after rv stop and rv ps")
    for rid, rec in sorted(run_records(records, run_name).items()):
        if rec["state"] not in FINAL:
            out.append(f"inconsistent: request {rid} is '{rec['state']}' after rv stop")
        for p in sorted(secrets_files(rec, home)):
            if os.path.exists(p):
                out.append(f"secret: request {rid} ({rec['state']}) left its secrets file {p}")
    print("\n".join(out))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"after": after, "live": live, "final": final}[cmd](*args)
