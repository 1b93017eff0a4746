// Splits a callgrind profile of a Node process into V8's garbage collection, V8's compilers and
// the rest, by the names of the functions that ran each instruction; benchmark/change-stream.mjs
// --instructions uses it. Tested by __test__/repo/callgrind-split.spec.ts.

/** V8's garbage collector's functions (by name; the roots' visits included). */
export const GC_FN = /^(v8::internal::|cppgc::|heap::base::)\S*?(Heap::|Heap\w*::|HeapVisitor|Scaveng|Marking|MarkCompact|Sweep|Evacuat|Compact|GC|Remembered|SlotSet|TypedSlot|Page::|MemoryChunk|MemoryAllocator|MemoryReducer|::Iterate|RootVisitor|ObjectVisitor|WeakObjects|ClearWeak|PointersUpdating|LocalAllocat|AllocationObserver|Safepoint|ArrayBufferSweeper|EphemeronTable|Minor|Pretenuring|StringTableCleaner|FreeList|BodyDescriptor|Space\w*::|Worklist|MarkBit|NeedsResetDueToFlushedBytecode|TqRuntimeFieldSlice|LiveObject|RecordMigrated)/
/** V8's compilers' functions: TurboFan, Maglev, Sparkplug, the parser and bytecode generator. */
export const JIT_FN = /^v8::internal::(compiler::|maglev::|baseline::|turboshaft::|interpreter::|Parser|ParserBase|PreParser|Scanner|AstNode|AstValue|Ast\w+::|DeclarationScope|Scope::|Zone|AccountingAllocator|Compiler::|OptimizingCompileDispatcher|\w*CompilationJob|BackgroundCompileTask|LazyCompileDispatcher|SharedFunctionInfo::EnsureSourcePositions|FeedbackVector::New|CodeDesc|Assembler|MacroAssembler|RelocIterator|SourcePositionTableBuilder|OSROptimizedCodeCache|Deoptimizer|TranslatedState|JSHeapBroker)/

/**
 * The instructions of a callgrind profile in three parts by the functions that ran them: V8's
 * garbage collector ({@link GC_FN}), V8's compilers ({@link JIT_FN}), and the rest (the code:
 * JavaScript, builtins, the driver, the addon, Node's I/O). libc's functions (memcpy, memset,
 * malloc) count to the part of their caller. The other threads (V8's GC and compiler workers)
 * are in the same profile (`--separate-threads=no`).
 * @param {string} text a profile (callgrind's format, `--dump-instr=no`)
 * @returns {{ total: number, gc: number, jit: number, code: number }}
 */
export function splitProfile(text) {
  const names = { ob: new Map(), fn: new Map() }
  const named = (kind, v) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(v)
    if (!m) return v
    if (m[2] !== undefined) names[kind].set(m[1], m[2])
    return names[kind].get(m[1])
  }
  const LIBC = /libc\.so/
  const parts = { gc: 0, jit: 0, code: 0 }
  let total = 0
  let fnKind = 'code'
  let ob = ''
  let cob = ''
  let cfn = ''
  let afterCalls = false
  for (const line of text.split('\n')) {
    const c = line.charCodeAt(0)
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {
      // a cost line: `position Ir`
      const ir = Number(line.slice(line.lastIndexOf(' ') + 1))
      if (afterCalls) {
        // the inclusive cost of a call: a libc leaf called from GC or compiler code moves there
        if (fnKind !== 'code' && LIBC.test(cob) && !/^(_?_?clone|start_thread)/.test(cfn)) {
          parts.code -= ir
          parts[fnKind] += ir
        }
        afterCalls = false
        cob = ob
      } else {
        parts[fnKind] += ir
        total += ir
      }
      continue
    }
    const eq = line.indexOf('=')
    if (eq < 0) continue
    const key = line.slice(0, eq)
    const v = line.slice(eq + 1)
    if (key === 'fn') fnKind = kindOf(named('fn', v))
    else if (key === 'ob') cob = ob = named('ob', v)
    else if (key === 'cob') cob = named('ob', v)
    else if (key === 'cfn') cfn = named('fn', v)
    else if (key === 'calls') afterCalls = true
  }
  return { total, ...parts }
}

/**
 * The part a function's own instructions belong to, by its name as callgrind gives it (with
 * return type, template arguments and parameters).
 * @param {string} fn
 * @returns {'gc' | 'jit' | 'code'}
 */
export function kindOf(fn) {
  // the qualified name alone: no return type, template arguments or parameters
  let q = fn.replaceAll('(anonymous namespace)', 'anon')
  const paren = q.indexOf('(')
  if (paren > 0) q = q.slice(0, paren)
  for (let prev = ''; prev !== q; ) [prev, q] = [q, q.replace(/<[^<>]*>/g, '')]
  q = q.slice(q.lastIndexOf(' ') + 1)
  if (JIT_FN.test(q)) return 'jit'
  if (GC_FN.test(q)) return 'gc'
  // a container's method, named by its type arguments (a collector's hash map of pages)
  if (/^(std|heap::base)::/.test(q)) return /v8::internal::(compiler|maglev|turboshaft)::|ZoneAllocator/.test(fn) ? 'jit' : /v8::internal::(MemoryChunk|\w*Marking|Scaveng|\w*Slot)/.test(fn) ? 'gc' : 'code'
  return 'code'
}
