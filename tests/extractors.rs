//! Extractor facts read from extractor files (§1.5, §1.6): YAML and Python extractors, union and
//! first-appearance order, parsers map, unknown parser names.

use ryechain::parse::ParserKind;
use ryechain::resolve::{extractor_config, metadata, tool_files};
use ryechain::testing::host;

/// §1.5: `EXTENSIONS` in a `*_extractor.py` adds tool extensions (union, first-appearance
/// order) and `PARSERS` maps them; the last assignment of a name wins, as in Python.
#[test]
fn python_extractor_adds_extensions_and_parsers() {
    let host = host(
        r#"
//- /project/.ai/tools/rye/core/extractors/tool/tool_extractor.py
EXTENSIONS = [".old"]
EXTENSIONS = [
".rb",  # a comment
"pyi",
]
PARSERS = {".rb": "python/ast", ".pyi": 'python/' 'ast', ".zz": "nope/nope"}
//- /project/.ai/tools/util/hello.rb
__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/script"
"#,
    );
    let db = host.snapshot();
    let cfg = extractor_config(&db);
    assert_eq!(
        cfg.extension_rank(".rb"),
        Some(0),
        "project extractor first"
    );
    assert_eq!(cfg.extension_rank(".pyi"), Some(1), "`pyi` gains its dot");
    assert!(
        !cfg.has_extension(".old"),
        "a reassigned name keeps its last value"
    );
    assert!(
        cfg.has_extension(".yaml"),
        "the bundle's list is still unioned"
    );
    assert_eq!(cfg.parser_for(".rb"), Some(ParserKind::PythonAst));
    assert_eq!(cfg.parser_for(".pyi"), Some(ParserKind::PythonAst));
    assert_eq!(cfg.problems.len(), 1, "{:?}", cfg.problems);
    assert!(cfg.problems[0].1.contains("unknown parser `nope/nope`"));
    let tools: Vec<&str> = tool_files(&db)
        .iter()
        .map(|f| f.rel(&db).as_ref())
        .filter(|r| r.ends_with(".rb"))
        .collect();
    assert_eq!(tools, ["tools/util/hello.rb"]);
    let meta = metadata(
        &db,
        tool_files(&db)
            .iter()
            .copied()
            .find(|f| f.rel(&db).ends_with(".rb"))
            .unwrap(),
    );
    assert_eq!(meta.version_str().map(|s| s.value), Some("1.0.0"));
}

/// A Python extractor with a syntax error still contributes what could be read.
#[test]
fn broken_python_extractor_keeps_readable_values() {
    let host = host(
        r#"
//- /project/.ai/tools/rye/core/extractors/tool/tool_extractor.py
EXTENSIONS = [".rb"]
def broken(:
"#,
    );
    let db = host.snapshot();
    assert!(extractor_config(&db).has_extension(".rb"));
}
