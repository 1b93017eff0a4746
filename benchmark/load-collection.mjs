// Loads a .bson dump into a collection (drops it first), for benchmark/vs-mongoexport.sh.
//   node benchmark/load-collection.mjs URI DB COLLECTION FILE.bson
import { readFileSync } from 'node:fs'
import { BSON } from 'bson'
import { MongoClient } from 'mongodb'

const [uri, db, name, file] = process.argv.slice(2)
if (!file) {
  console.error('usage: node benchmark/load-collection.mjs URI DB COLLECTION FILE.bson')
  process.exit(2)
}
const buf = readFileSync(file)
const client = await MongoClient.connect(uri)
const coll = client.db(db).collection(name)
await coll.drop().catch(() => {})
let batch = []
let n = 0
for (let at = 0; at < buf.length; ) {
  const len = buf.readInt32LE(at)
  batch.push(BSON.deserialize(buf.subarray(at, at + len), { promoteValues: false, promoteLongs: false, promoteBuffers: false }))
  at += len
  if (batch.length === 1000) {
    await coll.insertMany(batch, { ordered: true })
    n += batch.length
    batch = []
  }
}
if (batch.length > 0) await coll.insertMany(batch)
n += batch.length
console.log(`${n} documents in ${db}.${name}, ${buf.length} bytes of BSON`)
await client.close()
