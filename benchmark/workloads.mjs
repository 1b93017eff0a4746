// Seeded, deterministic BSON workload generator for the bson2json benchmarks.
//
// Every value comes from a mulberry32 PRNG seeded per workload (never Math.random), so
// the same seed + size always produces byte-identical BSON. Documents are built with
// js-bson 7 and only use values whose JSON.stringify(BSON.deserialize(...)) form is a
// valid, comparable JSON text: int64 stays within +/-2^53, doubles are finite.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BSON } from 'bson';

const { ObjectId, Double, Timestamp } = BSON;

export const GENERATOR_VERSION = 1;
export const DEFAULT_SEED = 20241122;
export const DATA_DIR = join(dirname(fileURLToPath(import.meta.url)), 'data');

// ---------------------------------------------------------------------------------------
// PRNG

export function mulberry32(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return next;
}

class Rng {
  constructor(seed) {
    this.next = mulberry32(seed);
  }
  float() {
    return this.next();
  }
  /** 53 random bits in [0, 1). */
  float53() {
    return (Math.floor(this.next() * 2 ** 26) * 2 ** 27 + Math.floor(this.next() * 2 ** 27)) / 2 ** 53;
  }
  int(lo, hi) {
    // inclusive lo, inclusive hi
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  bool(p = 0.5) {
    return this.next() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.next() * arr.length)];
  }
  bytes(n) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.next() * 256);
    return b;
  }
  hex(nChars) {
    let s = '';
    for (let i = 0; i < nChars; i++) s += '0123456789ABCDEF'[Math.floor(this.next() * 16)];
    return s;
  }
}

// ---------------------------------------------------------------------------------------
// Vocabulary

const ASCII_WORDS = (
  'the of and to in is was for on that with as by at from it this be are or an which ' +
  'order customer shipping payment invoice product quantity price discount warehouse ' +
  'delivery express standard return refund priority account balance region market ' +
  'blue green red black white large small medium premium basic cotton steel wooden ' +
  'fast slow reliable quality service support manager analytics dashboard report ' +
  'network server cluster replica shard index query document collection database ' +
  'stream event insert update delete change resume token cursor batch pipeline ' +
  'alpha beta gamma delta epsilon omega north south east west central harbor river'
).split(' ');

const NON_ASCII_WORDS = [
  'Ελληνικά', 'καλημέρα', 'Привет', 'спасибо', 'Москва', '日本語', '東京都', '中文字符',
  '北京市', '한국어', '서울', 'café', 'naïve', 'Zürich', 'São Paulo', 'Kraków', 'Ærøskøbing',
  '😀', '🚀🔥', '👍🏽', '🇩🇪', 'ümlaut', 'façade', 'Straße', 'ﬁnance', '€uro', '£pound',
];
const MULTIBYTE_WORDS = NON_ASCII_WORDS.filter((w) => [...w].every((ch) => ch.codePointAt(0) > 0x7f));

const ESCAPE_WORDS = [
  'say "hi"', 'C:\\Users\\shop', 'line\nbreak', 'tab\tsep', '"quoted"', 'back\\slash',
  'cr\r\nlf', 'q"\\"x', 'bell\u0001ctl', 'form\ffeed',
];

const FIRST_NAMES = ['Anna', 'Ben', 'Chloe', 'David', 'Emma', 'Felix', 'Grace', 'Hugo', 'Iris', 'Jonas', 'Kai', 'Lena'];
const LAST_NAMES = ['Smith', 'Jones', 'Meyer', 'Garcia', 'Rossi', 'Dubois', 'Novak', 'Larsen', 'Kowalski', 'Brown'];
const NON_ASCII_NAMES = ['José Müller', 'Σοφία Παπαδοπούλου', 'Дмитрий Иванов', '山田 太郎', 'Zoë Brontë', '김민준', 'Ølaf Søren'];
const CITIES = ['Berlin', 'Paris', 'London', 'Madrid', 'Rome', 'Vienna', 'Oslo', 'Prague', 'Lisbon', 'Dublin'];
const STATUSES = ['new', 'paid', 'packed', 'shipped', 'delivered', 'cancelled', 'returned'];

const DATE_LO = Date.UTC(2015, 0, 1);
const DATE_HI = Date.UTC(2025, 11, 31);

function word(r) {
  const x = r.float();
  if (x < 0.08) return r.pick(NON_ASCII_WORDS);
  if (x < 0.11) return r.pick(ESCAPE_WORDS);
  return r.pick(ASCII_WORDS);
}

function sentence(r, nWords) {
  const parts = [];
  for (let i = 0; i < nWords; i++) parts.push(word(r));
  return parts.join(' ');
}

/** Text of roughly `bytes` UTF-8 bytes, built by `wordFn`. */
function textOfBytes(r, bytes, wordFn) {
  const parts = [];
  let n = 0;
  while (n < bytes) {
    const w = wordFn(r);
    parts.push(w);
    n += Buffer.byteLength(w) + 1;
  }
  return parts.join(' ');
}

const asciiWord = (r) => r.pick(ASCII_WORDS);
const multibyteWord = (r) => r.pick(MULTIBYTE_WORDS);

function objectId(r) {
  const b = r.bytes(12);
  b.writeUInt32BE(Math.floor((DATE_LO + r.float() * (DATE_HI - DATE_LO)) / 1000), 0);
  return new ObjectId(b);
}

function date(r) {
  return new Date(DATE_LO + Math.floor(r.float() * (DATE_HI - DATE_LO)));
}

const price = (r, max = 500) => new Double(Math.round(r.float() * max * 100) / 100);
/** int64 value within +/-2^53 (kept as a BigInt so js-bson encodes BSON int64). */
const int64 = (r, magnitude = 2 ** 53 - 1) => BigInt(Math.floor((r.float53() * 2 - 1) * magnitude));

// ---------------------------------------------------------------------------------------
// Document shapes

function tinyDoc(r) {
  return { _id: objectId(r), a: 'b' };
}

function small250Doc(r) {
  return {
    _id: objectId(r),
    name: `${r.pick(FIRST_NAMES)} ${r.pick(LAST_NAMES)}`,
    email: `${r.pick(FIRST_NAMES).toLowerCase()}${r.int(1, 99)}@ex.com`,
    status: r.pick(STATUSES),
    note: asciiWord(r),
    age: r.int(18, 90),
    score: r.int(-100000, 100000),
    balance: int64(r, 2 ** 50),
    rating: new Double(r.float() * 5),
    createdAt: date(r),
    active: r.bool(),
    tags: [asciiWord(r), asciiWord(r), asciiWord(r)],
    address: { city: r.pick(CITIES), zip: String(r.int(10000, 99999)) },
  };
}

function lineItem(r, i) {
  return {
    line: i + 1,
    sku: `SKU-${r.hex(8)}`,
    name: sentence(r, r.int(2, 5)),
    qty: r.int(1, 20),
    price: price(r),
    discount: new Double(r.float() < 0.7 ? 0 : Math.round(r.float() * 30) / 100),
    weightKg: new Double(r.float() * 20),
    productId: int64(r, 2 ** 52),
    addedAt: date(r),
    inStock: r.bool(0.9),
    attrs: { color: asciiWord(r), size: r.pick(['XS', 'S', 'M', 'L', 'XL']), material: word(r) },
    tags: [word(r), word(r)],
  };
}

/** Element overhead of an array entry: type byte + decimal index key + NUL. */
const arrayEntryOverhead = (i) => 2 + String(i).length;

/** Order-like document of approximately `target` BSON bytes. */
function orderDoc(r, target) {
  const nonAsciiCustomer = r.bool(0.5);
  const doc = {
    _id: objectId(r),
    orderNo: `ORD-${r.int(100000, 999999)}`,
    status: r.pick(STATUSES),
    createdAt: date(r),
    updatedAt: date(r),
    total: price(r, 5000),
    currency: r.pick(['EUR', 'USD', 'GBP']),
    itemCount: 0,
    version: int64(r, 2 ** 40),
    paid: r.bool(),
    customer: {
      id: int64(r, 2 ** 53 - 1),
      name: nonAsciiCustomer ? r.pick(NON_ASCII_NAMES) : `${r.pick(FIRST_NAMES)} ${r.pick(LAST_NAMES)}`,
      email: `${r.pick(FIRST_NAMES).toLowerCase()}@example.org`,
      vip: r.bool(0.1),
      address: { street: `${r.int(1, 300)} ${asciiWord(r)} street`, city: r.pick(CITIES), zip: String(r.int(10000, 99999)) },
    },
    geo: [new Double(r.float() * 360 - 180), new Double(r.float() * 180 - 90)],
    items: [],
    attrs: {
      channel: r.pick(['web', 'app', 'store', 'phone']),
      priority: r.int(0, 5),
      flags: { gift: r.bool(0.2), express: r.bool(0.3) },
      score: new Double(r.float() * 100),
    },
    notes: sentence(r, Math.max(4, Math.round(target / 80))),
  };
  let size = BSON.calculateObjectSize(doc);
  const items = doc.items;
  for (;;) {
    const it = lineItem(r, items.length);
    const add = arrayEntryOverhead(items.length) + BSON.calculateObjectSize(it);
    if (items.length > 0 && size + add / 2 > target) break;
    items.push(it);
    size += add;
  }
  doc.itemCount = items.length;
  return doc;
}

function changeEventEnvelope(r, op, fullDocument) {
  const ev = {
    _id: { _data: `82${r.hex(98)}` },
    operationType: op,
    clusterTime: new Timestamp({ t: Math.floor(date(r).getTime() / 1000), i: r.int(1, 50) }),
    wallTime: date(r),
  };
  ev.fullDocument = fullDocument;
  ev.ns = { db: 'shop', coll: 'orders' };
  ev.documentKey = { _id: fullDocument._id };
  return ev;
}

function csInsertDoc(r, target) {
  // Envelope (_id, op, clusterTime, wallTime, ns, documentKey) is ~250 bytes.
  return changeEventEnvelope(r, 'insert', orderDoc(r, target - 250));
}

function csUpdateDoc(r, target) {
  const full = orderDoc(r, Math.round(target * 0.8) - 250);
  const ev = changeEventEnvelope(r, 'update', full);
  const updatedFields = { status: r.pick(STATUSES), updatedAt: date(r) };
  const nItems = Math.max(1, full.items.length);
  const nUpdates = Math.max(3, Math.round((target * 0.2 - 150) / 30));
  for (let k = 0; k < nUpdates; k++) {
    const i = r.int(0, nItems - 1);
    switch (k % 4) {
      case 0:
        updatedFields[`items.${i}.qty`] = r.int(1, 20);
        break;
      case 1:
        updatedFields[`items.${i}.price`] = price(r);
        break;
      case 2:
        updatedFields[`items.${i}.attrs.color`] = word(r);
        break;
      default:
        updatedFields[`items.${i}.inStock`] = r.bool();
    }
  }
  ev.updateDescription = {
    updatedFields,
    removedFields: ['attrs.flags.gift', `items.${r.int(0, nItems - 1)}.discount`],
    truncatedArrays: [],
  };
  return ev;
}

function stringyDoc(r) {
  const comments = [];
  for (let i = 0; i < 8; i++) {
    comments.push({
      author: r.bool(0.3) ? r.pick(NON_ASCII_NAMES) : `${r.pick(FIRST_NAMES)} ${r.pick(LAST_NAMES)}`,
      text: textOfBytes(r, 300, word),
      at: date(r),
      likes: r.int(0, 500),
    });
  }
  let escapes = '';
  while (escapes.length < 500) {
    escapes += r.pick(['"', '\\', '\n', '\t', '\u0001', 'path\\to\\"file"', 'a\tb\nc', ' ']) + asciiWord(r);
  }
  return {
    _id: objectId(r),
    title: sentence(r, 8),
    body: textOfBytes(r, 4096, word),
    ascii: textOfBytes(r, 2048, asciiWord),
    multibyte: textOfBytes(r, 600, multibyteWord),
    escapes,
    comments,
  };
}

function wideDouble(r) {
  const mantissa = (1 + r.float() * 9).toFixed(r.int(1, 6));
  const exp = r.int(-300, 300);
  const v = Number(`${r.bool() ? '-' : ''}${mantissa}e${exp}`);
  return Number.isFinite(v) ? v : 1e300;
}

function numericDoc(r) {
  const doubles = [];
  for (let i = 0; i < 400; i++) {
    const x = r.float();
    let v;
    if (x < 0.4) v = Math.round(r.float() * 100000) / 100; // 2-decimal prices
    else if (x < 0.8) v = (r.float53() * 2 - 1) * 10 ** r.int(0, 8); // full 17-digit doubles
    else v = wideDouble(r); // 1e-300 .. 1e300
    doubles.push(new Double(v));
  }
  const int64s = [];
  for (let i = 0; i < 200; i++) int64s.push(int64(r, r.bool(0.5) ? 2 ** 53 - 1 : 2 ** 36));
  const int32s = [];
  for (let i = 0; i < 200; i++) int32s.push(r.int(-2147483648, 2147483647));
  return { _id: objectId(r), doubles, int64s, int32s };
}

function array9mbDoc(r) {
  const items = [];
  for (let i = 0; i < 2500; i++) items.push(orderDoc(r, 3600));
  return { _id: objectId(r), kind: 'export', createdAt: date(r), items };
}

// ---------------------------------------------------------------------------------------
// Workload registry

const MB = 1024 * 1024;

/**
 * name -> { description, make(rng) -> plain object, full / quick: total BSON bytes target,
 *           or docs: fixed number of documents }
 */
export const WORKLOADS = {
  tiny: { description: '{_id: ObjectId, a: "b"} (31 B)', make: tinyDoc, full: 16 * MB, quick: 1 * MB },
  small250: {
    description: '~270 B: ObjectId, 4 strings, 2 int32, int64, double, date, bool, 3-string array, {city, zip}',
    make: small250Doc,
    full: 16 * MB,
    quick: 1 * MB,
  },
  doc1k: { description: 'order document ~1 KB (1-2 line items)', make: (r) => orderDoc(r, 1024), full: 32 * MB, quick: 2 * MB },
  doc10k: { description: 'order document ~10 KB (~30 line items)', make: (r) => orderDoc(r, 10 * 1024), full: 32 * MB, quick: 2 * MB },
  doc20k: { description: 'order document ~20 KB (~60 line items)', make: (r) => orderDoc(r, 20 * 1024), full: 32 * MB, quick: 2 * MB },
  doc100k: { description: 'order document ~100 KB (~320 line items)', make: (r) => orderDoc(r, 100 * 1024), full: 32 * MB, quick: 2 * MB },
  cs_insert_1k: { description: 'change-stream insert event, fullDocument ~1 KB', make: (r) => csInsertDoc(r, 1024 + 250), full: 32 * MB, quick: 2 * MB },
  cs_insert_10k: { description: 'change-stream insert event, fullDocument ~10 KB', make: (r) => csInsertDoc(r, 10 * 1024 + 250), full: 32 * MB, quick: 2 * MB },
  cs_update_1k: { description: 'change-stream update event ~1 KB (updateDescription + fullDocument)', make: (r) => csUpdateDoc(r, 1024), full: 32 * MB, quick: 2 * MB },
  cs_update_10k: { description: 'change-stream update event ~10 KB (updateDescription + fullDocument)', make: (r) => csUpdateDoc(r, 10 * 1024), full: 32 * MB, quick: 2 * MB },
  stringy: { description: '~10 KB text: 4 KB mixed paragraph, 2 KB ASCII, 0.6 KB multi-byte, escape-heavy field, 8 comments', make: stringyDoc, full: 32 * MB, quick: 2 * MB },
  numeric: { description: '~9.4 KB: 400 doubles (prices / 17-digit / 1e±300), 200 int64, 200 int32', make: numericDoc, full: 32 * MB, quick: 2 * MB },
  array9mb: { description: 'ONE ~9 MB document: array of 2,500 order objects of ~3.6 KB', make: array9mbDoc, fullDocs: 3, quickDocs: 1 },
};

export const WORKLOAD_NAMES = Object.keys(WORKLOADS);

function workloadSeed(seed, name) {
  const h = createHash('sha256').update(`${seed}:${name}`).digest();
  return h.readUInt32LE(0);
}

/** Generate the documents of one workload; returns an array of BSON Buffers. */
export function generateWorkload(name, { quick = false, seed = DEFAULT_SEED } = {}) {
  const w = WORKLOADS[name];
  if (!w) throw new Error(`unknown workload ${name}`);
  const r = new Rng(workloadSeed(seed, name));
  const docs = [];
  if (w.fullDocs) {
    const n = quick ? w.quickDocs : w.fullDocs;
    for (let i = 0; i < n; i++) docs.push(BSON.serialize(w.make(r)));
    return docs;
  }
  const target = quick ? w.quick : w.full;
  let total = 0;
  while (total < target) {
    const b = BSON.serialize(w.make(r));
    docs.push(b);
    total += b.length;
  }
  return docs;
}

/** Split a concatenation of BSON documents (a mongodump-style .bson file). */
export function splitConcatenated(buf) {
  const docs = [];
  let off = 0;
  while (off < buf.length) {
    const len = buf.readInt32LE(off);
    docs.push(buf.subarray(off, off + len));
    off += len;
  }
  return docs;
}

/**
 * `docs` as concatenated batches of up to 1,000 documents or 4 MiB each (a batch holds at least
 * one document): what the batch calls and the transcode stream are timed on.
 * @param {Buffer[]} docs
 * @returns {Buffer[]}
 */
export function batchesOf(docs) {
  const batches = [];
  for (let s = 0; s < docs.length; ) {
    let e = s;
    let bytes = 0;
    while (e < docs.length && e - s < 1000 && (e === s || bytes + docs[e].length <= 4 << 20)) bytes += docs[e++].length;
    batches.push(Buffer.concat(docs.slice(s, e)));
    s = e;
  }
  return batches;
}

export function cachePath(name, { quick = false, seed = DEFAULT_SEED } = {}) {
  const w = WORKLOADS[name];
  const size = w.fullDocs ? `${quick ? w.quickDocs : w.fullDocs}docs` : `${(quick ? w.quick : w.full) / MB}MB`;
  return join(DATA_DIR, `${name}-s${seed}-${size}-v${GENERATOR_VERSION}.bson`);
}

/**
 * Load a workload from benchmark/data (generating and caching it when missing).
 * Returns { name, docs: Buffer[] (views into one concatenated buffer), concat: Buffer, bytes, generated }.
 */
export function loadWorkload(name, opts = {}) {
  const file = cachePath(name, opts);
  let concat;
  let generated = false;
  if (!opts.force && existsSync(file)) {
    concat = readFileSync(file);
  } else {
    const docs = generateWorkload(name, opts);
    concat = Buffer.concat(docs);
    mkdirSync(DATA_DIR, { recursive: true });
    writeFileSync(`${file}.tmp`, concat);
    renameSync(`${file}.tmp`, file);
    generated = true;
  }
  const docs = splitConcatenated(concat);
  return { name, docs, concat, bytes: concat.length, generated, file };
}
