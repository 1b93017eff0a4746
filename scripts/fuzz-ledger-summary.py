#!/usr/bin/env python3
"""Summarises fuzz/ledger.tsv per target as a markdown table (CPU time, executions, coverage, findings)."""
import collections
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rows = collections.OrderedDict()
with open(os.path.join(ROOT, "fuzz", "ledger.tsv")) as f:
    header = f.readline().rstrip("\n").split("\t")
    for line in f:
        r = dict(zip(header, line.rstrip("\n").split("\t")))
        t = rows.setdefault(r["target"], dict(cpu=0, cpu_here=0, execs=0, runs=0, commits=[], cov="?", ft="?",
                                              corpus="?", findings=0))
        t["cpu"] += float(r["cpu_s"])
        t["runs"] += 1
        if r["core_commit"] != "session-1":
            t["cpu_here"] += float(r["cpu_s"])
            t["execs"] += int(r["execs"]) if r["execs"].isdigit() else 0
            t["cov"], t["ft"], t["corpus"] = r["cov"], r["ft"], r["corpus"]
            if r["core_commit"] not in t["commits"]:
                t["commits"].append(r["core_commit"])
        if not r["result"].startswith(("ok", "prior")):
            t["findings"] += 1
print("| target | CPU-minutes in all | of which ledgered runs | executions (ledgered runs) | cov | ft | corpus | findings | core commits |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for name, t in rows.items():
    print(f"| {name} | {t['cpu'] / 60:.0f} | {t['cpu_here'] / 60:.0f} | {t['execs']:,} | {t['cov']} | {t['ft']} | "
          f"{t['corpus']} | {t['findings']} | {', '.join('`' + c + '`' for c in t['commits'])} |")
