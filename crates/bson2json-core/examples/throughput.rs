//! Transcodes every document of a concatenated `.bson` file repeatedly and prints MB/s of BSON
//! input; for profiling (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release -p bson2json-core --example throughput -- FILE [dialect] [seconds|xPASSES]`
//! (`x1` makes exactly one pass, for instruction counts under callgrind). `SKEW=n` in the
//! environment keeps `n` bytes in front of the output, moving its address: short documents
//! swing by up to 20 % with where the output and the frame stack land relative to each other,
//! so compare builds over several skews, not at one.
//!
//! The line ends with `cpu N MB/s`: the same rate over the time the thread was actually on a
//! CPU (`/proc/thread-self/schedstat`, Linux), which leaves out the time other processes on a
//! shared machine took from it (`benchmark/ab-core.sh` compares it with `METRIC=cpu`).
use std::time::Instant;

use bson2json_core::concat::split_concatenated;
use bson2json_core::{Dialect, Options, Transcoder};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: throughput FILE [compat|relaxed|canonical] [seconds]");
    let dialect =
        Dialect::from_name(args.get(2).map_or("compat", String::as_str)).expect("dialect");
    let arg = args.get(3).map_or("3", String::as_str);
    let (secs, passes) = match arg.strip_prefix('x') {
        Some(n) => (f64::INFINITY, n.parse::<usize>().expect("passes")),
        None => (arg.parse::<f64>().expect("seconds"), usize::MAX),
    };
    let data = std::fs::read(path).expect("read");
    let mut ranges = Vec::new();
    split_concatenated(&data, &mut ranges).expect("framing");
    let opts = Options::with_dialect(dialect);
    let mut tc = Transcoder::new();
    let skew: usize = std::env::var("SKEW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut out = vec![b' '; skew];
    let cpu_start = cpu_ns();
    let start = Instant::now();
    let (mut bytes, mut docs, mut out_bytes) = (0usize, 0usize, 0usize);
    let mut pass = 0;
    while pass < passes && start.elapsed().as_secs_f64() < secs {
        pass += 1;
        for &(s, e) in &ranges {
            out.truncate(skew);
            tc.transcode(&data[s..e], &opts, &mut out)
                .expect("transcode");
            bytes += e - s;
            out_bytes += out.len() - skew;
            docs += 1;
        }
    }
    let t = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_ns()) {
        (Some(a), Some(b)) if b > a => {
            format!("{:.0}", bytes as f64 / ((b - a) as f64 / 1e9) / 1e6)
        }
        _ => "?".to_string(),
    };
    println!(
        "{path}: {:.0} MB/s, {:.0} docs/s, out/in {:.2}, cpu {cpu} MB/s",
        bytes as f64 / t / 1e6,
        docs as f64 / t,
        out_bytes as f64 / bytes as f64
    );
}

/// Nanoseconds this thread has spent on a CPU (first field of `/proc/thread-self/schedstat`),
/// or `None` where that file does not exist.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}
