//! The core crate's modules form a stack: each module uses only modules below it, so there are
//! no cycles and a reader can start at the bottom; `unsafe` code sits in `lanes` and `sink`
//! only. The check (layers/check.rs, shared with the other crates' tests/layers.rs) reads the
//! sources. A new module must be placed in [`ORDER`] (the test fails on a file it does not
//! know).

#[path = "layers/check.rs"]
mod check;

use std::path::Path;

use check::{code_of, problems, rank_of, uses, Stack};

/// Bottom first. A module may use any module listed before it, never one after it (see
/// [`Stack::order`]).
const ORDER: &[&str] = &[
    // reading input, errors
    "bytes",
    "error",
    // SIMD/SWAR classification and the unchecked output sink: the only `unsafe`
    "lanes",
    "sink",
    // cstring scanning and value writers
    "decimal128",
    "escape",
    "number::integer",
    "number::double",
    "number::date",
    "number",
    "scan",
    "text",
    "utf8",
    // element types: tags and value lengths; raw elements (the one element iterator)
    "element",
    "raw",
    // the walk
    "options",
    "compat",
    "compat::keys",
    "compat::repair",
    "compat::values",
    "transcode",
    // rows: top-level fields as typed values; PowerSync's format; the packed form (change
    // events carry rows too)
    "row",
    "row::powersync",
    "row::packed",
    // projection and redaction: BSON → BSON ahead of the walk
    "project",
    // CSV rows with mongoexport's cells
    "csv",
    // many documents per call (shaped by `project` when asked); concatenated BSON; MongoDB
    // cursor replies and change events
    "batch",
    "concat",
    "mongo::change",
    "mongo::cursor",
    "mongo::split",
    // the Kafka connectors' records: the Java driver's JSON, and what each connector makes of
    // an event (the packer writes them)
    "kafka::java_chars",
    "kafka::java",
    "kafka::records",
    "kafka",
    // the packed change-event layout, and its writer
    "mongo::layout",
    "mongo::packer",
    "mongo",
];

/// The modules that may contain `unsafe` code (any amount).
const UNSAFE: &[(&str, usize)] = &[("lanes", usize::MAX), ("sink", usize::MAX)];

#[test]
fn modules_form_a_stack() {
    let stack = Stack {
        src: Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        order: ORDER,
        unsafe_ok: UNSAFE,
    };
    let problems = problems(&stack);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_a_use_in_either_form() {
    let code = code_of(
        "use crate::a::b;\nuse crate::{c::D, e};\n// crate::comment\n\
         #[cfg(test)]\nmod tests {\n    use crate::f;\n}\nfn g() { crate::h::i(); }\n\
         use crate::compat::{self, keys::x, Member};\nuse super::repair::Y;\n",
    );
    let found: Vec<String> = uses(&code, "compat").into_iter().collect();
    assert_eq!(
        found,
        [
            "a::b",
            "c",
            "compat",
            "compat::keys::x",
            "compat::repair",
            "e",
            "h::i"
        ]
    );
}

#[test]
fn a_path_resolves_to_the_longest_module() {
    let rank = |p| rank_of(ORDER, p).map(|r| r.1);
    assert_eq!(rank("element"), Some("element"));
    assert_eq!(rank("raw::Elements"), Some("raw"));
    assert_eq!(rank("mongo::cursor::x"), Some("mongo::cursor"));
    assert_eq!(rank("nosuchmodule"), None);
}
