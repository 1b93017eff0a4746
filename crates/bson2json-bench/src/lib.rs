//! Nothing: this crate holds the core's criterion benches (`benches/transcode.rs`), so that
//! criterion is a dependency of `cargo bench -p bson2json-bench` only.
