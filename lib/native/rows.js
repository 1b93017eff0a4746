'use strict'

/**
 * Row objects from the binding's packed rows (crates/bson2json-node/src/rows.rs, core
 * `row::packed`): `[words, bins, ...texts]`, where `words` (a Uint32Array) holds per row its
 * fields' values as `[tag, operand]` slots (an 8-byte payload slot after a double or a 64-bit
 * integer) and a closing slot naming its keys: a shape already seen in the call, or a new one
 * (its keys as one string, each followed by a NUL). The tags' numbers come from the binding
 * (`RowTag`); lib/native/index.js passes them in.
 *
 * Each shape (list of keys) is kept in a bounded cache across calls. Its first rows are built
 * by a loop ({@link RowShape#generic}); from its second row on, by a function compiled for it
 * whose one object literal V8 allocates with every property in place (`{"a":v[0],"b":v[1]}`),
 * with no property set per field (ARCHITECTURE.md, decision 28). Both
 * define own data properties (a `__proto__` key is an own property, and a setter on
 * `Object.prototype` is not called), so the two paths make the same objects; where code
 * generation from strings is disallowed (`--disallow-code-generation-from-strings`), the loop
 * serves every row.
 */

/** Whether this machine is little-endian: payloads are in its byte order. */
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Shapes kept across calls before the cache is emptied. */
const MAX_SHAPES = 4096
/** Rows of a shape built by the loop before its function is compiled. */
const COMPILE_AFTER = 1
/** Shapes with more keys than this are always built by the loop (a literal that large compiles slowly). */
const MAX_COMPILED_KEYS = 512

const { defineProperty } = Object
const uncurry = (f) => Reflect.apply(Function.prototype.bind, Function.prototype.call, [f])
/** `Uint8Array.prototype.slice` as found at load: a copy with its own ArrayBuffer. */
const sliceBytes = uncurry(Object.getPrototypeOf(Uint8Array.prototype).slice)

/** Whether `new Function` works here (it does not under `--disallow-code-generation-from-strings`). */
let canCompile = true

/** The keys of one row shape, and how its rows are built. */
class RowShape {
  /** @param {string[]} keys */
  constructor(keys) {
    this.keys = keys
    this.uses = 0
    /** @type {(vals: any[]) => object} */
    this.make = (vals) => this.generic(vals)
  }

  /**
   * A row by a loop over the keys: a plain assignment where the object has no such property
   * (inherited ones included), a definition where it has (a repeated key, `__proto__`, a
   * property of `Object.prototype`), as a literal would define it.
   * @param {any[]} vals
   */
  generic(vals) {
    if (++this.uses > COMPILE_AFTER && canCompile && this.keys.length <= MAX_COMPILED_KEYS && this.compile()) return this.make(vals)
    const keys = this.keys
    const row = {}
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]
      if (k in row) defineProperty(row, k, { value: vals[i], writable: true, enumerable: true, configurable: true })
      else row[k] = vals[i]
    }
    return row
  }

  /** Compiles the shape's literal; false where code generation is disallowed. */
  compile() {
    let body = ''
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i]
      // JSON.stringify quotes any key as a valid string literal; `__proto__` as a computed key
      // is an own property (as a plain one it would set the prototype).
      body += `${k === '__proto__' ? '["__proto__"]' : JSON.stringify(k)}:v[${i}],`
    }
    try {
      // oxlint-disable-next-line no-new-func
      this.make = new Function('v', `return {${body}}`)
      return true
    } catch {
      canCompile = false
      return false
    }
  }
}

/** @type {Map<string, RowShape>} */
const shapes = new Map()
let lastSig = ''
let lastShape = new RowShape([])

/**
 * The shape whose keys `sig` lists (each followed by a NUL).
 * @param {string} sig
 */
function rowShape(sig) {
  if (sig === lastSig) return lastShape
  let shape = shapes.get(sig)
  if (shape === undefined) {
    const keys = sig.split('\0')
    keys.pop()
    shape = new RowShape(keys)
    if (shapes.size >= MAX_SHAPES) shapes.clear()
    shapes.set(sig, shape)
  }
  lastSig = sig
  lastShape = shape
  return shape
}

/**
 * The decoder of packed rows for the tag numbers `T` (the binding's `RowTag`): the rows of
 * the words `w[from..to)` (`view` a DataView of `w`'s memory from `w`'s start, for the
 * payloads), the bytes `packed[1]` and the texts `packed[2..]`.
 * @param {Record<string, number>} T
 * @returns {(w: Uint32Array, view: DataView, from: number, to: number, packed: any[]) => object[]}
 */
function rowDecoder(T) {
  const { Shape: SHAPE, NewShape: NEW_SHAPE, Null: NULL, True: TRUE, False: FALSE, Int32: INT32, Int64: INT64, UInt64: UINT64, Double: DOUBLE, BigDouble: BIG_DOUBLE, Str: STR, Bytes: BYTES } = T
  const NEXT_TEXT = 0x80000000
  const PADDED = 0x40000000
  return function unpackRows(w, view, from, to, packed) {
    const bins = packed[1]
    let t = 2
    let text = packed.length > 2 ? packed[2] : ''
    let at = 0
    let bin = 0
    const rows = []
    /** @type {RowShape[]} */
    const seen = []
    const vals = []
    let n = 0
    for (let k = from; k < to; k += 2) {
      const op = w[k + 1]
      switch (w[k]) {
        case STR:
        case NEW_SHAPE: {
          let end = op
          if (end >= NEXT_TEXT) {
            text = packed[++t]
            at = 0
            end -= NEXT_TEXT
          }
          if (end >= PADDED) {
            // the text starts with a unit of padding (the WASI build: rows.rs plan_texts)
            at = 1
            end -= PADDED
          }
          const s = text.slice(at, end)
          at = end
          if (w[k] === STR) {
            vals[n++] = s
            break
          }
          const shape = rowShape(s)
          seen.push(shape)
          rows.push(shape.make(vals))
          n = 0
          break
        }
        case SHAPE:
          rows.push(seen[op].make(vals))
          n = 0
          break
        case INT64:
          vals[n++] = view.getBigInt64(4 * k + 8, LITTLE)
          k += 2
          break
        case DOUBLE:
          vals[n++] = view.getFloat64(4 * k + 8, LITTLE)
          k += 2
          break
        case INT32:
          vals[n++] = op | 0
          break
        case NULL:
          vals[n++] = null
          break
        case TRUE:
          vals[n++] = true
          break
        case FALSE:
          vals[n++] = false
          break
        case UINT64:
          vals[n++] = view.getBigUint64(4 * k + 8, LITTLE)
          k += 2
          break
        case BIG_DOUBLE:
          vals[n++] = BigInt(view.getFloat64(4 * k + 8, LITTLE))
          k += 2
          break
        case BYTES:
          // `bins` is null when every byte value of the call is empty
          vals[n++] = bins === null ? new Uint8Array(0) : sliceBytes(bins, bin, op)
          bin = op
          break
        default:
          throw new Error(`bson2json: unknown row tag ${w[k]} in packed rows (a binding of another version?)`)
      }
    }
    // Every word, string and byte is consumed, no more: anything left over (a word not
    // written, a stale one) would show here.
    if (n !== 0 || at !== text.length || (packed.length > 2 && t !== packed.length - 1) || bin !== (bins === null ? 0 : bins.length)) {
      throw new Error('bson2json: packed rows not read to their end (a binding of another version?)')
    }
    return rows
  }
}

module.exports = { rowDecoder }
