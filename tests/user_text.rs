//! Text users read speaks their language (DESIGN.md, issue 8 item 6): no spec section numbers
//! (`§1.7`) in rule files, in the `--help` of any subcommand, or in string literals of the
//! sources (comments and tests may cite sections); no doubled phrases in unreadable-file texts.
#![allow(
    clippy::disallowed_methods,
    reason = "the test reads the rule files and sources and runs the binary"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ryechain::db::FileContents;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_with(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Every string of a YAML document with the key path that leads to it.
fn yaml_strings(v: &serde_yaml::Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_yaml::Value::String(s) => out.push((at.to_owned(), s.clone())),
        serde_yaml::Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                yaml_strings(item, &format!("{at}[{i}]"), out);
            }
        }
        serde_yaml::Value::Mapping(m) => {
            for (k, item) in m {
                let key = k.as_str().unwrap_or("?");
                yaml_strings(item, &format!("{at}.{key}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn rule_files_cite_no_spec_sections() {
    let mut files = Vec::new();
    files_with(&root().join("rules"), "yaml", &mut files);
    assert!(files.len() > 20, "rule files not found");
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        let doc: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let mut strings = Vec::new();
        yaml_strings(&doc, "", &mut strings);
        for (at, s) in strings {
            if s.contains('§') {
                found.push(format!("{rel}{at}: {s}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "spec sections in rule texts:\n{}",
        found.join("\n")
    );
}

fn help_of(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ryechain"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?} --help");
    String::from_utf8(o.stdout).unwrap()
}

/// The subcommand names of a `Commands:` section of clap's help.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_of_every_subcommand_cites_no_spec_sections() {
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    let mut found = Vec::new();
    while let Some(path) = queue.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let help = help_of(&args);
        seen += 1;
        for line in help.lines().filter(|l| l.contains('§')) {
            found.push(format!("ryechain {} --help: {line}", args.join(" ")));
        }
        for sub in subcommands(&help) {
            let mut next = path.clone();
            next.push(sub);
            queue.push(next);
        }
    }
    // lint, chain, rules, rule, lock, graph, keys (+4), sign, exec, verify, completions, man.
    assert!(seen >= 17, "only {seen} help pages found");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The string literals of Rust source, without comments and without `#[cfg(test)]` modules.
fn string_literals(src: &str) -> Vec<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or(src);
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            // A char literal such as '"' (lifetimes have no closing quote two or three ahead).
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 3,
            '\'' if chars.get(i + 1) == Some(&'\\') && chars.get(i + 3) == Some(&'\'') => i += 4,
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !chars[i - 1].is_alphanumeric() && chars[i - 1] != '_') =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let rest: String = chars[j + 1..].iter().collect();
                let end = rest.find(&close).unwrap_or(rest.len());
                out.push(rest[..end].to_owned());
                i = j + 1 + rest[..end].chars().count() + close.chars().count();
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        s.push(chars[i]);
                        i += 1;
                    }
                    if i < chars.len() {
                        s.push(chars[i]);
                    }
                    i += 1;
                }
                out.push(s);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn the_literal_scanner_skips_comments_and_tests() {
    let src = "// §1 comment\n/// doc §2\nlet a = \"x §3\"; /* §4 */ let c = '\"'; let r = r#\"raw §5\"#;\n#[cfg(test)]\nmod tests { \"§6\" }\n";
    assert_eq!(string_literals(src), vec!["x §3", "raw §5"]);
}

#[test]
fn source_string_literals_cite_no_spec_sections() {
    let mut files = Vec::new();
    files_with(&root().join("src"), "rs", &mut files);
    let mut found = Vec::new();
    let mut literals = 0;
    for f in files {
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        let src = std::fs::read_to_string(&f).unwrap();
        for lit in string_literals(&src) {
            literals += 1;
            if lit.contains('§') {
                found.push(format!("{rel}: \"{lit}\""));
            }
        }
    }
    assert!(literals > 1000, "only {literals} literals found");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The reasons of `FileContents::problem` follow "cannot be read: " without repeating it.
#[test]
fn unreadable_file_reasons_do_not_repeat_the_sentence() {
    let cases = [
        FileContents::NotUtf8 { valid_up_to: 3 },
        FileContents::TooLarge { size: 10, limit: 5 },
        FileContents::Unreadable("Permission denied (os error 13)".to_owned()),
        FileContents::SymlinkEscape {
            target: "/elsewhere".to_owned(),
        },
    ];
    for c in cases {
        let reason = c.problem().unwrap();
        let text = format!("Cannot read this file: {reason}");
        assert!(
            !reason.contains("cannot be read") && !reason.starts_with("the file"),
            "{text}"
        );
    }
    assert_eq!(
        FileContents::Unreadable("Permission denied (os error 13)".to_owned()).problem(),
        Some("Permission denied (os error 13)".to_owned())
    );
    assert_eq!(FileContents::Text("x".into()).problem(), None);
}
