//! Benchmark: every header parser on 1 MB inputs of hostile shapes (deep nesting of each bracket
//! kind, one long line, many keys, YAML alias chains, one 1 MB metadata value). The target is < 50 ms for any of them; each
//! run asserts the parser returned (problems or metadata), so a broken parser cannot post a time.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use ryechain::parse::{ParserKind, parse};

/// The allocator the `ryechain` binary runs with (src/main.rs), so the figures are the product's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MB: usize = 1 << 20;

fn repeat_to(unit: &str, prefix: &str) -> String {
    let mut s = String::from(prefix);
    while s.len() < MB {
        s.push_str(unit);
    }
    s
}

fn shapes() -> Vec<(&'static str, ParserKind, String)> {
    use ParserKind::*;
    let mut out = Vec::new();
    for (lang, kind, assign) in [
        ("yaml", Yaml, "executor_id: "),
        ("python", PythonAst, "CONFIG = "),
        ("js", JavaScript, "export const CONFIG = "),
        ("shell", Shell, "CONFIG='"),
    ] {
        out.push((lang, kind, assign.to_owned()));
    }
    let mut cases = Vec::new();
    for (lang, kind, assign) in out {
        for (shape, unit) in [
            ("deep_square", "["),
            ("deep_curly", "{"),
            ("deep_paren", "("),
        ] {
            cases.push((format!("{lang}/{shape}"), kind, repeat_to(unit, &assign)));
        }
        cases.push((
            format!("{lang}/long_line"),
            kind,
            repeat_to("abcdefgh ", &format!("{assign}\"")),
        ));
    }
    cases.push(("yaml/many_keys".into(), Yaml, {
        let mut s = String::new();
        let mut i = 0;
        while s.len() < MB {
            s.push_str(&format!("key{i}: value{i}\n"));
            i += 1;
        }
        s
    }));
    cases.push(("yaml/alias_chain".into(), Yaml, {
        let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        let mut i = 1;
        while s.len() < MB {
            s.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ));
            i += 1;
        }
        s
    }));
    cases.push(("python/many_assignments".into(), PythonAst, {
        let mut s = String::new();
        let mut i = 0;
        while s.len() < MB {
            s.push_str(&format!("V{i} = {{'k': [{i}, 'x']}}\n"));
            i += 1;
        }
        s
    }));
    // One metadata value of 1 MB: every entry is read, converted and located.
    for (name, kind, head, line, tail) in [
        (
            "yaml/big_config",
            Yaml,
            "config:\n",
            "  key{i}: [{i}, x]\n",
            "",
        ),
        (
            "python/big_config",
            PythonAst,
            "CONFIG = {\n",
            "    'k{i}': [{i}, 'x'],\n",
            "}\n",
        ),
        (
            "js/big_config",
            JavaScript,
            "export const CONFIG = {\n",
            "  k{i}: [{i}, 'x'],\n",
            "};\n",
        ),
    ] {
        let mut s = String::from(head);
        let mut i = 0;
        while s.len() < MB {
            s.push_str(&line.replace("{i}", &i.to_string()));
            i += 1;
        }
        s.push_str(tail);
        cases.push((name.into(), kind, s));
    }
    cases
        .into_iter()
        .map(|(n, k, t)| (Box::leak(n.into_boxed_str()) as &'static str, k, t))
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_1mb");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    for (name, kind, text) in shapes() {
        assert!(text.len() >= MB);
        group.bench_function(name, |b| {
            b.iter(|| {
                let parsed = parse(kind, &text);
                assert!(parsed.problems.len() < text.len());
                if name.ends_with("big_config") {
                    assert!(parsed.problems.is_empty(), "{name}: {:?}", parsed.problems);
                    assert!(
                        parsed.metadata.config().is_some(),
                        "{name}: CONFIG not read"
                    );
                }
                parsed
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
