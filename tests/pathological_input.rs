//! Parsing is linear in the input: 1 MB of deep brackets of every kind, deep block nesting, long
//! lines, many keys and alias expansions finish for the YAML, Python, JavaScript and shell
//! parsers (and behind the shared YAML guard for config, extractor and CONFIG_RESOLVE files).
//! Each case runs in its own thread with a generous timeout, so a regression fails instead of
//! hanging the suite.

use std::sync::mpsc;
use std::time::Duration;

use ryechain::analysis::{LintOptions, lint};
use ryechain::model::{ParsedFile, Value};
use ryechain::parse::guard::{YamlError, check_yaml_nesting, yaml_from_str};
use ryechain::parse::{ParserKind, parse};
use ryechain::testing::host;

/// Generous for a debug build on a loaded machine; the linear parsers take well under a second.
const TIMEOUT: Duration = Duration::from_secs(30);
const MB: usize = 1 << 20;

/// Run `f` in a thread; panic if it has not answered within [`TIMEOUT`].
fn finishes<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {TIMEOUT:?}")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

fn parsed(what: &str, kind: ParserKind, text: String) -> ParsedFile {
    finishes(what, move || parse(kind, &text))
}

/// `open` repeated to fill half a megabyte, then `close` as often: 1 MB in all.
fn nested(open: &str, close: &str) -> String {
    let n = MB / 2 / open.len();
    format!("{}1{}", open.repeat(n), close.repeat(n))
}

/// The bracket bodies every parser gets: deep lists, maps, parentheses, a mix, and unclosed.
fn bodies() -> Vec<(&'static str, String)> {
    vec![
        ("deep [", nested("[", "]")),
        ("deep {", nested("{", "}")),
        ("deep (", nested("(", ")")),
        ("deep mixed", nested("[{\"a\": (", ")}]")),
        ("unclosed [", "[".repeat(MB)),
        ("unclosed {", "{".repeat(MB)),
        ("unclosed mixed", "[{(".repeat(MB / 3)),
    ]
}

#[test]
fn yaml_deep_flow_nesting_is_refused_quickly() {
    for (what, body) in bodies() {
        if what == "deep (" {
            continue; // parentheses are not YAML brackets (see below)
        }
        let p = parsed(
            what,
            ParserKind::Yaml,
            format!("version: 1.0.0\nexecutor_id: {body}\n"),
        );
        assert_eq!(p.metadata.version(), None, "{what}: metadata stays empty");
        assert_eq!(p.problems.len(), 1, "{what}: {:?}", p.problems);
        let problem = &p.problems[0];
        assert!(
            problem
                .message
                .contains("nested deeper than 128 levels at line 2"),
            "{what}: {problem:?}"
        );
        // The span points at the bracket that went one level too deep (the key is one level).
        if !what.contains("mixed") {
            assert_eq!(problem.span.start as usize, 28 + 127, "{what}");
        }
    }
}

#[test]
fn yaml_parens_are_a_long_plain_scalar() {
    let body = nested("(", ")");
    let p = parsed(
        "parens",
        ParserKind::Yaml,
        format!("version: 1.0.0\nexecutor_id: {body}\n"),
    );
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(
        p.metadata.executor_id().map(|e| e.value.to_json()),
        Some(serde_json::Value::String(body))
    );
}

#[test]
fn yaml_deep_block_nesting_is_refused() {
    // About 1 MB: each level one space deeper than the last.
    let mut text = String::from("version: 1.0.0\n");
    let mut depth = 0;
    while text.len() < MB {
        text.push_str(&" ".repeat(depth));
        text.push_str("k:\n");
        depth += 1;
    }
    let p = parsed("deep block", ParserKind::Yaml, text);
    assert_eq!(p.metadata.version(), None);
    assert!(
        p.problems[0].message.contains("nested deeper than 128"),
        "{:?}",
        p.problems
    );
    // Just under the limit still parses.
    let mut ok = String::from("version: 1.0.0\n");
    for d in 0..100 {
        ok.push_str(&format!("{}k{d}:\n", " ".repeat(d)));
    }
    let p = parsed("block depth 100", ParserKind::Yaml, ok);
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert!(p.metadata.version().is_some());
}

#[test]
fn yaml_long_lines_many_keys_and_brackets_in_strings_are_read() {
    let long = "x".repeat(MB);
    let p = parsed(
        "long line",
        ParserKind::Yaml,
        format!("version: 1.0.0\ndescription: \"{long}\"\n"),
    );
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(
        p.metadata.tool_description().map(|d| d.value.to_json()),
        Some(serde_json::Value::String(long))
    );

    let mut many = String::from("version: 1.0.0\n");
    let mut i = 0;
    while many.len() < MB {
        many.push_str(&format!("key_{i}: [{i}, {{a: {i}}}]\n"));
        i += 1;
    }
    many.push_str("executor_id: rye/core/primitives/subprocess\n");
    let p = parsed("many keys", ParserKind::Yaml, many);
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert!(p.metadata.executor_id().is_some());

    // 1 MB of brackets inside quoted and block scalars and comments: text, not nesting.
    let brackets = "[{".repeat(MB / 8);
    let text = format!(
        "version: 1.0.0\ndescription: '{brackets}'\n# {brackets}\nconfig:\n  script: |\n    {brackets}\n"
    );
    let p = parsed("brackets in scalars", ParserKind::Yaml, text);
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert!(p.metadata.config().is_some());
}

#[test]
fn yaml_alias_expansion_is_bounded() {
    // Billion laughs: nine levels of ten aliases each would expand to 10^9 strings.
    let mut text = String::from(
        "version: 1.0.0\na0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for level in 1..10 {
        let prev = format!("*a{}", level - 1);
        let items = [prev.as_str(); 10].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
    }
    // Under keys that feed no field the aliases are never expanded (PyYAML, which shares
    // aliased nodes, reads this file too): the header is read.
    let p = parsed(
        "billion laughs, unread keys",
        ParserKind::Yaml,
        text.clone(),
    );
    assert_eq!(
        p.metadata.version().map(|v| v.value.clone()),
        Some(Value::Str("1.0.0".into()))
    );
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    // Under a metadata key every alias is expanded, so serde_yaml's repetition limit refuses it.
    text.push_str("config: {bomb: *a9}\n");
    let p = parsed("billion laughs in config", ParserKind::Yaml, text);
    assert_eq!(p.metadata.version(), None);
    assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
    assert!(
        p.problems[0].message.contains("repetition limit exceeded"),
        "{:?}",
        p.problems
    );
    // The shared guard path reports the same refusal.
    let doc =
        "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n";
    assert!(yaml_from_str::<serde_yaml::Value>(doc).is_ok());
}

#[test]
fn python_js_and_shell_parsers_finish_on_deep_brackets() {
    for (what, body) in bodies() {
        // `(((1)))` is just 1 in Python and JavaScript.
        let parens = what == "deep (";
        let py = parsed(
            what,
            ParserKind::PythonAst,
            format!("__version__ = '1.0.0'\nCONFIG = {body}\n"),
        );
        // Python refuses any bracket nesting this deep before parsing (even `(((1)))`, which is
        // just 1): ruff's parser slows down with the depth.
        assert_eq!(py.metadata.config(), None, "python {what}");
        assert_eq!(py.problems.len(), 1, "python {what}: {:?}", py.problems);
        assert!(
            py.problems[0].message.contains("nested deeper"),
            "python {what}: {:?}",
            py.problems
        );

        let js = parsed(
            what,
            ParserKind::JavaScript,
            format!("export const __version__ = '1.0.0';\nexport const CONFIG = {body};\n"),
        );
        if !parens {
            assert_eq!(js.metadata.config(), None, "js {what}");
        }

        let sh = parsed(
            what,
            ParserKind::Shell,
            format!("__version__=1.0.0\nCONFIG='{body}'\n"),
        );
        assert_eq!(sh.metadata.config(), None, "shell {what}");
        assert_eq!(
            sh.metadata.version().map(|v| v.value.to_json()),
            Some(serde_json::json!("1.0.0")),
            "shell {what}"
        );
    }
}

#[test]
fn python_js_and_shell_parsers_finish_on_long_lines_and_many_names() {
    let long = "x".repeat(MB);
    let py = parsed(
        "python long line",
        ParserKind::PythonAst,
        format!("__tool_description__ = \"{long}\"\n"),
    );
    assert!(py.problems.is_empty() && py.metadata.tool_description().is_some());
    let js = parsed(
        "js long line",
        ParserKind::JavaScript,
        format!("export const __tool_description__ = \"{long}\";\n"),
    );
    assert!(js.problems.is_empty() && js.metadata.tool_description().is_some());
    let sh = parsed(
        "shell long line",
        ParserKind::Shell,
        format!("__tool_description__=\"{long}\"\n"),
    );
    assert!(sh.problems.is_empty() && sh.metadata.tool_description().is_some());

    type Line = fn(usize) -> String;
    let lines: [(ParserKind, Line); 3] = [
        (ParserKind::PythonAst, |i| {
            format!("NAME_{i} = [{i}, {{'a': {i}}}]\n")
        }),
        (ParserKind::JavaScript, |i| {
            format!("export const NAME_{i} = [{i}, {{a: {i}}}];\n")
        }),
        (ParserKind::Shell, |i| format!("NAME_{i}='[{i}]'\n")),
    ];
    for (kind, line) in lines {
        let mut text = String::new();
        let mut i = 0;
        while text.len() < MB {
            text.push_str(&line(i));
            i += 1;
        }
        let p = parsed(kind.name(), kind, text);
        assert!(p.problems.is_empty(), "{}: {:?}", kind.name(), p.problems);
    }
}

#[test]
fn the_guard_covers_config_files_and_is_linear() {
    // A config file behind the guard: an invalid-config problem, not a 20 s parse.
    let deep = format!("lint: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let fixture = format!(
        "//- /project/.ai/config/ryechain.yaml\n{deep}//- /project/.ai/tools/a.py\n__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n"
    );
    let findings = finishes("deep config lint", move || {
        lint(&host(&fixture).snapshot(), &LintOptions::default(), &|_| {}).findings
    });
    assert!(
        findings
            .iter()
            .any(|f| &*f.rule == "invalid-config"
                && f.message.contains("nested deeper than 128 levels")),
        "{findings:#?}"
    );

    // The guard itself on 8 MB of brackets.
    let err = finishes("guard on 8 MB", || {
        check_yaml_nesting(&"[".repeat(8 * MB)).unwrap_err()
    });
    assert_eq!(err.offset, 128);
    let err = finishes("yaml_from_str", || {
        yaml_from_str::<serde_yaml::Value>(&"{".repeat(MB)).unwrap_err()
    });
    assert!(matches!(err, YamlError::TooDeep(_)));
}

/// A header's start is its first field's (`Metadata::header_start`, which counts the spans of
/// the header from there): no span inside a field's value comes before the field's own, on
/// every header file of the repository and on the hostile shapes' survivors.
#[test]
fn a_field_span_starts_before_every_span_inside_it() {
    let mut checked = 0;
    for (ext, kind) in [
        ("py", ParserKind::PythonAst),
        ("yaml", ParserKind::Yaml),
        ("yml", ParserKind::Yaml),
        ("js", ParserKind::JavaScript),
        ("sh", ParserKind::Shell),
    ] {
        for path in ryechain::testing::repository_files(&[ext]) {
            #[allow(
                clippy::disallowed_methods,
                reason = "the test reads the repository's files"
            )]
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let parsed = parse(kind, &text);
            assert_eq!(
                parsed.metadata.header_start(),
                parsed.metadata.first_span_start(),
                "{}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} files checked");
}
