//! Throughput of parsing and matching one file per language (the fixtures), in bytes per
//! second. `bench/lint-throughput.sh` measures whole trees in lines per second.

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferry_lint::{Language, Linter};

fn fixtures(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let linter = Linter::new();
    let mut group = c.benchmark_group("lint_source");
    for name in [
        "server.py",
        "client.ts",
        "server.js",
        "server.rs",
        "server.go",
    ] {
        let source = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let path = Path::new(name);
        let language = Language::from_path(path).expect("known language");
        group.throughput(Throughput::Bytes(source.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                linter
                    .lint_source(path, language, &source)
                    .expect("fixture parses")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, fixtures);
criterion_main!(benches);
