// The size of a randomised differential test: its default count times B2J_TEST_SCALE (default 1),
// unless the test's own variable (e.g. BSON2JSON_DOCS) gives the count. `.ci/run` runs every count
// in full on Node 26 with the native addon, and at a fifth when the same suites run again on Node 20
// and on the WASI build, where they check the same core (CONTRIBUTING.md, "What `.ci/run` runs").
export function testCount(own: string, full: number): number {
  const given = process.env[own]
  if (given !== undefined && given !== '') return Number(given)
  const scale = Number(process.env.B2J_TEST_SCALE ?? 1)
  if (!(scale > 0 && scale <= 1)) throw new RangeError(`B2J_TEST_SCALE must be in (0, 1], got ${process.env.B2J_TEST_SCALE}`)
  return Math.max(1, Math.round(full * scale))
}
