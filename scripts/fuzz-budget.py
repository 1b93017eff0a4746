#!/usr/bin/env python3
"""Run the cargo-fuzz targets until each has had a CPU-time budget, and keep a ledger.

Usage:
  python3 scripts/fuzz-budget.py --minutes 60 [--jobs 2] [--chunk 10] [--until HH:MM] [target...]

* Builds the targets (`cargo +nightly fuzz build -O -a`: optimised, with debug assertions and overflow
  checks) before every run, then runs the libFuzzer binary
  directly on its corpus directory (fuzz/corpus/<target>), `--jobs` processes at a time.
* Each run lasts `--chunk` CPU-minutes of *its own process* (user+sys from /proc, so time lost to other
  load on the machine is not counted), then gets SIGINT and prints libFuzzer's final stats.
* Every run appends a row to fuzz/ledger.tsv (committed): start time, core commit, target, CPU seconds,
  wall seconds, executions, cov, ft, corpus files, result. The budget counts the ledger's rows for the
  target, so a budget can be reached over several sessions and core versions; the ledger says which.
* Exits 1 if any run found a crash, leak, timeout, OOM or panic (the input is in fuzz/artifacts/<target>/).
"""
import argparse
import datetime as dt
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
LEDGER = os.path.join(FUZZ, "ledger.tsv")
ALL = ["transcode", "structured", "differential", "swar", "batch", "framing"]
COLUMNS = ["start_utc", "core_commit", "target", "cpu_s", "wall_s", "execs", "cov", "ft", "corpus", "result"]
# Slow-unit reports (`slow-unit-*`, over 10 s wall) are not findings; timeouts (-timeout=20) are.
FINDING = re.compile(r"deadly signal|panicked at|ERROR: AddressSanitizer|ERROR: libFuzzer|ERROR: LeakSanitizer|"
                     r"==\d+== ERROR|SUMMARY: |Test unit written to \S*/(crash|leak|timeout|oom)-")
TICK = os.sysconf("SC_CLK_TCK")


def core_commit():
    out = subprocess.run(["git", "log", "-1", "--format=%h", "--", "crates/bson2json-core", "fuzz/fuzz_targets"],
                         cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "crates/bson2json-core/src", "fuzz/fuzz_targets"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return out + ("+dirty" if dirty else "")


def ledger_cpu():
    total = {}
    if os.path.exists(LEDGER):
        with open(LEDGER) as f:
            for line in f:
                cells = line.rstrip("\n").split("\t")
                if cells[0] == "start_utc" or len(cells) < 4:
                    continue
                total[cells[2]] = total.get(cells[2], 0.0) + float(cells[3])
    return total


def append(row):
    new = not os.path.exists(LEDGER)
    with open(LEDGER, "a") as f:
        if new:
            f.write("\t".join(COLUMNS) + "\n")
        f.write("\t".join(str(row[c]) for c in COLUMNS) + "\n")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def binary(target):
    triple = subprocess.run(["rustc", "-vV"], capture_output=True, text=True).stdout
    host = re.search(r"host: (\S+)", triple).group(1)
    return os.path.join(FUZZ, "target", host, "release", target)


class Run:
    def __init__(self, target, chunk_s, commit):
        self.target, self.chunk_s, self.commit = target, chunk_s, commit
        os.makedirs(os.path.join(FUZZ, "corpus", target), exist_ok=True)
        os.makedirs(os.path.join(FUZZ, "artifacts", target), exist_ok=True)
        os.makedirs(os.path.join(FUZZ, "logs"), exist_ok=True)
        self.start = time.time()
        self.start_utc = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.log_path = os.path.join(FUZZ, "logs", f"{target}-{int(self.start)}.log")
        self.log = open(self.log_path, "w")
        self.cpu = 0.0
        self.proc = subprocess.Popen(
            [binary(target), os.path.join("corpus", target), "-rss_limit_mb=2048", "-max_len=65536", "-timeout=20",
             "-print_final_stats=1", f"-artifact_prefix=artifacts/{target}/"],
            cwd=FUZZ, stdout=self.log, stderr=subprocess.STDOUT)
        self.interrupted = False

    def poll(self):
        c = cpu_seconds(self.proc.pid)
        if c is not None:
            self.cpu = c
        if not self.interrupted and self.cpu >= self.chunk_s:
            self.proc.send_signal(signal.SIGINT)
            self.interrupted = True
        return self.proc.poll()

    def finish(self, rc):
        self.log.close()
        text = open(self.log_path, errors="replace").read()
        execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
        last = [l for l in text.splitlines() if re.match(r"#\d+\s", l) and "cov:" in l]
        cov = re.search(r"cov: (\d+)", last[-1]).group(1) if last else "?"
        ft = re.search(r"ft: (\d+)", last[-1]).group(1) if last else "?"
        corpus = len(os.listdir(os.path.join(FUZZ, "corpus", self.target)))
        found = FINDING.search(text)
        # libFuzzer exits 72 (-interrupted_exitcode) after SIGINT, whoever sent it.
        ok = not found and rc in (0, 72)
        result = "ok" if ok else f"FINDING rc={rc} ({found.group(0) if found else 'exit'}) log={os.path.relpath(self.log_path, ROOT)}"
        row = dict(start_utc=self.start_utc, core_commit=self.commit, target=self.target, cpu_s=round(self.cpu),
                   wall_s=round(time.time() - self.start), execs=execs[-1] if execs else "?", cov=cov, ft=ft,
                   corpus=corpus, result=result)
        append(row)
        if ok:
            os.remove(self.log_path)
        print("\t".join(str(row[c]) for c in COLUMNS), flush=True)
        return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60, help="CPU-minutes per target, counted over the ledger")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--chunk", type=float, default=10, help="CPU-minutes per run")
    ap.add_argument("--until", help="UTC HH:MM: start no run after this, interrupt running ones at it")
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args()
    targets = a.targets or ALL
    deadline = None
    if a.until:
        h, m = map(int, a.until.split(":"))
        now = dt.datetime.now(dt.timezone.utc)
        deadline = now.replace(hour=h, minute=m, second=0, microsecond=0).timestamp()
    env = dict(os.environ, CARGO_BUILD_JOBS=os.environ.get("CARGO_BUILD_JOBS", "1"))

    def build():
        # Rebuilt before every run, so a long budget follows the code as it is committed;
        # each ledger row names the commit its binary was built from.
        subprocess.run(["cargo", "+nightly", "fuzz", "build", "-O", "-a"], cwd=FUZZ, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return core_commit()

    budget = a.minutes * 60
    running, failures = [], 0
    while True:
        done_cpu = ledger_cpu()
        for r in running:
            done_cpu[r.target] = done_cpu.get(r.target, 0) + r.cpu
        busy = {r.target for r in running}
        todo = sorted((done_cpu.get(t, 0), t) for t in targets if t not in busy and done_cpu.get(t, 0) < budget)
        past_deadline = deadline is not None and time.time() >= deadline
        while todo and len(running) < a.jobs and not past_deadline:
            spent, t = todo.pop(0)
            running.append(Run(t, min(a.chunk * 60, budget - spent), build()))
        if not running:
            break
        time.sleep(2)
        for r in list(running):
            if past_deadline and not r.interrupted:
                r.proc.send_signal(signal.SIGINT)
                r.interrupted = True
            rc = r.poll()
            if rc is not None:
                running.remove(r)
                if not r.finish(rc):
                    failures += 1
    total = ledger_cpu()
    for t in targets:
        print(f"{t}: {total.get(t, 0) / 60:.1f} CPU-minutes in the ledger", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
