#!/usr/bin/env node
// Seeded generator of a realistic mongodump-style `.bson` file: concatenated `orders` and
// `customers` documents (ObjectId, non-ASCII strings, nested documents, arrays, dates,
// int32/int64/double, booleans, Decimal128 prices, an occasional Binary UUID).
//
//   node scripts/sample-dump.mjs [--docs N] [--out PATH] [--gzip] [--seed S]
//
// Defaults: 300000 documents to tmp/sample.bson (tmp/ is gitignored). Written in ~1 MiB
// chunks, never built whole in memory. Same seed and count: byte-identical file.

import { createWriteStream, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { once } from 'node:events'
import { createGzip } from 'node:zlib'
import { BSON } from 'bson'

const { serialize, ObjectId, Decimal128, Long, Int32, Double, Binary } = BSON
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function usage(code) {
  const text = `usage: node scripts/sample-dump.mjs [--docs N] [--out PATH] [--gzip] [--seed S]
  --docs N    number of documents (default 300000)
  --out PATH  output file (default tmp/sample.bson, or tmp/sample.bson.gz with --gzip)
  --gzip      gzip the output
  --seed S    PRNG seed (default 20240601)
`
  ;(code ? process.stderr : process.stdout).write(text)
  process.exit(code)
}

const args = process.argv.slice(2)
let docs = 300000
let out = null
let gzip = false
let seed = 20240601
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  const next = () => {
    if (i + 1 >= args.length) usage(2)
    return args[++i]
  }
  if (a === '--docs') docs = Number(next())
  else if (a === '--out') out = next()
  else if (a === '--gzip') gzip = true
  else if (a === '--seed') seed = Number(next())
  else if (a === '--help' || a === '-h') usage(0)
  else usage(2)
}
if (!Number.isInteger(docs) || docs < 0 || !Number.isInteger(seed)) usage(2)
out = resolve(out ?? `${root}/tmp/sample.bson${gzip ? '.gz' : ''}`)

/** mulberry32: a tiny seeded PRNG returning [0, 1). */
function mulberry32(a) {
  return () => {
    a |= 0
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const rnd = mulberry32(seed)
const int = (n) => Math.floor(rnd() * n)
const pick = (arr) => arr[int(arr.length)]
const bytes = (n) => {
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = int(256)
  return b
}

const FIRST = ['Ana', 'Björn', 'Chloé', 'Dmitri', 'Eun-ji', 'François', 'Grace', 'Hiroshi', 'Inés', 'Jürgen', 'Kai', 'Łukasz', 'Mía', 'Noah', 'Olga', 'Priya', 'Zoë', '陈', 'Søren', 'Åsa']
const LAST = ['Smith', 'Müller', 'García', 'Nguyễn', 'Kowalski', 'Dubois', 'Rossi', 'Tanaka', 'Öztürk', 'Johansson', 'Silva', 'Ivanova', '王', "O'Brien", 'Papadopoulos']
const CITIES = ['München', 'São Paulo', 'Zürich', 'Kraków', 'Reykjavík', 'Paris', 'Tokyo 東京', 'New York', 'Québec', 'İstanbul', 'Lisboa', 'Oslo']
const COUNTRIES = ['DE', 'BR', 'CH', 'PL', 'IS', 'FR', 'JP', 'US', 'CA', 'TR', 'PT', 'NO']
const STREETS = ['Hauptstraße', 'Rua das Flores', 'Bahnhofstrasse', 'ul. Floriańska', 'Laugavegur', 'Rue de Rivoli', 'Main St', 'Avenida da Liberdade']
const PRODUCTS = ['Espresso machine', 'Café crème beans 1 kg', 'Grinder «Pro»', 'Milk jug', 'Tamper ⌀58 mm', 'Descaler', 'Cup set (6)', 'Knock box', 'Scale 0.1 g', 'Kettle — gooseneck']
const STATUS = ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded']
const TAGS = ['gift', 'express', 'b2b', 'promo', 'first-order', 'repeat', 'fragile', 'eco']
const BASE_MS = Date.UTC(2023, 0, 1)
const YEAR_MS = 365 * 24 * 3600 * 1000

const objectId = () => new ObjectId(bytes(12))
const date = () => new Date(BASE_MS + int(YEAR_MS))
const price = (max) => Decimal128.fromString((int(max * 100) / 100).toFixed(2))

function customer(i) {
  const first = pick(FIRST)
  const last = pick(LAST)
  const c = int(CITIES.length)
  const doc = {
    _id: objectId(),
    customerNo: new Int32(100000 + i),
    name: { first, last },
    email: `${first}.${last}${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, 'x'),
    address: {
      street: `${pick(STREETS)} ${1 + int(200)}`,
      city: CITIES[c],
      zip: String(10000 + int(89999)),
      country: COUNTRIES[c],
      geo: { type: 'Point', coordinates: [new Double(rnd() * 360 - 180), new Double(rnd() * 180 - 90)] },
    },
    createdAt: date(),
    verified: rnd() < 0.8,
    loyaltyPoints: Long.fromNumber(int(5_000_000_000)),
    tags: Array.from({ length: int(4) }, () => pick(TAGS)),
    balance: price(500),
  }
  if (rnd() < 0.1) doc.externalId = new Binary(bytes(16), Binary.SUBTYPE_UUID)
  if (rnd() < 0.2) doc.notes = pick(['Bitte klingeln ☎', 'Leave at the door', 'Ne pas plier', '置き配希望', 'Call first'])
  return doc
}

function order(i) {
  const n = 1 + int(5)
  const items = []
  let total = 0
  for (let k = 0; k < n; k++) {
    const qty = 1 + int(3)
    const unit = 2 + int(40000) / 100
    total += qty * unit
    items.push({
      sku: `SKU-${String(int(100000)).padStart(6, '0')}`,
      name: pick(PRODUCTS),
      qty: new Int32(qty),
      unitPrice: Decimal128.fromString(unit.toFixed(2)),
      discount: new Double(rnd() < 0.3 ? Math.round(rnd() * 30) / 100 : 0),
    })
  }
  const doc = {
    _id: objectId(),
    orderNo: Long.fromNumber(1_000_000_000 + i),
    customerId: objectId(),
    status: pick(STATUS),
    createdAt: date(),
    items,
    total: Decimal128.fromString(total.toFixed(2)),
    currency: pick(['EUR', 'USD', 'CHF', 'JPY', 'BRL']),
    shipping: { method: pick(['standard', 'express', 'pickup']), weightKg: new Double(rnd() * 20), insured: rnd() < 0.4 },
    paid: rnd() < 0.7,
    tags: Array.from({ length: int(3) }, () => pick(TAGS)),
  }
  if (rnd() < 0.05) doc.paymentRef = new Binary(bytes(16), Binary.SUBTYPE_UUID)
  if (rnd() < 0.15) doc.comment = pick(['Merci beaucoup !', 'Danke 🙂', 'Please gift wrap', 'Срочно', null])
  return doc
}

mkdirSync(dirname(out), { recursive: true })
const file = createWriteStream(out)
const sink = gzip ? createGzip() : file
if (gzip) sink.pipe(file)

const FLUSH = 1 << 20
let parts = []
let pending = 0
let total = 0
const started = process.hrtime.bigint()
for (let i = 0; i < docs; i++) {
  const b = serialize(rnd() < 0.25 ? customer(i) : order(i))
  parts.push(b)
  pending += b.length
  if (pending >= FLUSH || i === docs - 1) {
    total += pending
    const chunk = Buffer.concat(parts, pending)
    parts = []
    pending = 0
    if (!sink.write(chunk)) await once(sink, 'drain')
  }
}
sink.end()
await once(file, 'close')
const secs = Number(process.hrtime.bigint() - started) / 1e9
process.stderr.write(`sample-dump: ${docs} documents, ${(total / 1e6).toFixed(1)} MB of BSON -> ${out} (${secs.toFixed(1)} s)\n`)
