//! Unit tests of the generator: determinism, counts, the manifest against the model's own lint.

use rustc_hash::FxHashSet;

use crate::build::Gen;
use crate::model::{ChainEnd, Ext, Role, Sp};
use crate::rng::Rng;
use crate::*;

fn tree_for(tools: usize, seed: u64) -> GeneratedTree {
    generate(&GenOptions { tools, seed })
}

#[test]
fn same_seed_is_byte_identical() {
    let a = tree_for(600, 42);
    let b = tree_for(600, 42);
    assert_eq!(a, b);
    let json = |t: &GeneratedTree| serde_json::to_string(&t.manifest).unwrap();
    assert_eq!(json(&a), json(&b));
}

#[test]
fn signing_is_deterministic_and_touches_every_item() {
    let mut a = tree_for(300, 5);
    let unsigned = a.clone();
    let mut b = tree_for(300, 5);
    let ka = sign(&mut a).unwrap();
    let kb = sign(&mut b).unwrap();
    assert_eq!(ka, kb);
    assert_eq!(a, b);
    assert_eq!(a.files.len(), unsigned.files.len() + 1);
    let line = format!(":{}", ka.fingerprint);
    for f in &a.files {
        if f.path.contains("/.ai/tools/") {
            let first = f
                .contents
                .lines()
                .find(|l| !l.starts_with("#!"))
                .unwrap_or("");
            assert!(
                first.starts_with("# rye:signed:") && first.ends_with(&line),
                "{}: {first}",
                f.path
            );
        }
    }
}

#[test]
fn different_seeds_differ() {
    let a = tree_for(300, 1);
    let b = tree_for(300, 2);
    assert_ne!(a.files, b.files);
    assert_ne!(a.manifest.planted, b.manifest.planted);
}

#[test]
fn tool_count_is_honoured() {
    for n in [0, 50, 200, 1000, 5000] {
        let m = tree_for(n, 9).manifest;
        let slack = (n as f64 * 0.03).ceil() as usize;
        assert!(
            m.tools.abs_diff(n) <= slack,
            "asked for {n} tools, got {}",
            m.tools
        );
        assert!(m.clean_tools <= m.tools);
    }
}

#[test]
fn every_planted_kind_is_present_at_500_tools() {
    let m = tree_for(500, 3).manifest;
    for rule in PLANTED_RULES {
        assert!(
            m.planted.iter().any(|p| p.rule == rule),
            "no {rule} planted"
        );
    }
    // Both cycle shapes.
    let cycles: Vec<&Planted> = m
        .planted
        .iter()
        .filter(|p| p.rule == rule::EXECUTOR_CYCLE)
        .collect();
    assert!(
        cycles.iter().any(|p| p.members.len() == 1) && cycles.iter().any(|p| p.members.len() == 2)
    );
    // Planted findings are a small fraction.
    let planted_tools = m.tools - m.clean_tools;
    assert!(
        planted_tools * 100 <= m.tools * 12,
        "{planted_tools} of {} tools planted",
        m.tools
    );
}

#[test]
fn small_trees_are_clean() {
    let t = tree_for(150, 5);
    assert!(t.manifest.planted.is_empty());
    assert_eq!(t.manifest.clean_tools, t.manifest.tools);
    assert!(t.symlinks.is_empty());
}

#[test]
fn paths_are_relative_unique_and_contained() {
    let t = tree_for(800, 11);
    let mut seen = FxHashSet::default();
    let all = t
        .files
        .iter()
        .map(|f| f.path.as_str())
        .chain(t.symlinks.iter().map(|s| s.path.as_str()));
    for p in all {
        assert!(seen.insert(p.to_owned()), "duplicate path {p}");
        assert!(
            !p.starts_with('/') && !p.contains('\\'),
            "{p} is not relative"
        );
        assert!(
            p.split('/')
                .all(|seg| !seg.is_empty() && seg != ".." && seg != "."),
            "{p} has a bad segment"
        );
        assert!(
            ["project/.ai/tools/", "user/.ai/tools/", "system/.ai/tools/"]
                .iter()
                .any(|r| p.starts_with(r)),
            "{p}"
        );
    }
    // Symlink targets, joined to the link's directory, land on a generated file.
    let files: FxHashSet<&str> = t.files.iter().map(|f| f.path.as_str()).collect();
    for s in &t.symlinks {
        let mut parts: Vec<&str> = s.path.split('/').collect();
        parts.pop();
        for seg in s.target.split('/') {
            if seg == ".." {
                assert!(parts.pop().is_some(), "{} escapes OUT", s.target);
            } else {
                parts.push(seg);
            }
        }
        assert!(
            files.contains(parts.join("/").as_str()),
            "{} -> {} dangles",
            s.path,
            s.target
        );
    }
    for p in &t.manifest.planted {
        assert!(
            seen.contains(&p.path),
            "planted path {} is not generated",
            p.path
        );
        assert!(p.members.iter().all(|m| seen.contains(m)));
    }
}

#[test]
fn manifest_matches_an_independent_model_lint() {
    for (tools, seed) in [(500, 3), (1200, 17), (3000, 99)] {
        let g = Gen::build(&GenOptions { tools, seed });
        let expected = g.model.findings();
        let manifest = g.finish().manifest;
        assert_eq!(manifest.planted, expected, "tools={tools} seed={seed}");
    }
}

#[test]
fn chains_span_two_to_ten_elements() {
    let g = Gen::build(&GenOptions {
        tools: 3000,
        seed: 5,
    });
    let mut lengths = std::collections::BTreeSet::new();
    for (i, item) in g.model.items.iter().enumerate() {
        if item.role == Role::Tool
            && let ChainEnd::Ok(n) = g.model.chain(i)
            && n <= MAX_CHAIN_ELEMENTS
        {
            lengths.insert(n);
        }
    }
    assert!(
        lengths.contains(&2) && lengths.contains(&MAX_CHAIN_ELEMENTS),
        "{lengths:?}"
    );
    // Shadowing is present in both directions.
    let shadow = |hi: Sp, lo: Sp| {
        g.model.index.values().any(|s| {
            s[hi as usize].iter().any(Option::is_some) && s[lo as usize].iter().any(Option::is_some)
        })
    };
    assert!(shadow(Sp::Project, Sp::User) && shadow(Sp::User, Sp::System));
}

/// Top-level `NAME = "value"` / `NAME = None` lines of a Python header.
fn py_header(text: &str, name: &str) -> Option<Option<String>> {
    let prefix = format!("{name} = ");
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map(|v| {
        v.strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .map(str::to_owned)
    })
}

#[test]
fn rendered_files_parse_and_agree_with_the_model() {
    let g = Gen::build(&GenOptions {
        tools: 600,
        seed: 21,
    });
    let mut py_sizes = Vec::new();
    for item in g.model.items.iter().filter(|it| it.link.is_none()) {
        let text = &item.contents;
        match item.ext {
            Ext::Py => {
                let parsed = ruff_python_parser::parse_module(text);
                assert_eq!(
                    parsed.is_err(),
                    item.unparseable,
                    "{}:\n{text}",
                    item.path()
                );
                assert_eq!(
                    py_header(text, "__version__"),
                    item.version.clone().map(Some),
                    "{}",
                    item.path()
                );
                let exec = py_header(text, "__executor_id__");
                if item.tool_type == "python_lib" {
                    assert_eq!(exec, Some(None));
                } else {
                    assert_eq!(exec.flatten(), item.executor, "{}", item.path());
                }
                assert_eq!(
                    py_header(text, "__tool_type__").flatten().as_deref(),
                    Some(item.tool_type.as_str())
                );
                if item.role == Role::Tool && item.tool_type == "python" {
                    py_sizes.push(text.len());
                }
            }
            Ext::Yaml => {
                let parsed = serde_yaml::from_str::<serde_yaml::Value>(text);
                if item.unparseable {
                    assert!(parsed.is_err(), "{} should not parse", item.path());
                    continue;
                }
                let doc = parsed.unwrap_or_else(|e| panic!("{}: {e}\n{text}", item.path()));
                let s = |k: &str| doc.get(k).and_then(|v| v.as_str()).map(str::to_owned);
                assert_eq!(s("executor_id"), item.executor, "{}", item.path());
                assert_eq!(s("version"), item.version, "{}", item.path());
                assert_eq!(
                    s("tool_type").as_deref(),
                    Some(item.tool_type.as_str()),
                    "{}",
                    item.path()
                );
                let list = |k: &str| -> Vec<String> {
                    doc.get(k)
                        .and_then(|v| v.as_sequence())
                        .map_or_else(Vec::new, |xs| {
                            xs.iter()
                                .filter_map(|x| x.as_str().map(str::to_owned))
                                .collect()
                        })
                };
                assert_eq!(list("inputs"), item.inputs);
                assert_eq!(list("outputs"), item.outputs);
                let constraints: Vec<(String, String)> = doc
                    .get("child_constraints")
                    .and_then(|v| v.as_mapping())
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| {
                                (
                                    k.as_str().unwrap().to_owned(),
                                    v["min_version"].as_str().unwrap().to_owned(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(constraints, item.constraints);
            }
        }
    }
    let (min, max) = (
        py_sizes.iter().min().copied().unwrap(),
        py_sizes.iter().max().copied().unwrap(),
    );
    assert!(min >= 1000 && max <= 4096, "python tool sizes {min}..{max}");
    // Python OUTPUTS lines agree too.
    for item in g
        .model
        .items
        .iter()
        .filter(|it| it.ext == Ext::Py && !it.outputs.is_empty())
    {
        let list: Vec<String> = item.outputs.iter().map(|o| format!("\"{o}\"")).collect();
        assert!(
            item.contents
                .contains(&format!("\nOUTPUTS = [{}]\n", list.join(", "))),
            "{}",
            item.path()
        );
    }
}

#[test]
fn bundle_copies_are_the_shipped_files() {
    let t = tree_for(10, 0);
    let extractor = t
        .files
        .iter()
        .find(|f| f.path == "system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml")
        .unwrap();
    assert!(extractor.contents.starts_with("# ryechain system bundle:"));
    for p in PRIMITIVE_IDS {
        assert!(
            t.files
                .iter()
                .any(|f| f.path == format!("system/.ai/tools/{p}.yaml")),
            "{p}"
        );
    }
}

#[test]
fn splitmix64_reference_values() {
    // First outputs for seed 1234567 (Vigna's reference implementation).
    let mut r = Rng::new(1_234_567);
    assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
    assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
}
