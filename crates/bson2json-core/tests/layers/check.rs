//! The layering check the workspace's crates share (each crate's tests/layers.rs declares its
//! stack and calls [`problems`]): a crate's modules form a stack, each using only modules below
//! it, so there are no cycles and a reader can start at the bottom; `unsafe` code sits only in
//! the modules the stack names, and the crate root denies it everywhere else. The check reads
//! the sources: every `crate::<module>` (and `super::`) reference outside comments and
//! `#[cfg(test)]` modules is judged against the stack's order.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One crate's declared stack.
pub struct Stack<'a> {
    /// The crate's `src` folder.
    pub src: PathBuf,
    /// Bottom first. A module may use any module listed before it, never one after it. A
    /// directory module's files are listed as `dir::file` (`dir/mod.rs` is `dir`); a path is
    /// judged by the longest module it starts with, so `compat::keys` and `compat` rank apart.
    /// A new module must be placed here (the check fails on a file it does not know).
    pub order: &'a [&'a str],
    /// The modules that may contain `unsafe` code, each with the most `unsafe` keywords it may
    /// hold (`usize::MAX`: any number).
    pub unsafe_ok: &'a [(&'a str, usize)],
}

/// The source with comments and `#[cfg(test)]` items removed (a `#[cfg(test)]` attribute is
/// taken to cover the item up to the end of its braces).
pub fn code_of(src: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut pending_test = false;
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            // Good enough for these crates: no `//` inside string literals outside tests.
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
/// `compat::keys::bloom_insert`, which [`rank_of`] resolves to the longest module of a stack.
pub fn uses(code: &str, parent: &str) -> BTreeSet<String> {
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

/// The rank in `order` of the longest module that `path` starts with.
pub fn rank_of<'a>(order: &[&'a str], path: &str) -> Option<(usize, &'a str)> {
    order
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

/// Everything wrong with `stack`'s crate: an upward use, an unplaced or missing module,
/// `unsafe` outside the modules allowed it (or more of it than allowed), a crate root that does
/// not deny `unsafe` or allows it to a module the stack does not name.
pub fn problems(stack: &Stack<'_>) -> Vec<String> {
    let mut files = Vec::new();
    sources(&stack.src, "", &mut files);
    files.sort();
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    let allowance = |name: &str| {
        stack
            .unsafe_ok
            .iter()
            .find(|(m, _)| *m == name)
            .map_or(0, |(_, n)| *n)
    };
    for (name, path) in files {
        let Some(rank) = stack.order.iter().position(|m| *m == name) else {
            problems.push(format!(
                "{} ({name}) is not placed in the stack",
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
            match rank_of(stack.order, &used) {
                Some((r, m)) if r > rank && used == m => {
                    problems.push(format!("{name} uses {m}, which is above it"));
                }
                Some((r, m)) if r > rank => {
                    problems.push(format!("{name} uses {used} (in {m}), which is above it"));
                }
                _ => {}
            }
        }
        let count = code.matches("unsafe ").count();
        let allowed = allowance(&name);
        if count > allowed {
            problems.push(if allowed == 0 {
                format!("{name} contains unsafe code")
            } else {
                format!("{name} contains unsafe code {count} times, at most {allowed} allowed")
            });
        }
        if code.contains("allow(unsafe_code)") && allowed == 0 {
            problems.push(format!("{name} allows unsafe code"));
        }
    }
    for m in stack.order {
        if !seen.contains(*m) {
            problems.push(format!("the stack names {m}, which has no source file"));
        }
    }
    problems.extend(root_problems(stack));
    problems
}

/// The crate root (`lib.rs`): it denies `unsafe` code, holds none, and allows it only on the
/// declaration of a module the stack names.
fn root_problems(stack: &Stack<'_>) -> Vec<String> {
    let code = code_of(&fs::read_to_string(stack.src.join("lib.rs")).unwrap());
    let mut problems = Vec::new();
    if !code.contains("#![deny(unsafe_code)]") {
        problems.push("lib.rs does not deny unsafe code".to_owned());
    }
    if code.contains("unsafe ") {
        problems.push("lib.rs contains unsafe code".to_owned());
    }
    let mut lines = code.lines().map(str::trim).filter(|l| !l.is_empty());
    while let Some(line) = lines.next() {
        if line != "#[allow(unsafe_code)]" {
            continue;
        }
        let next = lines.next().unwrap_or("");
        let module = next
            .strip_prefix("mod ")
            .or_else(|| next.strip_prefix("pub mod "))
            .and_then(|m| m.strip_suffix(';'));
        match module {
            Some(m) if stack.unsafe_ok.iter().any(|(u, _)| *u == m) => {}
            _ => problems.push(format!("lib.rs allows unsafe code on `{next}`")),
        }
    }
    problems
}
