//! The dump crate's modules form a stack (each uses only modules below it, no cycle), and
//! `unsafe` code sits in `sys` only, the crate root denying it everywhere else. The check is
//! the core's (crates/bson2json-core/tests/layers/check.rs), which reads the sources.

#[path = "../../bson2json-core/tests/layers/check.rs"]
mod check;

use std::path::Path;

use check::{problems, Stack};

/// Bottom first: a module may use any module listed before it, never one after it.
#[rustfmt::skip]
const ORDER: &[&str] = &[
    // the operating system calls beyond std's
    "sys",
    // what a run shares with its caller, and how it ends
    "control",
    "outcome",
    // the input, the slots, and the three kinds of thread
    "source",
    "slot",
    "reader",
    "worker",
    "writer",
];

/// `sys`: `read` into a slot's spare capacity, and the duplicate of a caller's descriptor.
const UNSAFE: &[(&str, usize)] = &[("sys", usize::MAX)];

#[test]
fn modules_form_a_stack_and_unsafe_stays_in_sys() {
    let stack = Stack {
        src: Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        order: ORDER,
        unsafe_ok: UNSAFE,
    };
    let problems = problems(&stack);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
