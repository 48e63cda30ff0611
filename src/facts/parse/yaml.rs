//! The `yaml/yaml` metadata parser (§2.4): top-level keys of a `.yaml`/`.yml` file, with spans.
//!
//! One parse: libyaml's events with their marks (`yaml_events`) are built into spanned values
//! (`yaml_load`), by serde_yaml's rules (duplicate keys are kept, later wins, as with Python's
//! `safe_load`; integers beyond 64 bits become floats; tags are dropped in favour of the tagged
//! value; `<<` merge keys are applied, explicit keys win). A key spans its written text, a
//! scalar value its text (quotes included), a flow collection its brackets, a block collection
//! its first entry to the end of its last; a value reached through an alias spans the alias.
//!
//! Decisions: an empty document (empty file, only comments) is empty metadata without a
//! problem; a document that is not a mapping is empty metadata plus a problem; a syntax error is
//! empty metadata plus a problem at the error's byte offset. Multi-document streams: the first
//! document is read; if a later document holds anything (or is malformed) a problem is reported,
//! because the reference `safe_load` refuses such a stream. A leading `# rye:signed:…` line is
//! an ordinary YAML comment.

use super::yaml_load::{Converter, Entry, Loaded, kind_of};
use super::yaml_node::{LoadError, Rest, YAML_FIELDS};
use super::{Fields, MAX_NESTING, MAX_TEXT_LEN, ceil_boundary, clamp_span};
use crate::model::{ParseProblem, ParsedFile, Span};

/// Read the metadata header of a YAML file (§2.4). Never panics.
pub fn parse_yaml(text: &str) -> ParsedFile {
    if text.len() > MAX_TEXT_LEN {
        return super::too_large("YAML");
    }
    match entries(text) {
        Ok((entries, problems)) => {
            let mut fields = Fields::new(&YAML_FIELDS);
            for (key, value) in entries {
                fields.insert(&key.value, value);
            }
            ParsedFile {
                metadata: fields.metadata(),
                problems,
            }
        }
        Err(problems) => ParsedFile {
            metadata: Default::default(),
            problems,
        },
    }
}

/// The top-level entries of the first document with their spans and the problems met, or only
/// problems when the document holds no mapping to read (empty, not a mapping, refused).
pub(super) fn entries(text: &str) -> Result<(Vec<Entry>, Vec<ParseProblem>), Vec<ParseProblem>> {
    let mut problems = Vec::new();
    // libyaml mis-reads every line after the first when the text starts with a BOM, so the
    // BOM is cut off here and offsets are shifted back by its length.
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let body = &text[bom..];
    let loaded = super::yaml_load::load(body);
    // Deep nesting is refused before libyaml's full scan, which is quadratic in it (`guard`).
    // The loader stops by itself past `MAX_NESTING` (libyaml's look-ahead is bounded), so the
    // guard runs only when the load failed or came near the limit: then its verdict is the one
    // the file always got.
    let guard_needed = match &loaded {
        Loaded::Stream { max_depth, .. } => *max_depth > MAX_NESTING / 2,
        Loaded::Failed { .. } => true,
    };
    if guard_needed && let Err(deep) = super::guard::check_yaml_nesting(text) {
        let at = super::floor_boundary(text, deep.offset);
        problems.push(ParseProblem {
            span: clamp_span(text, at, at + 1),
            message: deep.to_string(),
        });
        return Err(problems);
    }
    let (first, rest, rest_at) = match loaded {
        Loaded::Failed { error, .. } => {
            problems.push(syntax_problem(text, bom, &error));
            return Err(problems);
        }
        Loaded::Stream {
            first,
            rest,
            rest_at,
            ..
        } => (first, rest, rest_at),
    };
    let mut convert = Converter::new(body, bom, first.events);
    match rest {
        Rest::Nothing => {}
        Rest::MoreContent => {
            let (start, end) = rest_at.unwrap_or((0, 0));
            problems.push(ParseProblem {
                span: first_line(text, convert.span(start, end)),
                message: "the YAML file holds more than one document; only the first is read"
                    .to_owned(),
            });
        }
        Rest::Error(e) => problems.push(syntax_problem(text, bom, &e)),
    }
    let Some(root) = first.root.as_ref() else {
        return Err(problems);
    };
    let entries = match convert.root_entries(root) {
        Ok(Some(entries)) => entries,
        Ok(None) => {
            match convert.root(Some(root)) {
                Ok(Some(v)) if !matches!(v.value, crate::model::Value::Null) => {
                    problems.push(ParseProblem {
                        span: first_line(text, v.span),
                        message: format!(
                            "YAML document is not a mapping (it is a {}); no metadata read",
                            kind_of(&v.value)
                        ),
                    });
                }
                Ok(_) => {}
                Err(e) => problems.push(syntax_problem(text, bom, &e)),
            }
            return Err(problems);
        }
        Err(e) => {
            problems.push(syntax_problem(text, bom, &e));
            return Err(problems);
        }
    };
    for (span, kind) in convert.complex_keys.drain(..) {
        problems.push(ParseProblem {
            span,
            message: format!("YAML mapping key is a {kind}, not a scalar; entry ignored"),
        });
    }
    Ok((entries, problems))
}

/// `span` cut at the end of its first line (a document-level problem points at one line).
fn first_line(text: &str, span: Span) -> Span {
    let s = span.start as usize;
    let line_end = text[s..]
        .find(['\n', '\r'])
        .map_or(text.len(), |i| s + i)
        .min(span.end as usize);
    clamp_span(text, s, line_end.max(s))
}

/// A problem for a load error; its location is a byte index into `text[base..]`.
fn syntax_problem(text: &str, base: usize, e: &LoadError) -> ParseProblem {
    let span = match e.index {
        Some(index) => {
            let at = super::floor_boundary(text, base.saturating_add(index));
            let next = ceil_boundary(text, at + 1);
            // Point at the offending character unless it is a line break (or the end).
            match text.get(at..next) {
                Some(c) if !c.is_empty() && c != "\n" && c != "\r" => clamp_span(text, at, next),
                _ => clamp_span(text, at, at),
            }
        }
        None => Span::empty(0),
    };
    ParseProblem {
        span,
        message: format!("YAML syntax error: {}", e.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{F64, Value};

    fn slice(text: &str, span: Span) -> &str {
        &text[span.range()]
    }

    fn line_of(text: &str, offset: u32) -> usize {
        text[..offset as usize].matches('\n').count() + 1
    }

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    const TOOL: &str = "# rye:signed:2025-01-01T00:00:00Z:abc123:def456:fp\nversion: \"1.0.0\"   # the version\ntool_type: runtime\nexecutor_id: rye/core/primitives/subprocess\ncategory: rye/core/runtimes\ndescription: Runs python scripts\nenv_config:\n  interpreter:\n    type: local_binary\n    binaries:\n      - python\n      - python3\n    search_paths: [\".venv/bin\", \".venv/Scripts\"]\n  env:\n    PYTHONUNBUFFERED: \"1\"\nconfig:\n  command: \"${RYE_PYTHON}\"\n  args:\n  - \"{tool_path}\"\n  - --project-path\n  timeout: 300\ninputs:\n  - name: path\n    type: string\n  - name: mode\n    type: string\nanchor: {enabled: true, mode: auto}\nverify_deps: ~\nconfig_resolve:\n  path: runtimes/python.yaml\n  mode: merge\nchild_constraints:\n  rye/x/y:\n    min_version: 1.0.0\n";

    #[test]
    fn reads_keys_with_line_spans() {
        let p = parse_yaml(TOOL);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = &p.metadata;
        let v = m.version().unwrap();
        assert_eq!(v.value, s("1.0.0"));
        assert_eq!(slice(TOOL, v.span), "\"1.0.0\"");
        assert_eq!(line_of(TOOL, v.span.start), 2);
        let t = m.tool_type().unwrap();
        assert_eq!(
            (slice(TOOL, t.span), line_of(TOOL, t.span.start)),
            ("runtime", 3)
        );
        let e = m.executor_id().unwrap();
        assert_eq!(slice(TOOL, e.span), "rye/core/primitives/subprocess");
        assert_eq!(m.category().unwrap().value, s("rye/core/runtimes"));
        assert_eq!(
            m.tool_description().unwrap().value,
            s("Runs python scripts")
        );

        let env = m.env_config().unwrap();
        // A block value spans its first entry to the end of its last.
        assert!(slice(TOOL, env.span).starts_with("interpreter:\n    type: local_binary"));
        assert!(slice(TOOL, env.span).ends_with("PYTHONUNBUFFERED: \"1\""));
        assert_eq!(line_of(TOOL, env.span.start), 8);
        let interp = env.value.get("interpreter").unwrap();
        assert_eq!(line_of(TOOL, interp.span.start), 9);
        let kind = interp.value.get("type").unwrap();
        assert_eq!(slice(TOOL, kind.span), "local_binary");
        let bins = interp
            .value
            .get("binaries")
            .unwrap()
            .value
            .as_list()
            .unwrap();
        assert_eq!(slice(TOOL, bins[1].span), "python3");
        assert_eq!(line_of(TOOL, bins[1].span.start), 12);
        let search = interp.value.get("search_paths").unwrap();
        assert_eq!(
            search.value.to_json(),
            serde_json::json!([".venv/bin", ".venv/Scripts"])
        );
        // A flow collection spans its brackets, its items their own text.
        assert_eq!(
            slice(TOOL, search.span),
            "[\".venv/bin\", \".venv/Scripts\"]"
        );
        assert_eq!(
            slice(TOOL, search.value.as_list().unwrap()[1].span),
            "\".venv/Scripts\""
        );
        let map = env.value.as_map().unwrap();
        assert_eq!(slice(TOOL, map[1].0.span), "env");
        assert_eq!(
            slice(
                TOOL,
                env.value
                    .get("env")
                    .unwrap()
                    .value
                    .get("PYTHONUNBUFFERED")
                    .unwrap()
                    .span
            ),
            "\"1\""
        );

        let cfg = m.config().unwrap();
        let args = cfg.value.get("args").unwrap();
        let items = args.value.as_list().unwrap();
        assert_eq!(slice(TOOL, items[0].span), "\"{tool_path}\"");
        assert_eq!(slice(TOOL, items[1].span), "--project-path");
        assert_eq!(cfg.value.get("timeout").unwrap().value, Value::Int(300));
        assert_eq!(
            line_of(TOOL, cfg.value.get("timeout").unwrap().span.start),
            21
        );

        let inputs = m.inputs().unwrap();
        let items = inputs.value.as_list().unwrap();
        assert_eq!(line_of(TOOL, items[1].span.start), 25);
        let ty = items[1].value.get("type").unwrap();
        assert_eq!(
            (slice(TOOL, ty.span), line_of(TOOL, ty.span.start)),
            ("string", 26)
        );
        assert_eq!(m.input_names(), vec!["mode", "path"]);

        let anchor = m.anchor().unwrap();
        assert_eq!(slice(TOOL, anchor.span), "{enabled: true, mode: auto}");
        assert_eq!(
            anchor.value.get("enabled").unwrap().value,
            Value::Bool(true)
        );
        assert_eq!(m.verify_deps().unwrap().value, Value::Null);
        assert_eq!(
            m.config_resolve()
                .as_ref()
                .unwrap()
                .value
                .get("mode")
                .unwrap()
                .value,
            s("merge")
        );
        let cc = m.constraint_for("rye/x/y").unwrap();
        assert_eq!(cc.min_version.as_ref().unwrap().value, "1.0.0");
        assert_eq!(line_of(TOOL, cc.min_version.unwrap().span.start), 34);
    }

    #[test]
    fn scalars_and_tags() {
        let text = "config:\n  i: -12\n  f: 2.5\n  big: 123456789012345678901234567890\n  inf: .inf\n  t: yes_not_bool\n  b: false\n  n: null\n  tilde: ~\n  tagged: !custom {x: 1}\n  str_tag: !!str 12\n  hex: 0x1F\n  block: |\n    line one\n    line two\n  folded: >-\n    a\n    b\n  1: int key\n  true: bool key\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap().value.clone();
        let get = |k: &str| cfg.get(k).unwrap().value.clone();
        assert_eq!(get("i"), Value::Int(-12));
        assert_eq!(get("f"), Value::Float(F64(2.5)));
        assert_eq!(get("big"), Value::Float(F64(1.2345678901234568e29)));
        assert_eq!(get("inf"), Value::Float(F64(f64::INFINITY)));
        assert_eq!(get("t"), s("yes_not_bool"));
        assert_eq!(get("b"), Value::Bool(false));
        assert_eq!(get("n"), Value::Null);
        assert_eq!(get("tilde"), Value::Null);
        assert_eq!(get("tagged").to_json(), serde_json::json!({"x": 1}));
        assert_eq!(get("str_tag"), s("12"));
        assert_eq!(get("hex"), Value::Int(31));
        assert_eq!(get("block"), s("line one\nline two\n"));
        assert_eq!(get("folded"), s("a b"));
        assert_eq!(get("1"), s("int key"));
        assert_eq!(get("true"), s("bool key"));
        let block = cfg.get("block").unwrap();
        assert_eq!(slice(text, block.span), "|\n    line one\n    line two");
    }

    #[test]
    fn duplicate_keys_later_wins_and_merge_keys() {
        let text = "version: 0.1.0\nversion: 0.2.0\nbase: &base\n  command: python\n  timeout: 10\nconfig:\n  <<: *base\n  timeout: 20\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let v = p.metadata.version().unwrap();
        assert_eq!(v.value, s("0.2.0"));
        assert_eq!(line_of(text, v.span.start), 2);
        let cfg = p.metadata.config().unwrap();
        assert_eq!(cfg.value.get("command").unwrap().value, s("python"));
        assert_eq!(cfg.value.get("timeout").unwrap().value, Value::Int(20));
        assert_eq!(
            line_of(text, cfg.value.get("timeout").unwrap().span.start),
            8
        );
    }

    #[test]
    fn quoted_keys_and_compact_sequences() {
        let text = "\"version\": '2.0.0'\n'outputs':\n- a\n- b\ninputs: [x, y]\n";
        let p = parse_yaml(text);
        let m = p.metadata;
        assert_eq!(slice(text, m.version().unwrap().span), "'2.0.0'");
        let outs = m.outputs().unwrap();
        let items = outs.value.as_list().unwrap();
        assert_eq!(line_of(text, items[1].span.start), 4);
        assert_eq!(slice(text, items[1].span), "b");
        assert_eq!(
            m.inputs().unwrap().value.to_json(),
            serde_json::json!(["x", "y"])
        );
    }

    #[test]
    fn nested_sequences_and_maps_in_items() {
        let text = "config:\n  matrix:\n    - - 1\n      - 2\n    -\n      name: x\n      deep:\n        - k: v\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let m = p.metadata.config().unwrap();
        let matrix = m
            .value
            .get("matrix")
            .unwrap()
            .value
            .as_list()
            .unwrap()
            .to_vec();
        let inner = matrix[0].value.as_list().unwrap();
        assert_eq!(
            (
                slice(text, inner[1].span),
                line_of(text, inner[1].span.start)
            ),
            ("2", 4)
        );
        let name = matrix[1].value.get("name").unwrap();
        assert_eq!(
            (slice(text, name.span), line_of(text, name.span.start)),
            ("x", 6)
        );
        let deep = matrix[1]
            .value
            .get("deep")
            .unwrap()
            .value
            .as_list()
            .unwrap();
        let k = deep[0].value.get("k").unwrap();
        assert_eq!((slice(text, k.span), line_of(text, k.span.start)), ("v", 8));
    }

    #[test]
    fn syntax_error_location() {
        let text = "version: 1.0.0\nconfig:\n  args: [a, b\n  other: 1\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata, Default::default());
        assert_eq!(p.problems.len(), 1);
        let problem = &p.problems[0];
        assert!(
            problem.message.starts_with("YAML syntax error: "),
            "{}",
            problem.message
        );
        assert_eq!(line_of(text, problem.span.start), 4);

        let text = "é: 1\nkey: 'unterminated\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].span.end as usize <= text.len());

        let text = "a: b: c\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert_eq!(slice(text, p.problems[0].span), ":");
    }

    #[test]
    fn non_mapping_and_empty_documents() {
        for text in ["- a\n- b\n", "just a string\n", "42\n"] {
            let p = parse_yaml(text);
            assert_eq!(p.metadata, Default::default());
            assert_eq!(p.problems.len(), 1, "{text:?}");
            assert!(
                p.problems[0]
                    .message
                    .starts_with("YAML document is not a mapping")
            );
            assert_eq!(p.problems[0].span.start, 0);
        }
        for text in [
            "",
            "\n",
            "# rye:validated:abc\n",
            "---\n",
            "~\n",
            "\u{feff}",
        ] {
            let p = parse_yaml(text);
            assert_eq!(p, ParsedFile::default(), "{text:?}");
        }
    }

    #[test]
    fn signature_line_and_document_markers() {
        let text =
            "# rye:validated:2025:hash\n%YAML 1.2\n---\nversion: 3.0.0\nexecutor_id: null\n---\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let v = p.metadata.version().unwrap();
        assert_eq!(line_of(text, v.span.start), 4);
        assert_eq!(p.metadata.executor_id().unwrap().value, Value::Null);
    }

    #[test]
    fn multi_document_streams() {
        let text = "version: 1.0.0\n---\nversion: 2.0.0\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("more than one document"));
        assert_eq!(slice(text, p.problems[0].span), "---");

        let text = "version: 1.0.0\n---\nbad: [\n";
        let p = parse_yaml(text);
        assert_eq!(p.metadata.version().unwrap().value, s("1.0.0"));
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.starts_with("YAML syntax error"));
    }

    #[test]
    fn crlf_and_bom() {
        let text = "\u{feff}version: 1.0.0\r\nconfig:\r\n  a: x\r\n";
        let p = parse_yaml(text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(slice(text, p.metadata.version().unwrap().span), "1.0.0");
        let a = p.metadata.config().unwrap().value.get("a").unwrap().clone();
        assert_eq!(slice(text, a.span), "x");
    }

    #[test]
    fn bom_error_offsets_point_into_the_text() {
        let text = "\u{feff}a: 1\nb: [\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].span, Span::empty(text.len()));
    }

    #[test]
    fn escaped_keys_get_their_own_spans() {
        let mut text = String::from("config:\n");
        for i in 0..20_000 {
            text.push_str(&format!("  \"k\\x41{i}\": {i}\n"));
        }
        text.push_str("version: 1.0.0\n");
        let p = parse_yaml(&text);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let cfg = p.metadata.config().unwrap();
        let entry = cfg.value.get("kA19999").unwrap();
        assert_eq!(entry.value, Value::Int(19999));
        assert_eq!(slice(&text, entry.span), "19999");
        let (key, _) = cfg.value.as_map().unwrap().last().unwrap();
        assert_eq!(slice(&text, key.span), "\"k\\x4119999\"");
        assert_eq!(slice(&text, p.metadata.version().unwrap().span), "1.0.0");
    }

    #[test]
    fn non_scalar_key_is_reported() {
        let text = "config:\n  ? [1, 2]\n  : x\n  ok: 1\n";
        let p = parse_yaml(text);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("not a scalar"));
        assert_eq!(
            p.metadata.config().unwrap().value.to_json(),
            serde_json::json!({"ok": 1})
        );
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let text = format!("config: {}1{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let p = parse_yaml(&text);
        assert_eq!(p.problems.len(), 1);
        let text = format!("config: {}1{}\n", "[".repeat(100), "]".repeat(100));
        assert!(parse_yaml(&text).metadata.config().is_some());
    }
}
