//! Projection and redaction (`project::Shape`) over projection paths × documents: the first
//! bytes choose a projection (inclusion or exclusion, up to four dotted paths over a small
//! alphabet of keys) and a redaction (`null`), the rest is the document. On any input the pass
//! returns without panicking (documents, cursor documents, change events); on a document the
//! transcoder accepts, the output is valid BSON (the transcoder accepts it too), and projecting
//! or redacting the output again changes nothing (idempotent).
#![no_main]
use bson2json_core::project::{Projection, RedactWith, Redaction, Shape};
use bson2json_core::{transcode, Dialect, Options};
use libfuzzer_sys::fuzz_target;

const KEYS: [&str; 6] = ["a", "b", "_id", "0", "c", "x"];

fn paths(spec: &[u8]) -> Vec<String> {
    let n = spec.first().map_or(0, |b| (b % 5) as usize);
    (0..n)
        .map(|i| {
            let b = spec.get(1 + i).copied().unwrap_or(0);
            let len = 1 + (b % 3) as usize;
            (0..len)
                .map(|j| KEYS[((b as usize) >> (2 + j)) % KEYS.len()])
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
    }
    let (spec, doc) = data.split_at(12);
    let inclusion = spec[0] & 0x80 != 0;
    let proj_paths = paths(&spec[1..6]);
    let red_paths = paths(&spec[6..11]);
    let fields: Vec<(&str, bool)> = proj_paths.iter().map(|p| (p.as_str(), inclusion)).collect();
    let red: Vec<&str> = red_paths.iter().map(|p| p.as_str()).collect();
    let (Ok(projection), Ok(redaction)) = (Projection::new(&fields), Redaction::new(&red, RedactWith::Null)) else {
        return; // colliding paths
    };
    let both = Shape::new(projection.clone(), redaction.clone());
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let _ = both.cursor(doc, spec[11] & 1 != 0, &mut out, &mut scratch);
    out.clear();
    let _ = both.change_event(doc, &mut out, &mut scratch);
    out.clear();
    let result = both.document(doc, &mut out, &mut scratch);
    let opts = Options { dialect: Dialect::Relaxed, ..Options::default() };
    let mut json = Vec::new();
    if transcode(doc, &opts, &mut json).is_err() {
        return;
    }
    result.expect("a document the transcoder accepts is shaped");
    json.clear();
    transcode(&out, &opts, &mut json).expect("the shaped document is valid BSON");
    for s in [Shape::new(projection, None), Shape::new(None, redaction)] {
        let mut once = Vec::new();
        s.document(doc, &mut once, &mut scratch).expect("shaped once");
        let mut twice = Vec::new();
        s.document(&once, &mut twice, &mut scratch).expect("shaped twice");
        assert_eq!(once, twice, "shaping is idempotent");
    }
});
