#!/usr/bin/env python3
"""Print what failed in ctest's JUnit files, briefly: each failed test's name, time and the last
lines of its output. CI prints this last (.ci/run), so that the tail a CI service keeps of a long
log names the failure even when later lanes print pages after the tests.

usage: junit_failures.py [--lines N] [--chars N] [--names] JUNIT.xml...
  --names: only the failed tests' names, one per line (scripts/test.sh runs them again)
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def failures(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        yield (f"(could not read {path}: {e})", "", [])
        return
    for case in root.iter("testcase"):
        if case.get("status") != "fail" and case.find("failure") is None:
            continue
        out = case.findtext("system-out") or ""
        yield (case.get("name", "?"), case.get("time", "?"), out.rstrip("\n").splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=25)
    ap.add_argument("--chars", type=int, default=8000)
    ap.add_argument("--names", action="store_true")
    ap.add_argument("--title", default="FAILED")
    ap.add_argument("junit", nargs="+")
    args = ap.parse_args()
    found = [f for path in args.junit for f in failures(path)]
    if args.names:
        sys.stdout.write("".join(name + "\n" for name, _, _ in found))
        return 0
    if not found:
        return 0
    text = []
    per_test = max(5, args.chars // len(found))
    for name, secs, lines in found:
        block = [f"---- {args.title}: {name} ({secs} s); its last lines:"]
        body = ""
        for line in reversed(lines[-args.lines:]):
            line = line[:300]
            if len(body) + len(line) + 1 > per_test:
                break
            body = line + "\n" + body
        block.append(body.rstrip("\n") or "(no output)")
        text.append("\n".join(block))
    sys.stdout.write("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
