//! The core crate's modules form a stack: each module uses only modules below it, so there are
//! no cycles and a reader can start at the bottom. This test reads the sources and checks every
//! `crate::<module>` reference outside comments and `#[cfg(test)]` modules against that order.
//! A new module must be placed in [`ORDER`] (the test fails on a file it does not know).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Bottom first. A module may use any module listed before it, never one after it.
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
    "number",
    "scan",
    "text",
    "utf8",
    // element types: tags and value lengths
    "element",
    // the walk
    "options",
    "compat",
    "transcode",
    // many documents per call, cursor replies, change-event framing
    "batch",
    "framing",
    // projection and redaction: BSON → BSON ahead of the walk
    "project",
];

/// The modules that may contain `unsafe` code.
const UNSAFE: &[&str] = &["lanes", "sink"];

/// The source with comments and `#[cfg(test)]` items removed (a `#[cfg(test)]` attribute is
/// taken to cover the item up to the end of its braces).
fn code_of(src: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut pending_test = false;
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            // Good enough for this crate: no `//` inside string literals outside tests.
            Some(i) => &line[..i],
            None => line,
        };
        if let Some(d) = skip_depth.as_mut() {
            *d += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if *d <= 0 {
                skip_depth = None;
            }
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        if pending_test {
            let d = line.matches('{').count() as i32 - line.matches('}').count() as i32;
            pending_test = false;
            if d > 0 {
                skip_depth = Some(d);
            }
            // a one-line item (`use …;`) is simply dropped
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The modules a source refers to as `crate::m` or inside `use crate::{m, …}`.
fn uses(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.insert(name);
        }
    }
    // Items re-exported at the crate root (`crate::Error`, `crate::Options`) are not modules.
    found.retain(|n| n.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    found
}

#[test]
fn modules_form_a_stack() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if name == "lib" {
            continue;
        }
        let Some(rank) = ORDER.iter().position(|m| *m == name) else {
            problems.push(format!("src/{name}.rs is not placed in ORDER"));
            continue;
        };
        seen.insert(name.clone());
        let code = code_of(&fs::read_to_string(&path).unwrap());
        for used in uses(&code) {
            match ORDER.iter().position(|m| *m == used) {
                Some(r) if r < rank => {}
                Some(_) => problems.push(format!("{name} uses {used}, which is above it")),
                None if used == "testing" => {
                    problems.push(format!("{name} uses the testing module"));
                }
                None => {}
            }
        }
        let has_unsafe = code.contains("unsafe ");
        if has_unsafe && !UNSAFE.contains(&name.as_str()) {
            problems.push(format!("{name} contains unsafe code"));
        }
    }
    for m in ORDER {
        if !seen.contains(*m) {
            problems.push(format!("ORDER names {m}, which has no source file"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_sees_a_use_in_either_form() {
    let code = code_of(
        "use crate::a::b;\nuse crate::{c::D, e};\n// crate::comment\n\
         #[cfg(test)]\nmod tests {\n    use crate::f;\n}\nfn g() { crate::h::i(); }\n",
    );
    let found: Vec<String> = uses(&code).into_iter().collect();
    assert_eq!(found, ["a", "c", "e", "h"]);
}
