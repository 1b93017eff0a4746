// benchmark/callgrind-split.mjs: the split of a callgrind profile into V8's garbage collection,
// V8's compilers and the rest, which `benchmark/change-stream.mjs --instructions` reports.
import { describe, expect, it } from 'vitest'

// @ts-expect-error a benchmark module without types
import { kindOf, splitProfile } from '../../benchmark/callgrind-split.mjs'

// A profile in callgrind's format (`--dump-instr=no`, compressed names), with a call after
// which the cost line is the callee's inclusive cost, not the caller's own.
const PROFILE = `# callgrind format
version: 1
positions: line
events: Ir
summary: 1111

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) heap::base::SlotCallbackResult v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>(v8::internal::FullHeapObjectSlot, v8::internal::HeapObject)
0 100
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(2) ???
cfn=(2) __memcpy_avx_unaligned_erms
calls=1 0
0 40
+1 5
fn=(3) v8::internal::compiler::GraphReducer::ReduceTop()
0 200
fn=(4) v8::internal::Handle<v8::internal::HeapObject> v8::internal::Factory::NewJSObjectFromMap(v8::internal::Handle<v8::internal::Map>)
0 300
cfn=(1)
calls=2 0
0 77
ob=(2)
fn=(2)
0 40
0 400
fn=(5) std::__detail::_Map_base<v8::internal::MemoryChunk*, std::pair<v8::internal::MemoryChunk* const, v8::internal::MemoryChunkData> >::operator[](v8::internal::MemoryChunk* const&)
* 26
`

describe('callgrind-split', () => {
  it('names a function by its qualified name, not its return type, template arguments or parameters', () => {
    expect(kindOf('heap::base::SlotCallbackResult v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>(v8::internal::FullHeapObjectSlot)')).toBe('gc')
    expect(kindOf('v8::internal::Handle<v8::internal::HeapObject> v8::internal::Factory::NewJSObjectFromMap(v8::internal::Handle<v8::internal::Map>)')).toBe('code')
    expect(kindOf('void v8::internal::LookupIterator::Start<false>()')).toBe('code')
    expect(kindOf('v8::internal::(anonymous namespace)::IterateObjectCache(v8::internal::Isolate*)')).toBe('gc')
    expect(kindOf('v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)')).toBe('gc')
    expect(kindOf('v8::internal::compiler::JSHeapBroker::CanonicalPersistentHandle<v8::internal::Object>(v8::internal::Object)')).toBe('jit')
    expect(kindOf('v8::internal::maglev::MaglevGraphBuilder::Build()')).toBe('jit')
    expect(kindOf('std::__detail::_Map_base<v8::internal::MemoryChunk*, int>::operator[](v8::internal::MemoryChunk* const&)')).toBe('gc')
    expect(kindOf('Builtins_LoadIC')).toBe('code')
    expect(kindOf('0x00000000000b2570')).toBe('code')
  })

  it('counts each function its own cost, and a libc call of GC or compiler code to them', () => {
    const s = splitProfile(PROFILE)
    // own costs: scavenger 100 + 5, compiler 200, factory 300, memcpy 40 + 400, map 26
    expect(s.total).toBe(1071)
    // the scavenger's memcpy (40) counts to GC; the factory's call of the scavenger (77) is not
    // an own cost anywhere
    expect(s.gc).toBe(100 + 5 + 40 + 26)
    expect(s.jit).toBe(200)
    expect(s.code).toBe(300 + 400)
    expect(s.gc + s.jit + s.code).toBe(s.total)
  })
})
