'use strict'

// --fields a,b.c: parsing the list (and --fieldFile) and the inclusion projection it stands
// for: sent to the server by `export`, applied by the addon's projection (lib/shape.js,
// crates/bson2json-core/src/project.rs) while a dump is transcoded, with the server's rules.

/** Splits `a,b.c` (or one name per line for --fieldFile); throws on empty names. */
function parseFieldList(text, { lines = false } = {}) {
  const raw = lines ? text.split(/\r?\n/) : text.split(',')
  const out = []
  for (const f of raw) {
    const name = f.trim()
    if (name === '') {
      if (lines) continue
      throw new Error(`empty field name in --fields '${text}'`)
    }
    if (name.split('.').some((p) => p === '')) throw new Error(`bad field name '${name}' (empty path part)`)
    if (name.startsWith('$')) throw new Error(`bad field name '${name}' (starts with $)`)
    out.push(name)
  }
  if (out.length === 0) throw new Error('no field names given')
  return out
}

/**
 * `{ a: 1, 'b.c': 1 }` for the server; a path under another one in the list is left out (`a`
 * covers `a.b`), since servers reject such a pair as a path collision.
 */
function serverProjection(fields) {
  const p = {}
  const sorted = [...new Set(fields)].sort((x, y) => x.length - y.length)
  for (const f of sorted) {
    const parts = f.split('.')
    let covered = false
    for (let i = 1; i < parts.length && !covered; i++) covered = Object.hasOwn(p, parts.slice(0, i).join('.'))
    if (!covered) p[f] = 1
  }
  return p
}

/**
 * What mongoexport asks the server for with --fields: `_id` and the top-level name of each
 * path; CSV then reads the dotted paths (`a.0.b` included) out of the whole top-level values.
 */
function topLevelProjection(fields) {
  const p = { _id: 1 }
  for (const f of fields) p[f.split('.')[0]] = 1
  return p
}

module.exports = { parseFieldList, serverProjection, topLevelProjection }
