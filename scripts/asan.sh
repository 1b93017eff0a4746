#!/usr/bin/env bash
# Memory-error checks.
#
#   scripts/asan.sh [cargo test args]   bson2json-core's tests (unit + integration, not doctests)
#                                       under AddressSanitizer on nightly. The core's only
#                                       `unsafe` is in lanes.rs (SSE2) and sink.rs (block copies and
#                                       word stores into reserved capacity); this guards it and the dependencies
#                                       (simdutf8's SIMD paths, zmij, ryu-js, itoa) and std.
#                                       ASAN_SKIP_SLOW=1 skips the 16 MB / 96 MB limit tests.
#   scripts/asan.sh --reentry           the Node addon built with AddressSanitizer (nightly) and the
#                                       re-entry suite (__test__/native/reentry.spec.ts) run against it,
#                                       with the ASan runtime preloaded into node: a read of an
#                                       ArrayBuffer that JavaScript detached and V8 freed mid-call
#                                       is reported instead of passing silently. REENTRY_ROUNDS
#                                       (default 12) sets the rounds per case.
#   scripts/asan.sh --valgrind          valgrind memcheck of the Node addon (the prebuilt
#                                       bson2json.*.node at the repo root) on ~460 varied documents
#                                       through toJSON/toJSONBuffer/toJSONArray/toNDJSON/toJSONList/
#                                       cursorBatch/toJSONAsync/toJSONListAsync, every dialect.
# Exit status is non-zero on any sanitizer or memcheck report, or any failing test.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

if [ "${1:-}" = "--reentry" ]; then
  target=x86_64-unknown-linux-gnu
  RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}" cargo +nightly build -p bson2json-node \
    --target "$target" --target-dir target/asan-node
  # The ASan build is the addon of a staged copy of the checkout (its tracked files, the
  # checkout's node_modules linked), so the release addon at the root stays in place for whatever
  # else runs (the loader's NAPI_RS_NATIVE_LIBRARY_PATH override would also redirect vitest's own
  # napi-rs dependencies).
  stage="$(mktemp -d "${TMPDIR:-/tmp}/bson2json-asan.XXXXXX")"
  trap 'rm -rf "$stage"' EXIT
  git ls-files -z | xargs -0 cp --parents -t "$stage"
  ln -s "$ROOT/node_modules" "$stage/node_modules"
  cp "target/asan-node/$target/debug/libbson2json_node.so" "$stage/bson2json.linux-x64-gnu.node"
  cd "$stage"
  # node is not instrumented, so the runtime is preloaded (rustc links it into executables
  # only). Leak checking is off: V8 keeps its heap until exit by design.
  runtime="$(gcc -print-file-name=libasan.so)"
  [ -f "$runtime" ] || { echo "asan: no shared ASan runtime (gcc's libasan.so)" >&2; exit 2; }
  LD_PRELOAD="$runtime" ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:handle_segv=1" \
    npx vitest run __test__/native/reentry.spec.ts __test__/transcode/arguments.property.spec.ts
  echo "asan: the re-entry suite passed against the ASan addon"
  exit 0
fi

if [ "${1:-}" = "--valgrind" ]; then
  script="$(mktemp /tmp/bson2json-memcheck.XXXXXX.js)"
  trap 'rm -f "$script"' EXIT
  cat >"$script" <<'JS'
const path = require('path');
const fs = require('fs');
const root = process.argv[2];
const b2j = require(root);
const BSON = require(path.join(root, 'node_modules/bson'));
const docs = [];
const dir = path.join(root, 'spec/bson-corpus/tests');
for (const f of fs.readdirSync(dir)) {
  if (!f.endsWith('.json')) continue;
  const j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  for (const c of j.valid || []) docs.push(Buffer.from(c.canonical_bson, 'hex'));
  for (const c of j.decodeErrors || []) docs.push(Buffer.from(c.bson, 'hex'));
}
const sample = docs.filter((_, i) => i % 3 === 0); // keep the run short under valgrind
for (let i = 0; i < 40; i++) {
  sample.push(BSON.serialize({ i, s: 'x\u0001é'.repeat(i), a: Array.from({ length: i }, (_, k) => k),
    d: { e: { f: [null, true, 1.5, new BSON.Long(i, i)] } }, b: new BSON.Binary(Buffer.alloc(i, 7)),
    dt: new Date(i * 1e9), r: /a+b/i, dec: BSON.Decimal128.fromString(String(i) + '.5') }));
}
const n0 = sample.length;
for (let i = 0; i < n0; i += 4) {
  const d = sample[i];
  sample.push(d.subarray(0, d.length >> 1));
  const f = Buffer.from(d); f[i % f.length] ^= 0xff; sample.push(f);
}
let ok = 0, err = 0;
for (const d of sample) {
  for (const dialect of ['compat', 'relaxed', 'canonical']) {
    for (const utf8 of ['strict', 'replace']) {
      try { JSON.parse(b2j.toJSON(d, { dialect, utf8 })); b2j.toJSONBuffer(d, { dialect, utf8 }); ok++; }
      catch (e) { if (!b2j.isTranscodeError(e)) throw e; err++; }
    }
  }
}
const valid = sample.filter((d) => { try { b2j.toJSON(d); b2j.toJSON(d, { dialect: 'relaxed' }); return true; } catch { return false; } });
JSON.parse(b2j.toJSONArray(valid));
b2j.toNDJSON(valid);
b2j.toJSONList(valid, { dialect: 'relaxed' });
const cursor = BSON.serialize({ cursor: { id: BSON.Long.fromNumber(0), ns: 'db.c', firstBatch: valid.slice(0, 20).map((d) => BSON.deserialize(d, { promoteValues: false })) } });
try { b2j.cursorBatch(cursor); } catch (e) { if (!b2j.isTranscodeError(e)) throw e; }
// long outputs: ropes (one-byte, UTF-16, astral), joined list texts around a long document
const long = [['é', 70000], ['x\u{1F600}', 50000], ['abc', 200000], ['a\u00e9\u20ac', 40000]].map(([f, n]) => BSON.serialize({ s: f.repeat(n) }));
for (const d of long) if (b2j.toJSON(d) !== JSON.stringify(BSON.deserialize(d))) throw new Error('long toJSON differs');
const mixed = [...valid.slice(0, 200), long[1], ...valid.slice(200, 400)];
const want = mixed.map((d) => JSON.stringify(BSON.deserialize(d)));
if (b2j.toJSONList(mixed).some((s, i) => s !== want[i])) throw new Error('long toJSONList differs');
if (b2j.toJSONArray(mixed) !== `[${want.join(',')}]`) throw new Error('long toJSONArray differs');
(async () => {
  for (const d of sample.slice(0, 50)) { try { await b2j.toJSONAsync(d); } catch (e) { if (!b2j.isTranscodeError(e)) throw e; } }
  await b2j.toJSONListAsync(valid.slice(0, 50));
  console.log(`memcheck workload: ${sample.length} documents, ${ok} ok + ${err} coded errors`);
})().catch((e) => { console.error(e); process.exit(2); });
JS
  # V8's conservative stack scan (cppgc, during mark-compact) reads uninitialised stack slots
  # by design; that one report is suppressed, nothing else is.
  valgrind --tool=memcheck --error-exitcode=1 --leak-check=no \
    --suppressions="$ROOT/scripts/valgrind-v8.supp" node "$script" "$ROOT"
  echo "valgrind: 0 memcheck errors"
  exit 0
fi

export RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
skip=()
if [ "${ASAN_SKIP_SLOW:-0}" = 1 ]; then
  skip=(--skip depth_2m_16mb --skip output_cap_16mb_of_control_chars --skip two_million_element_arrays)
fi
cargo +nightly test -j1 --no-fail-fast -p bson2json-core --target x86_64-unknown-linux-gnu --tests "$@" -- "${skip[@]}"
echo "asan: bson2json-core tests passed under AddressSanitizer"
