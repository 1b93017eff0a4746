#!/usr/bin/env bash
# The JS suites on one runtime, as .ci/run and the CI workflow run them (the runtime installed by
# scripts/node-versions.sh, pinned):
#
#   bash scripts/test-runtime.sh RUNTIME SET [vitest arguments...]
#
#   RUNTIME   20, 22, 24, 26 (Node), bun or deno; or node: the `node` on PATH as it is (the
#             workflow's jobs, where actions/setup-node chose it)
#   SET       all       every suite (npm test)
#             subset    a representative subset: every layer once (transcoding, batches, streams,
#                       the native boundary, cursors and change streams on the test server, the
#                       CLI, the ESM entries); Node 22 and 24 in .ci/run
#             runtime   the compatibility, corpus, API and malformed-input suites: Bun and Deno
#             server    the suites that run against MONGODB_URI as they do against the in-repo test
#                       server (cursors, change streams, connections, failCommand faults, export
#                       and its faults, pipe, the README's examples, HTTP survival, snapshot
#                       ranges): SecantusDB in .ci/run, SecantusDB and MongoDB 8 in the workflow
#
# The suites run under vitest on the runtime itself (vitest's workers are the runtime's own
# processes). Deno has no `Object.prototype.__proto__` unless `--unstable-unsafe-proto`: without
# it js-bson, the compatibility suites' oracle, keeps a `__proto__` key that it drops on Node and
# Bun, so Deno runs with the flag (docs/runtimes.md). Exit status is vitest's.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME="${1:?usage: scripts/test-runtime.sh 20|22|24|26|bun|deno all|subset|runtime|server [vitest arguments...]}"
SET="${2:?usage: scripts/test-runtime.sh RUNTIME all|subset|runtime|server [vitest arguments...]}"
shift 2
case "${SET}" in
  all) suites=() ;;
  subset)
    suites=(__test__/transcode/api.spec.ts __test__/transcode/corpus.spec.ts __test__/transcode/malformed.spec.ts
      __test__/transcode/compat.spec.ts __test__/transcode/async.spec.ts __test__/transcode/stream.spec.ts
      __test__/native/batch-views.spec.ts __test__/mongo/cursor.spec.ts __test__/mongo/change-stream.spec.ts
      __test__/cli/cli.spec.ts __test__/repo/esm-entry.spec.ts) ;;
  runtime)
    suites=(__test__/transcode/compat.spec.ts __test__/transcode/corpus.spec.ts
      __test__/transcode/api.spec.ts __test__/transcode/malformed.spec.ts) ;;
  server)
    suites=(__test__/mongo/cursor.spec.ts __test__/mongo/change-stream.spec.ts __test__/mongo/connections.spec.ts
      __test__/mongo/failpoint.spec.ts __test__/cli/cli-export.spec.ts __test__/cli/cli-faults.spec.ts
      __test__/mongo/pipe.spec.ts __test__/repo/readme.spec.ts __test__/mongo/http-survival.spec.ts
      __test__/mongo/snapshot-ranges.spec.ts) ;;
  *) echo "test-runtime.sh: SET is all, subset, runtime or server, not '${SET}'" >&2; exit 2 ;;
esac
VITEST=node_modules/vitest/vitest.mjs
case "${RUNTIME}" in
  bun) run=(bun "${VITEST}" run) ;;
  deno) run=(deno run -A --unstable-unsafe-proto "${VITEST}" run) ;;
  20 | 22 | 24 | 26 | node) run=(node "${VITEST}" run) ;;
  *) echo "test-runtime.sh: no runtime '${RUNTIME}' (20, 22, 24, 26, bun, deno or node)" >&2; exit 2 ;;
esac
[ "${RUNTIME}" != node ] || exec "${run[@]}" "${suites[@]}" "$@"
exec bash scripts/node-versions.sh "${RUNTIME}" "${run[@]}" "${suites[@]}" "$@"
