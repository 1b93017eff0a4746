#!/usr/bin/env python3
"""Writes the seed corpus for every fuzz target from the BSON corpus in spec/bson-corpus.

Every canonical_bson, degenerate_bson and decodeErrors hex string of
spec/bson-corpus/tests/*.json becomes one file `fuzz/corpus/<target>/seed-<file>-<kind>-<n>`.
- transcode, differential, swar, structured: the raw bytes (structured reads them as an
  arbitrary-encoded program; they still seed its mutator usefully);
- batch: a selector byte (0x01: relaxed/strict) then the document, plus one file with all
  valid documents concatenated (selector 0x39: repeated past the parallel threshold).
Re-running is idempotent. Usage: python3 fuzz/gen_corpus.py
"""
import glob, json, os

here = os.path.dirname(os.path.abspath(__file__))
spec = os.path.join(here, "..", "spec", "bson-corpus", "tests")
targets = ["transcode", "differential", "swar", "structured", "batch"]
seeds = []
for path in sorted(glob.glob(os.path.join(spec, "*.json"))):
    name = os.path.basename(path)[:-5]
    d = json.load(open(path))
    for i, case in enumerate(d.get("valid", [])):
        seeds.append((f"{name}-canonical-{i}", bytes.fromhex(case["canonical_bson"])))
        if "degenerate_bson" in case:
            seeds.append((f"{name}-degenerate-{i}", bytes.fromhex(case["degenerate_bson"])))
    for i, case in enumerate(d.get("decodeErrors", [])):
        seeds.append((f"{name}-decodeError-{i}", bytes.fromhex(case["bson"])))

for t in targets:
    os.makedirs(os.path.join(here, "corpus", t), exist_ok=True)
for name, b in seeds:
    for t in targets:
        data = (b"\x01" + b) if t == "batch" else b
        with open(os.path.join(here, "corpus", t, "seed-" + name), "wb") as f:
            f.write(data)
valid = b"".join(b for n, b in seeds if "-decodeError-" not in n)
with open(os.path.join(here, "corpus", "batch", "seed-all-valid-concatenated"), "wb") as f:
    cut = [n for n in range(60000, 0, -1) if n <= len(valid) and n % 4 == 0][0]
    f.write(b"\x39" + valid[:cut])
print(f"{len(seeds)} seeds x {len(targets)} targets")
