//! Criterion benches of the core per workload, next to the `bson` crate → serde_json path.
//!
//! Workloads are the benchmark generator's quick data sets (`npm run bench:gen -- --quick`
//! writes `benchmark/data/<workload>-s20241122-2MB-v1.bson`); missing files are skipped.
//! `cargo bench -p bson2json-bench` (add `-- doc10k` to pick one).
use std::path::PathBuf;

use bson2json_core::concat::split_concatenated;
use bson2json_core::{Dialect, Options, Transcoder};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const WORKLOADS: [&str; 8] = [
    "tiny",
    "small250",
    "doc1k",
    "doc10k",
    "cs_insert_1k",
    "cs_update_1k",
    "stringy",
    "numeric",
];

fn load(name: &str) -> Option<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benchmark/data");
    let entry = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| {
            let f = e.file_name().to_string_lossy().into_owned();
            f.starts_with(&format!("{name}-")) && f.contains("-2MB-")
                || f.starts_with(&format!("{name}-")) && f.contains("docs")
        })?;
    std::fs::read(entry.path()).ok()
}

fn benches(c: &mut Criterion) {
    for name in WORKLOADS {
        let Some(data) = load(name) else {
            eprintln!("skipping {name}: run `npm run bench:gen -- --quick` first");
            continue;
        };
        let mut ranges = Vec::new();
        split_concatenated(&data, &mut ranges).expect("framing");
        let docs: Vec<&[u8]> = ranges.iter().map(|&(s, e)| &data[s..e]).collect();
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.sample_size(20);
        for dialect in [Dialect::Compat, Dialect::Relaxed, Dialect::Canonical] {
            let opts = Options::with_dialect(dialect);
            let mut tc = Transcoder::new();
            let mut out = Vec::new();
            g.bench_function(format!("bson2json_{dialect:?}").to_lowercase(), |b| {
                b.iter(|| {
                    for d in &docs {
                        out.clear();
                        tc.transcode(d, &opts, &mut out).expect("valid");
                    }
                });
            });
        }
        // The generic route: the `bson` crate parses each document, and serde-transcode streams
        // it into serde_json (relaxed-style Extended JSON maps, key order kept).
        let mut out = Vec::new();
        g.bench_function("bson_crate_serde_json", |b| {
            b.iter(|| {
                for d in &docs {
                    out.clear();
                    let doc = bson::Document::from_reader(*d).expect("valid");
                    let de = bson::Deserializer::new(bson::Bson::Document(doc));
                    let mut ser = serde_json::Serializer::new(&mut out);
                    serde_transcode::transcode(de, &mut ser).expect("transcode");
                }
            });
        });
        g.finish();
    }
}

criterion_group!(transcode, benches);
criterion_main!(transcode);
