//! Benchmarks: cold lint (load + analyse) and warm re-lint after a body edit of a generated tree.
//! Thread count follows `RAYON_NUM_THREADS`; every run asserts the finding count, so a broken
//! engine cannot post a fast time (CONVENTIONS habit 15).
#![allow(
    clippy::disallowed_methods,
    reason = "the benchmark writes its tree to a temp dir"
)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use ryechain::analysis::{Host, LintOptions, lint};
use ryechain::db::{Change, FileChange, Settings};
use ryechain::load::load;
use ryechain::synth::{GenOptions, generate};
use ryechain::system::os::OsSystem;

fn tools() -> usize {
    std::env::var("RYECHAIN_BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

fn write(dir: &Path) -> usize {
    let tree = generate(&GenOptions {
        tools: tools(),
        seed: 1,
    });
    ryechain::testing::write_tree(dir, &tree).unwrap();
    tree.manifest.planted.len()
}

fn cold(dir: &Path) -> (Host, usize) {
    let mut change = load(&OsSystem, &ryechain::testing::generated_spaces(dir)).change;
    // The generator writes unsigned trees (no key): the integrity family is checked elsewhere.
    change.settings = Some(Settings {
        ignore: vec!["integrity".to_owned()],
        ..Settings::default()
    });
    let mut host = Host::new();
    host.apply(change);
    let n = lint(&host.snapshot(), &LintOptions::default(), &|_| {})
        .findings
        .len();
    (host, n)
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let expected = write(&dir);
    let mut group = c.benchmark_group(format!("lint_{}_tools", tools()));
    group.sample_size(10);
    group.bench_function("cold", |b| {
        b.iter(|| {
            let (_, n) = cold(&dir);
            assert_eq!(n, expected);
        })
    });
    let (mut host, _) = cold(&dir);
    let target = {
        let db = host.snapshot();
        let files = ryechain::resolve::tool_files(&db);
        let f = files
            .iter()
            .copied()
            .find(|f| f.rel(&db).ends_with(".py"))
            .unwrap();
        (
            f.path(&db).as_ref().clone(),
            f.rel(&db).to_string(),
            f.space(&db).clone(),
            f.contents(&db).text().unwrap().to_owned(),
        )
    };
    let mut counter = 0u64;
    group.bench_function("warm_body_edit", |b| {
        b.iter(|| {
            counter += 1;
            let text = format!("{}\n# edit {counter}\n", target.3);
            let spec = ryechain::db::change::FileSpec {
                space: target.2.clone(),
                path: target.0.clone(),
                rel: target.1.clone(),
                contents: ryechain::db::FileContents::Text(text.into()),
                link_origin: None,
            };
            host.apply(Change {
                files: vec![FileChange::Write(spec)],
                ..Change::default()
            });
            let n = lint(&host.snapshot(), &LintOptions::default(), &|_| {})
                .findings
                .len();
            assert_eq!(n, expected);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
