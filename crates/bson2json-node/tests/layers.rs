//! The binding's modules form a stack: each module uses only modules below it (no cycle), and
//! `unsafe` code sits only where [`UNSAFE`] says, the crate root denying it everywhere else.
//! The check is the core's (crates/bson2json-core/tests/layers/check.rs), which reads the
//! sources. A new module must be placed in [`ORDER`] (the test fails on a file it does not
//! know); a new export with plain Node-API callbacks adds its `register` to lib.rs.

#[path = "../../bson2json-core/tests/layers/check.rs"]
mod check;

use std::path::Path;

use check::{problems, Stack};

/// Bottom first: a module may use any module listed before it, never one after it.
#[rustfmt::skip]
const ORDER: &[&str] = &[
    // the raw Node-API calls, as safe functions
    "node_api",
    // the per-thread scratch; the options' one encoding
    "state",
    "options",
    // what every export shares: failures and the JS errors they become, JS strings of JSON
    // text, the V8 `RegExp` check, the single-document output protocol
    "errors",
    "strings",
    "regex",
    "output",
    // the exports: projection and redaction (used by the others), batches and cursors, rows
    // (change events carry them too), change events (the packed form, with its shaping), the
    // per-document hot path, the WASI staging, the dump pipeline's task
    "shape",
    "batch",
    "rows",
    "packed",
    "fast",
    "staged",
    "dump",
];

/// The modules that may hold `unsafe` code, and how much.
const UNSAFE: &[(&str, usize)] = &[
    // The Node-API calls (`napi_*` through raw handles) and the borrows of JavaScript memory,
    // each behind a safe function: `with_bytes` and its kin hand the bytes to a `Send`
    // closure, which can hold no environment or handle and so cannot run JavaScript.
    ("node_api", usize::MAX),
    // One block: the packed change batch reads its input borrowed (`node_api::bytes_of`)
    // while it makes JS strings and Buffer copies, which run no JavaScript; its walk holds the
    // environment, so it cannot be a `Send` closure (see the block's SAFETY comment).
    ("packed", 1),
    // One block, the same way: `toRows` reads its input borrowed while it makes the flat
    // strings of its texts (rows.rs `rows_borrowed`).
    ("rows", 1),
];

#[test]
fn modules_form_a_stack_and_unsafe_stays_where_declared() {
    let stack = Stack {
        src: Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        order: ORDER,
        unsafe_ok: UNSAFE,
    };
    let problems = problems(&stack);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
