//! The core crate's modules form a stack: each module uses only modules below it, so there are
//! no cycles and a reader can start at the bottom. This test reads the sources and checks every
//! `crate::<module>` reference outside comments and `#[cfg(test)]` modules against that order.
//! A new module must be placed in [`ORDER`] (the test fails on a file it does not know).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Bottom first. A module may use any module listed before it, never one after it. A
/// directory module's files are listed as `dir::file` (`dir/mod.rs` is `dir`); a path is
/// judged by the longest module it starts with, so `compat::keys` and `compat` rank apart.
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
    "mongo",
    // rows: top-level fields as typed values; PowerSync's format; the packed form
    "row",
    "row::powersync",
    "row::packed",
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

/// The module paths a source refers to as `crate::m::n`, inside `use crate::{m, n::o, …}` or
/// `use crate::m::{self, n, …}` (one level of braces), or as `super::n` (resolved against
/// `parent`, the enclosing module of the file's own module: `compat` for `compat::keys`).
/// Each path keeps its leading lowercase segments: `crate::compat::keys::bloom_insert` gives
/// `compat::keys::bloom_insert`, which [`rank_of`] resolves to the longest module in [`ORDER`].
fn uses(code: &str, parent: &str) -> BTreeSet<String> {
    fn path(s: &str) -> String {
        // Items (`Error`, `Member`, `F_DUP`) are not modules: the path stops at the first.
        s.split("::")
            .map(|seg| {
                seg.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|n| n.starts_with(|c: char| c.is_ascii_lowercase()))
            .collect::<Vec<_>>()
            .join("::")
    }
    let mut found = BTreeSet::new();
    for (marker, base) in [("crate::", String::new()), ("super::", parent.to_owned())] {
        let mut rest = code;
        while let Some(i) = rest.find(marker) {
            // `foo_super::` or `mycrate::` are other names.
            let before = rest[..i].chars().next_back();
            rest = &rest[i + marker.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            // The path up to a brace group, if any: `compat::{self, keys::x}`.
            let head_len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let head = rest[..head_len].trim_end_matches(':');
            let prefix = [base.as_str(), head]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("::");
            if rest[head_len..].starts_with('{') {
                let group = &rest[head_len + 1..];
                let end = group.find('}').unwrap_or(group.len());
                for part in group[..end].split(',') {
                    let part = part.trim();
                    let full = if part == "self" || part.is_empty() {
                        prefix.clone()
                    } else if prefix.is_empty() {
                        path(part)
                    } else {
                        format!("{prefix}::{part}")
                    };
                    let p = path(&full);
                    if !p.is_empty() {
                        found.insert(p);
                    }
                }
            } else {
                let p = path(&prefix);
                if !p.is_empty() {
                    found.insert(p);
                }
            }
        }
    }
    found
}

/// The rank in [`ORDER`] of the longest module that `path` starts with.
fn rank_of(path: &str) -> Option<(usize, &'static str)> {
    ORDER
        .iter()
        .enumerate()
        .filter(|(_, m)| path == **m || path.starts_with(&format!("{m}::")))
        .max_by_key(|(_, m)| m.len())
        .map(|(i, m)| (i, *m))
}

/// Every source file under `dir` with its module path (`compat/keys.rs` is `compat::keys`,
/// `compat/mod.rs` is `compat`), `lib.rs` left out.
fn sources(dir: &Path, prefix: &str, out: &mut Vec<(String, std::path::PathBuf)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}::{name}")
            }
        };
        if path.is_dir() {
            sources(&path, &join(&stem), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            match stem.as_str() {
                "lib" if prefix.is_empty() => {}
                "mod" => out.push((prefix.to_owned(), path)),
                _ => out.push((join(&stem), path)),
            }
        }
    }
}

#[test]
fn modules_form_a_stack() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&dir, "", &mut files);
    files.sort();
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    for (name, path) in files {
        let Some(rank) = ORDER.iter().position(|m| *m == name) else {
            problems.push(format!(
                "{} ({name}) is not placed in ORDER",
                path.display()
            ));
            continue;
        };
        seen.insert(name.clone());
        let parent = name.rsplit_once("::").map_or("", |(p, _)| p);
        let code = code_of(&fs::read_to_string(&path).unwrap());
        for used in uses(&code, parent) {
            if used == "testing" || used.starts_with("testing::") {
                problems.push(format!("{name} uses the testing module"));
                continue;
            }
            match rank_of(&used) {
                Some((r, m)) if r > rank && used == m => {
                    problems.push(format!("{name} uses {m}, which is above it"));
                }
                Some((r, m)) if r > rank => {
                    problems.push(format!("{name} uses {used} (in {m}), which is above it"));
                }
                _ => {}
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
    assert_eq!(rank_of("element").map(|r| r.1), Some("element"));
    assert_eq!(rank_of("raw::Elements").map(|r| r.1), Some("raw"));
    assert_eq!(
        rank_of("mongo::cursor::x").map(|r| r.1),
        Some("mongo::cursor")
    );
    assert_eq!(rank_of("nosuchmodule"), None);
}
