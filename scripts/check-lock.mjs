#!/usr/bin/env node
// Checks that package-lock.json is complete enough for `npm ci` on every platform.
//
//   node scripts/check-lock.mjs                 check ./package-lock.json
//   node scripts/check-lock.mjs path/to/lock    check another lock file
//   node scripts/check-lock.mjs --self-test     prove the check fails on a seeded lock
//
// `npm ci` refuses a lock ("Missing: NAME@VERSION from lock file") when a package in it names a
// dependency, optional ones included, that has no entry of its own. On Linux the other platforms'
// binaries (`@oxlint/binding-darwin-arm64`, ...) are never installed, so a lock written by an
// `npm install` that could not fetch them looks fine here and breaks CI on macOS and Windows.
// This script resolves every dependency and optional dependency of every entry the way Node
// does (the nearest node_modules/NAME up the tree) and requires that the entry exists, has a
// version satisfying the declared range when the range is an exact version, and an integrity
// hash. It needs nothing installed: run it before `npm ci`.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const HOW_TO_FIX = `How to fix: the lock must name, for every optional platform package, an entry with
version and integrity. npm records them only when the registry serves that exact version.
  1. Find the package whose platform binaries are missing (the "named by" entry above) and
     pick a version of it whose platform packages all exist here: npm view NAME-PLATFORM versions
  2. Pin that version in package.json (devDependencies, or "overrides" for a transitive one;
     see CONTRIBUTING.md, "The lock file"), then: rm -rf node_modules && npm install
  3. Run this check again (node scripts/check-lock.mjs), and npm ci to be sure.`;

/** Returns a list of problems (strings); empty when the lock is complete. */
export function checkLock(lock) {
  const problems = [];
  if (lock.lockfileVersion !== 3 && lock.lockfileVersion !== 2) {
    problems.push(`lockfileVersion is ${lock.lockfileVersion}; npm >= 9 writes 3 (with a "packages" map)`);
  }
  const packages = lock.packages;
  if (!packages || typeof packages !== 'object' || !packages['']) {
    problems.push('no "packages" map with a root entry ""');
    return problems;
  }
  const resolve = (from, name) => {
    // Node's lookup: from/node_modules/name, then each ancestor's node_modules, then the root's.
    let base = from;
    for (;;) {
      const candidate = (base ? `${base}/` : '') + `node_modules/${name}`;
      if (packages[candidate]) return candidate;
      if (!base) return null;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  const exact = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
  for (const [path, entry] of Object.entries(packages)) {
    if (path !== '' && !entry.link) {
      if (!entry.version) problems.push(`${path}: entry has no version`);
      if (!entry.integrity && !entry.resolved?.startsWith('file:')) {
        problems.push(`${path}: entry has no integrity hash`);
      }
    }
    const kinds = [
      ['dependency', entry.dependencies],
      ['optional dependency', entry.optionalDependencies],
    ];
    if (path === '') kinds.push(['dev dependency', entry.devDependencies]);
    // npm >= 7 installs peer dependencies unless they are marked optional.
    const peers = Object.fromEntries(
      Object.entries(entry.peerDependencies || {}).filter(([n]) => !entry.peerDependenciesMeta?.[n]?.optional),
    );
    kinds.push(['peer dependency', peers]);
    for (const [kind, deps] of kinds) {
      for (const [name, range] of Object.entries(deps || {})) {
        const at = resolve(path, name);
        const who = path === '' ? 'package.json' : path;
        if (!at) {
          problems.push(`missing: ${name}@${range}, ${kind} named by ${who}, has no entry of its own`);
          continue;
        }
        const target = packages[at];
        if (exact.test(range) && !target.link && target.version !== range) {
          problems.push(`${at} is ${target.version}, but ${who} names ${kind} ${name}@${range}`);
        }
      }
    }
  }
  return problems;
}

function checkFile(file) {
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  return { lock, problems: checkLock(lock) };
}

function selfTest(file) {
  // Seed one fault: remove the entry of one other-platform optional package, as an `npm install`
  // against a registry that lacks it would. The check must fail on it and pass on the original.
  const { lock, problems } = checkFile(file);
  if (problems.length) {
    console.error(`self-test: ${file} itself fails the check; fix it first`);
    return 1;
  }
  const victim = Object.keys(lock.packages).find((p) => {
    const e = lock.packages[p];
    return e.optional && Array.isArray(e.os) && !e.os.includes(process.platform);
  });
  if (!victim) {
    console.error('self-test: the lock has no other-platform optional package to remove');
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'check-lock-'));
  try {
    const seeded = structuredClone(lock);
    delete seeded.packages[victim];
    const seededFile = join(dir, 'package-lock.json');
    writeFileSync(seededFile, JSON.stringify(seeded, null, 2));
    const self = fileURLToPath(import.meta.url);
    const run = spawnSync(process.execPath, [self, seededFile], { encoding: 'utf8' });
    const name = victim.slice(victim.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (run.status === 1 && run.stderr.includes(`missing: ${name}@`)) {
      console.log(`self-test: ok (removing ${victim} fails the check, exit 1, naming ${name})`);
      return 0;
    }
    console.error(`self-test: FAILED: the check exited ${run.status} on a lock without ${victim}`);
    console.error(run.stdout + run.stderr);
    return 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(argv) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  if (argv[0] === '--self-test') return selfTest(argv[1] || join(root, 'package-lock.json'));
  if (argv.length > 1 || (argv[0] && argv[0].startsWith('-'))) {
    console.error('usage: node scripts/check-lock.mjs [--self-test] [package-lock.json]');
    return 2;
  }
  const file = argv[0] || join(root, 'package-lock.json');
  let result;
  try {
    result = checkFile(file);
  } catch (e) {
    console.error(`check-lock: cannot read ${file}: ${e.message}`);
    return 2;
  }
  const { lock, problems } = result;
  if (problems.length) {
    console.error(`check-lock: ${file} is incomplete (${problems.length} problems); npm ci would refuse it:`);
    for (const p of problems) console.error(`  ${p}`);
    console.error(HOW_TO_FIX);
    return 1;
  }
  const n = Object.keys(lock.packages).length - 1;
  const optional = Object.values(lock.packages).filter((e) => e.optional).length;
  console.log(`check-lock: ok (${n} entries, ${optional} optional, every named dependency has its own entry)`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
