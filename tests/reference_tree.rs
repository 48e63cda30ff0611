//! Trees written for the Python reference lint as they are (issue 3 item 9): flat runtime ids
//! (§13), primitives present as YAML files, an extractor without a `parsers:` map (built-in
//! parser per extension, §1.6), and `rye:validated` / `rye:signed` first lines (§10.1).

use ryechain::analysis::chain_view::chain_of;
use ryechain::analysis::{LintOptions, lint};
use ryechain::db::Settings;
use ryechain::parse::ParserKind;
use ryechain::resolve::{extractor_config, metadata, tool_files};
use ryechain::testing::{host, host_with};

/// A reference-era system bundle (files shaped as [R] ships them) plus a project using it.
const REFERENCE_TREE: &str = r#"
//- /system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml
# rye:signed:2025-01-01T00:00:00Z:0000000000000000000000000000000000000000000000000000000000000000:c2lnbmF0dXJl:0123456789abcdef
name: tool_extractor
version: "1.0.0"
tool_type: extractor
executor_id: null
extensions: [".py", ".yaml", ".yml", ".json", ".js", ".sh", ".toml"]
parser: python_ast
//- /system/.ai/tools/rye/core/primitives/subprocess.yaml
# rye:signed:2025-01-01T00:00:00Z:1111111111111111111111111111111111111111111111111111111111111111:c2lnbmF0dXJl:0123456789abcdef
name: subprocess
version: "1.0.1"
tool_type: primitive
executor_id: null
config_schema:
  type: object
  properties:
    command: {type: string}
    args: {type: array}
//- /system/.ai/tools/rye/core/primitives/http_client.yaml
name: http_client
version: "1.0.0"
tool_type: primitive
executor_id: null
//- /system/.ai/tools/rye/core/runtimes/python_script_runtime.yaml
# rye:validated:2025-01-01T00:00:00Z:placeholder
name: python_script_runtime
version: "2.0.0"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
env_config:
  interpreter:
    type: venv_python
    var: RYE_PYTHON
    fallback: python3
config:
  command: "${RYE_PYTHON}"
  args: ["{tool_path}", "--params", "{params_json}"]
  timeout: 300
//- /system/.ai/tools/rye/core/runtimes/bash_runtime.yaml
# rye:signed:placeholder
name: bash_runtime
version: "1.0.0"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
config:
  command: /bin/bash
//- /project/.ai/tools/acme/hello.py
# rye:validated:2025-01-01T00:00:00Z:abc
"""Say hello."""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python_script_runtime"
__category__ = "acme"
__tool_description__ = "Say hello"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
}


def main():
    print("hello")
//- /project/.ai/tools/acme/fetch.yaml
# rye:validated:2025-01-01T00:00:00Z:abc
name: fetch
version: "1.0.0"
tool_type: http
executor_id: rye/core/primitives/http_client
config:
  method: GET
  url: https://example.com
"#;

#[test]
fn reference_tree_lints_clean_with_the_reference_chains() {
    // Resolution, chains and validation: clean. (Integrity is checked below.)
    let host = host_with(
        REFERENCE_TREE,
        Settings {
            ignore: vec!["integrity".to_owned()],
            ..Settings::default()
        },
    );
    let db = host.snapshot();

    let report = lint(&db, &LintOptions::default(), &|_| {});
    assert!(
        report.findings.is_empty(),
        "a reference tree is clean: {:#?}",
        report.findings
    );
    assert_eq!(report.internal_errors, 0);

    // §3: tool → flat-id runtime → primitive file, exactly as the reference builds it.
    let view = chain_of(&db, "acme/hello");
    assert_eq!(view.error, None);
    let ids: Vec<&str> = view.elements.iter().map(|e| e.item_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "acme/hello",
            "rye/core/runtimes/python_script_runtime",
            "rye/core/primitives/subprocess"
        ]
    );
    assert_eq!(view.elements[1].space, "system:fixture");
    assert!(view.elements[2].primitive);
    assert!(
        view.elements[2].path.is_some(),
        "the primitive resolves to its YAML file"
    );
    assert!(view.validation.valid, "{:?}", view.validation);

    let view = chain_of(&db, "acme/fetch");
    let ids: Vec<&str> = view.elements.iter().map(|e| e.item_id.as_str()).collect();
    assert_eq!(ids, ["acme/fetch", "rye/core/primitives/http_client"]);
    assert!(view.validation.valid);
}

#[test]
fn extractor_without_parsers_map_falls_back_to_builtin_parsers() {
    let host = host(REFERENCE_TREE);
    let db = host.snapshot();
    let cfg = extractor_config(&db);
    assert!(cfg.parsers.is_empty(), "no `parsers:` map in this bundle");
    assert!(cfg.problems.is_empty(), "{:?}", cfg.problems);
    let exts: Vec<&str> = cfg.extensions.iter().map(|e| e.as_ref()).collect();
    assert_eq!(
        exts,
        [".py", ".yaml", ".yml", ".json", ".js", ".sh", ".toml"],
        "the reference list, in file order"
    );
    assert_eq!(cfg.parser_for(".py"), Some(ParserKind::PythonAst));
    assert_eq!(cfg.parser_for(".yaml"), Some(ParserKind::Yaml));

    // The `rye:validated` first line is a comment to both parsers: metadata is read in full.
    for f in tool_files(&db).iter().copied() {
        if f.rel(&db).starts_with("tools/acme/") {
            let meta = metadata(&db, f);
            assert_eq!(
                meta.version_str().map(|s| s.value),
                Some("1.0.0"),
                "{}",
                f.rel(&db)
            );
            assert!(meta.executor_id().is_some(), "{}", f.rel(&db));
        }
    }
}

/// §10.1 / §14.33: placeholder and legacy lines are unsigned to the reference; ryechain says which
/// are legacy placeholders and which are `rye:signed:` lines that do not parse; made-up hashes fail.
#[test]
fn reference_placeholders_are_unsigned_or_malformed() {
    let host = host_with(
        REFERENCE_TREE,
        Settings {
            select: Some(vec!["integrity".to_owned()]),
            ..Settings::default()
        },
    );
    let report = lint(&host.snapshot(), &LintOptions::default(), &|_| {});
    let mut got: Vec<(String, String)> = report
        .findings
        .iter()
        .map(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_owned();
            (name, f.rule.to_string())
        })
        .collect();
    got.sort();
    let want = [
        ("bash_runtime.yaml", "malformed-signature"),
        ("fetch.yaml", "unsigned-item"),
        ("hello.py", "unsigned-item"),
        ("http_client.yaml", "unsigned-item"),
        ("python_script_runtime.yaml", "unsigned-item"),
        ("subprocess.yaml", "content-hash-mismatch"),
        ("tool_extractor.yaml", "content-hash-mismatch"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    assert_eq!(got, want);
}
