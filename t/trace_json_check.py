#!/usr/bin/env python3
"""t/trace_json_check.py - checks a Chrome trace-event JSON file as gimpi writes it
(programs/trace_merge.c, doc/tracing.md): valid JSON with a traceEvents list; every
event of a known phase with its fields; every B closed by its E and every X with a
duration; the slices of each thread nested (none overlaps another without containing
it); every flow one "s" and one "f" (bp "e") with the start not after the end; every
thread and process used named; and, when asked, the counts a test expects
(--flows N --threads N --processes N --min-slices N --counters N --instants N).
Times are read as exact decimals, so that nesting is decided on the file's own digits.
Exit status 0 when the file passes, 1 with one line per problem on stderr otherwise."""

import argparse
import decimal
import json
import sys

PHASES = {"M", "X", "B", "E", "s", "t", "f", "C", "i", "I"}


def load(path, problems):
    """The document, or None with a problem noted."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_float=decimal.Decimal)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: not valid JSON: {e}")
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        problems.append(f"{path}: no traceEvents list")
        return None
    return doc


def check_fields(events, problems):
    """Each event: a known phase, pid and tid, a non-negative ts (not M)."""
    for n, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") not in PHASES:
            problems.append(f"event {n}: unknown phase: {e!r:.120}")
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            problems.append(f"event {n}: pid and tid must be integers: {e!r:.120}")
        if e["ph"] != "M":
            ts = e.get("ts")
            if not isinstance(ts, (int, decimal.Decimal)) or ts < 0:
                problems.append(f"event {n}: bad ts: {e!r:.120}")
        if e["ph"] == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, decimal.Decimal)) or dur < 0:
                problems.append(f"event {n}: X without a duration: {e!r:.120}")
        if e["ph"] in ("s", "t", "f") and "id" not in e:
            problems.append(f"event {n}: flow without an id: {e!r:.120}")


def slices_per_thread(events, problems):
    """{(pid, tid): [(start, end, name)]} from X events and B/E pairs."""
    threads, open_b = {}, {}
    for e in events:
        ph, key = e.get("ph"), (e.get("pid"), e.get("tid"))
        if ph == "X":
            threads.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], e.get("name")))
        elif ph == "B":
            open_b.setdefault(key, []).append(e)
        elif ph == "E":
            stack = open_b.get(key)
            if not stack:
                problems.append(f"thread {key}: E without a B at ts {e['ts']}")
                continue
            b = stack.pop()
            if e["ts"] < b["ts"]:
                problems.append(f"thread {key}: {b.get('name')} ends before it begins")
            threads.setdefault(key, []).append((b["ts"], e["ts"], b.get("name")))
    for key, stack in open_b.items():
        for b in stack:
            problems.append(f"thread {key}: B {b.get('name')} at ts {b['ts']} never ends")
    return threads


def check_nesting(threads, problems):
    """The slices of each thread nest: sorted by start (longest first), each one lies
    inside the innermost still open, or after it."""
    for key, slices in threads.items():
        stack = []
        for start, end, name in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                problems.append(f"thread {key}: {name} [{start}, {end}] overlaps "
                                f"{stack[-1][2]} [{stack[-1][0]}, {stack[-1][1]}]")
                continue
            stack.append((start, end, name))


def check_flows(events, problems):
    """Each flow id: one s, one f with bp e, the s not after the f; the number of flows."""
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "t", "f"):
            flows.setdefault((e.get("cat"), e.get("id")), []).append(e)
    for key, evs in flows.items():
        s = [e for e in evs if e["ph"] == "s"]
        f = [e for e in evs if e["ph"] == "f"]
        if len(s) != 1 or len(f) != 1:
            problems.append(f"flow {key}: {len(s)} starts and {len(f)} ends")
            continue
        if f[0].get("bp") != "e":
            problems.append(f"flow {key}: its end does not bind to its slice (bp e)")
        if f[0]["ts"] < s[0]["ts"]:
            problems.append(f"flow {key}: ends at {f[0]['ts']} before it starts at "
                            f"{s[0]['ts']}")
    return len(flows)


def check_names(events, problems):
    """Every thread and process that has events is named by an M event."""
    pnames = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    tnames = {(e["pid"], e["tid"]) for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for e in events:
        if e.get("ph") == "M":
            continue
        if e.get("pid") not in pnames:
            problems.append(f"process {e.get('pid')} has events but no name")
            pnames.add(e.get("pid"))
        if (e.get("pid"), e.get("tid")) not in tnames:
            problems.append(f"thread {(e.get('pid'), e.get('tid'))} has events but no name")
            tnames.add((e.get("pid"), e.get("tid")))
    return len(pnames), len(tnames)


def main():
    """Checks the file given; exit 0 or 1."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    for opt in ("flows", "threads", "processes", "min-slices", "counters", "instants"):
        ap.add_argument("--" + opt, type=int)
    a = ap.parse_args()
    problems = []
    doc = load(a.file, problems)
    if doc is not None:
        events = doc["traceEvents"]
        check_fields(events, problems)
        if not problems:
            threads = slices_per_thread(events, problems)
            check_nesting(threads, problems)
            nflows = check_flows(events, problems)
            nproc, nthr = check_names(events, problems)
            nslices = sum(len(s) for s in threads.values())
            got = {"flows": nflows, "threads": nthr, "processes": nproc,
                   "counters": sum(e["ph"] == "C" for e in events),
                   "instants": sum(e["ph"] in ("i", "I") for e in events)}
            for k, v in got.items():
                want = getattr(a, k)
                if want is not None and want != v:
                    problems.append(f"{k}: {v}, expected {want}")
            if a.min_slices is not None and nslices < a.min_slices:
                problems.append(f"slices: {nslices}, expected at least {a.min_slices}")
    for p in problems[:50]:
        print(f"trace_json_check: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
