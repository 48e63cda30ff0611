//! L4 checks: the code behind each check kind, run by three tracked queries — `file_diagnostics`
//! (one file), `chain_diagnostics` (the edge a tool owns and the chain rooted at it) and
//! `graph_diagnostics` (cycles, once each). Diagnostics are returned values, never accumulated.

use std::sync::Arc;

use super::{Check, Rule, Site, of_kind};
use crate::db::{Db, FileContents, SourceFile};
use crate::diagnostic::{Diagnostic, Note, Suggestions};
use crate::model::{ExecutorRef, Span, Spanned, Value};
use crate::resolve::Chain;
use crate::resolve::graph::executor_graph;
use crate::resolve::{
    ChainEnd, Element, extractor_config, header_base, metadata, parse_file, resolve, run_facts,
    space_index, tool_id_ref, walk_chain,
};
use crate::rules::validate::{Link, VersionVerdict, check_pair, py_list, space_ok_under};

fn note(message: String, path: Option<&Arc<std::path::PathBuf>>, span: Option<Span>) -> Note {
    Note {
        message,
        path: path.cloned(),
        span,
    }
}

/// Rule ids and families named in a config file's `lint` section that no rule answers to.
fn unknown_rule_names(db: &dyn Db, text: &str) -> Vec<(Option<Span>, String)> {
    let Ok(doc) = crate::parse::guard::yaml_from_str::<serde_yaml::Value>(text) else {
        return Vec::new();
    };
    let Some(lint) = doc.get("lint") else {
        return Vec::new();
    };
    let set = super::rule_set(db);
    let known = |t: &str| t == "ALL" || set.get(t).is_some() || set.families().contains(&t);
    let mut out = Vec::new();
    for key in ["select", "ignore"] {
        for t in lint
            .get(key)
            .and_then(|v| v.as_sequence())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
        {
            if !known(t) {
                out.push((
                    crate::config::key_span(text, t).or_else(|| crate::config::key_span(text, key)),
                    format!(
                        "`{t}` in `lint.{key}` is not a rule id or family{}",
                        super::did_you_mean_rule(set, t, true)
                    ),
                ));
            }
        }
    }
    for (glob, ids) in lint
        .get("per-file-ignores")
        .and_then(|v| v.as_mapping())
        .into_iter()
        .flatten()
    {
        let glob = glob.as_str().unwrap_or_default();
        for t in ids
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
        {
            if !known(t) {
                out.push((
                    crate::config::key_span(text, glob),
                    format!(
                        "`{t}` in `lint.per-file-ignores` (`{glob}`) is not a rule id or family{}",
                        super::did_you_mean_rule(set, t, true)
                    ),
                ));
            }
        }
    }
    for (k, _) in lint
        .get("severity")
        .and_then(|v| v.as_mapping())
        .into_iter()
        .flatten()
    {
        if let Some(id) = k.as_str().filter(|id| set.get(id).is_none()) {
            out.push((
                crate::config::key_span(text, id),
                format!(
                    "`{id}` in `lint.severity` is not a rule id{}",
                    super::did_you_mean_rule(set, id, false)
                ),
            ));
        }
    }
    out
}

/// Interpreter types the execution path resolves (§5.4: the union of the seeds' and the
/// reference's types).
pub const INTERPRETER_TYPES: [&str; 6] = [
    "local_binary",
    "system_binary",
    "command",
    "venv_python",
    "node_modules",
    "version_manager",
];

/// Managers a `version_manager` interpreter can ask (§5.4).
pub const VERSION_MANAGERS: [&str; 4] = ["pyenv", "nvm", "rbenv", "asdf"];

/// Which way an interpreter config fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpreterProblemKind {
    /// No `var` (or an empty one): the interpreter sets nothing.
    NoVar,
    /// No `type` or one the resolver does not know; a `fallback` is not applied then (§5.4).
    UnknownType,
    /// Required settings missing or of the wrong type, and no `fallback`.
    Unresolvable,
}

/// Why an `env_config.interpreter` can never resolve, in users' words, with the span to point at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpreterProblem {
    pub kind: InterpreterProblemKind,
    pub message: String,
    pub span: Span,
}

fn kind_of_value(v: &Value) -> &'static str {
    v.type_name()
}

fn is_str_list(v: &Value) -> bool {
    v.as_list()
        .is_some_and(|l| l.iter().all(|i| matches!(i.value, Value::Str(_))))
}

/// The statically decidable verdict on `env_config.interpreter` (§5.4), without any I/O: the
/// lint rule `unresolvable-interpreter` and the execution path share it. `None` when there is no
/// interpreter or it may resolve on some machine.
pub fn interpreter_problem(env_config: &Value) -> Option<InterpreterProblem> {
    use InterpreterProblemKind::*;
    let interp = env_config.get("interpreter")?;
    let found = |kind, span, message: String| {
        Some(InterpreterProblem {
            kind,
            message,
            span,
        })
    };
    match &interp.value {
        Value::Null => return None,
        Value::Map(_) => {}
        other => {
            return found(
                Unresolvable,
                interp.span,
                format!(
                    "`interpreter` must be a mapping with `type` and `var`, not {}",
                    kind_of_value(other)
                ),
            );
        }
    }
    let get = |key: &str| interp.value.get(key);
    match get("var") {
        None => {
            return found(
                NoVar,
                interp.span,
                "the interpreter has no `var`, so the path it finds is stored nowhere".to_owned(),
            );
        }
        Some(Spanned {
            value: Value::Str(s),
            span,
        }) if s.is_empty() => {
            return found(
                NoVar,
                *span,
                "`var` is empty, so the path the interpreter finds is stored nowhere".to_owned(),
            );
        }
        Some(Spanned {
            value: Value::Str(_),
            ..
        }) => {}
        Some(v) => {
            return found(
                Unresolvable,
                v.span,
                format!(
                    "`var` must be the name of an environment variable, not {}",
                    kind_of_value(&v.value)
                ),
            );
        }
    }
    let ty = match get("type") {
        None => {
            return found(
                UnknownType,
                interp.span,
                "the interpreter has no `type`".to_owned(),
            );
        }
        Some(Spanned {
            value: Value::Str(s),
            span,
        }) => {
            if !INTERPRETER_TYPES.contains(&s.as_str()) {
                return found(
                    UnknownType,
                    *span,
                    format!("unknown interpreter type `{s}`"),
                );
            }
            s.as_str()
        }
        Some(v) => {
            return found(
                UnknownType,
                v.span,
                format!(
                    "the interpreter `type` must be a string, not {}",
                    kind_of_value(&v.value)
                ),
            );
        }
    };
    match get("fallback") {
        Some(Spanned {
            value: Value::Str(s),
            ..
        }) if !s.is_empty() => return None,
        Some(Spanned {
            value: Value::Null | Value::Str(_),
            ..
        })
        | None => {}
        Some(v) => {
            return found(
                Unresolvable,
                v.span,
                format!(
                    "`fallback` must be a program name or path, not {}",
                    kind_of_value(&v.value)
                ),
            );
        }
    }
    // Without a fallback, the type's own settings must be able to find something.
    let missing = |key: &str, what: &str| {
        found(
            Unresolvable,
            interp.span,
            format!("a `{ty}` interpreter needs `{key}` ({what}), and there is no `fallback`"),
        )
    };
    let wrong = |v: &Spanned<Value>, key: &str, want: &str| {
        found(
            Unresolvable,
            v.span,
            format!(
                "`{key}` must be {want}, not {}, and there is no `fallback`",
                kind_of_value(&v.value)
            ),
        )
    };
    let need_str = |key: &str, what: &str| match get(key) {
        None
        | Some(Spanned {
            value: Value::Null, ..
        }) => missing(key, what),
        Some(Spanned {
            value: Value::Str(s),
            ..
        }) if !s.is_empty() => None,
        Some(
            v @ Spanned {
                value: Value::Str(_),
                ..
            },
        ) => found(
            Unresolvable,
            v.span,
            format!("`{key}` is empty, and there is no `fallback`"),
        ),
        Some(v) => wrong(v, key, "a string"),
    };
    // A list of strings; `required` lists must be present; any present list must not be empty.
    let str_list = |key: &str, what: &str, required: bool| match get(key) {
        None
        | Some(Spanned {
            value: Value::Null, ..
        }) if required => missing(key, what),
        None
        | Some(Spanned {
            value: Value::Null, ..
        }) => None,
        Some(v) if !is_str_list(&v.value) => wrong(v, key, "a list of strings"),
        Some(v) if v.value.as_list().is_some_and(<[_]>::is_empty) => found(
            Unresolvable,
            v.span,
            format!("`{key}` is an empty list, so nothing is searched, and there is no `fallback`"),
        ),
        Some(_) => None,
    };
    match ty {
        "local_binary" => need_str("binary", "the program name")
            .or_else(|| str_list("search_paths", "the directories to look in", true))
            .or_else(|| str_list("candidates", "other program names", false))
            .or_else(|| str_list("search_roots", "directories to search from", false)),
        "system_binary" => need_str("binary", "the program to look up on PATH"),
        "command" => str_list("resolve_cmd", "the command that prints the path", true),
        "venv_python" => match get("venv_path") {
            Some(v) if !matches!(v.value, Value::Str(_) | Value::Null) => {
                wrong(v, "venv_path", "a string")
            }
            _ => None,
        },
        "node_modules" => str_list("search_paths", "the directories to look in", false),
        "version_manager" => need_str("manager", "one of pyenv, nvm, rbenv, asdf")
            .or_else(|| match get("manager") {
                Some(Spanned {
                    value: Value::Str(m),
                    span,
                }) if !VERSION_MANAGERS.contains(&m.as_str()) => found(
                    Unresolvable,
                    *span,
                    format!(
                        "unknown version manager `{m}` (known: {}), and there is no `fallback`",
                        VERSION_MANAGERS.join(", ")
                    ),
                ),
                _ => None,
            })
            .or_else(|| match get("version") {
                Some(v) if matches!(v.value, Value::Int(_) | Value::Float(_)) => found(
                    Unresolvable,
                    v.span,
                    format!(
                        "`version` must be a string, not {} (quote it, e.g. \"3.10\"), and there is no `fallback`",
                        kind_of_value(&v.value)
                    ),
                ),
                _ => need_str("version", "the version to ask for"),
            }),
        _ => None,
    }
}

/// The rules that report a file without text — those of `symlink-escape` for a symlink out of
/// every space, of `unreadable-file` for anything else (not UTF-8, too large, refused by the OS,
/// not a regular file) — with the value of their messages' placeholder. `None` for text.
fn without_text<'db>(
    db: &'db dyn Db,
    contents: &FileContents,
) -> Option<(Vec<&'db Rule>, (&'static str, String))> {
    Some(match contents {
        FileContents::Text(_) => return None,
        FileContents::SymlinkEscape { target } => (
            of_kind(db, |c| matches!(c, Check::SymlinkEscape { .. })).collect(),
            ("target", target.clone()),
        ),
        other => (
            of_kind(db, |c| matches!(c, Check::UnreadableFile { .. })).collect(),
            ("reason", other.problem().unwrap_or_default()),
        ),
    })
}

/// What lint says of a file it cannot read (the message of `symlink-escape` or
/// `unreadable-file`), `None` for text: the one voice in which `verify`, `chain`, `exec` and
/// `sign` say it too.
pub fn unreadable_message(db: &dyn Db, contents: &FileContents) -> Option<String> {
    let (rules, var) = without_text(db, contents)?;
    Some(match rules.first() {
        Some(rule) => super::render_template(&rule.message, &[var]),
        // Unreachable with the embedded rules (a test holds both to exist).
        None => format!("Cannot read this file: {}", contents.problem()?),
    })
}

/// A query's findings as its memo keeps them for the whole run: without spare capacity (a
/// vector's first push makes room for four diagnostics, some 860 bytes, for every file).
pub(crate) fn kept(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics.shrink_to_fit();
    diagnostics
}

/// A directive or knowledge entry that cannot be read as one (§12.5, §12.6): what executing,
/// loading or signing it would refuse.
fn document_diagnostics<'s>(
    db: &dyn Db,
    file: SourceFile,
    site: &dyn Fn(Option<Span>) -> Site<'s>,
) -> Vec<Diagnostic> {
    use crate::place::Place;
    let rel = file.rel(db);
    let item = format!(".ai/{rel}");
    let problems: Vec<(Option<Span>, String)> = match Place::of(rel) {
        Place::Directive => match crate::resolve::docs::directive_doc(db, file) {
            Some(Err(e)) => vec![(e.span, e.message.clone())],
            Some(Ok(d)) => [("name", &d.name), ("version", &d.version)]
                .into_iter()
                .filter(|(_, a)| a.is_none())
                .map(|(n, _)| {
                    let problem = format!("the <directive> element has no `{n}` attribute");
                    (Some(d.tag), problem)
                })
                .collect(),
            None => Vec::new(),
        },
        Place::Knowledge => match crate::resolve::docs::knowledge_doc(db, file) {
            Some(Err(e)) => vec![(e.span, e.message.clone())],
            _ => Vec::new(),
        },
        _ => return Vec::new(),
    };
    let wanted = |c: &Check| match Place::of(rel) {
        Place::Directive => matches!(c, Check::InvalidDirective { .. }),
        _ => matches!(c, Check::InvalidKnowledge { .. }),
    };
    let mut out = Vec::new();
    for rule in of_kind(db, wanted) {
        for (span, problem) in &problems {
            out.push(rule.emit(
                site(*span),
                &[("item", item.clone()), ("problem", problem.clone())],
                None,
                Vec::new(),
            ));
        }
    }
    out
}

/// Findings about one file on its own: unreadable contents, parse problems, versions, ambiguity,
/// config problems.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    kept(compute_file_diagnostics(db, file))
}

/// What [`file_diagnostics`] memoizes, computed without keeping it: a one-shot lint reads each
/// file's findings once (`analysis::Checks::OneShot`).
pub fn compute_file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let path = file.path(db);
    let space = file.space(db);
    let id = tool_id_ref(db, file);
    let site = |span: Option<Span>| Site {
        path,
        span,
        item_id: id,
        space: Some(space),
    };

    if let Some((rules, var)) = without_text(db, file.contents(db)) {
        out.extend(
            rules
                .into_iter()
                .map(|rule| rule.emit(site(None), std::slice::from_ref(&var), None, Vec::new())),
        );
        return out;
    }

    // Config problems belong to the config file.
    if crate::config::config_sources(db).contains(&file) {
        let cfg = crate::config::lint_config(db);
        for rule in of_kind(db, |c| matches!(c, Check::InvalidConfig { .. })) {
            for (_, span, msg) in cfg.problems.iter().filter(|(f, _, _)| *f == file) {
                out.push(rule.emit(site(*span), &[("problem", msg.clone())], None, Vec::new()));
            }
            if let FileContents::Text(text) = file.contents(db) {
                for (span, msg) in unknown_rule_names(db, &text.as_str()) {
                    out.push(rule.emit(site(span), &[("problem", msg)], None, Vec::new()));
                }
            }
        }
        for rule in of_kind(db, |c| matches!(c, Check::ProjectDisablesSignatures { .. })) {
            for (_, span) in cfg.lowering_ignored.iter().filter(|(f, _)| *f == file) {
                out.push(rule.emit(site(*span), &[], None, Vec::new()));
            }
        }
        return out;
    }
    // Extractor problems (an unknown parser name) belong to the extractor file.
    for (_, msg) in extractor_config(db)
        .problems
        .iter()
        .filter(|(f, _)| *f == file)
    {
        for rule in of_kind(db, |c| matches!(c, Check::InvalidConfig { .. })) {
            out.push(rule.emit(site(None), &[("problem", msg.clone())], None, Vec::new()));
        }
    }

    out.extend(document_diagnostics(db, file, &site));

    let Some(item_id) = id else {
        return out;
    };
    let parsed = parse_file(db, file);
    // The header's spans count from its start; problems' spans are the text's own.
    let at_header = |span: Span| site(Some(span.shifted(parsed.header_start)));
    let at_header_opt = |span: Option<Span>| site(span.map(|s| s.shifted(parsed.header_start)));
    for rule in of_kind(db, |c| matches!(c, Check::ParseProblem { .. })) {
        for p in &parsed.problems {
            out.push(rule.emit(
                site(Some(p.span)),
                &[
                    ("item_id", item_id.to_owned()),
                    ("problem", p.message.clone()),
                ],
                None,
                Vec::new(),
            ));
        }
    }

    if let Some(v) = parsed.metadata.version() {
        for rule in of_kind(db, |c| matches!(c, Check::InvalidVersion { .. })) {
            let (shown, reason) = match &v.value {
                Value::Str(s) => match semver::Version::parse(s) {
                    Ok(_) => (None, String::new()),
                    Err(e) => (Some(s.to_string()), e.to_string()),
                },
                other => (
                    Some(other.to_json().to_string()),
                    format!("a version must be a string, not {}", other.type_name()),
                ),
            };
            if let Some(shown) = shown {
                out.push(rule.emit(
                    at_header(v.span),
                    &[
                        ("item_id", item_id.to_owned()),
                        ("version", shown),
                        ("reason", reason),
                    ],
                    None,
                    Vec::new(),
                ));
            }
        }
    }

    // An interpreter the execution path can never find (static: no file system is consulted).
    if let Some(env) = parsed.metadata.env_config()
        && let Some(p) = interpreter_problem(&env.value)
    {
        for rule in of_kind(db, |c| matches!(c, Check::UnresolvableInterpreter { .. })) {
            let variant = match p.kind {
                InterpreterProblemKind::UnknownType => Some("unknown_type"),
                InterpreterProblemKind::NoVar => Some("no_var"),
                InterpreterProblemKind::Unresolvable => None,
            };
            out.push(rule.emit(
                at_header(p.span),
                &[
                    ("item_id", item_id.to_owned()),
                    ("problem", p.message.clone()),
                ],
                variant,
                Vec::new(),
            ));
        }
    }

    // A state graph's shape, start, edges, reachability and nodes (`rules::graph`).
    out.extend(super::graph_checks::graph_file_diagnostics(
        db,
        &parsed.metadata,
        item_id,
        &|span| at_header_opt(span),
    ));

    // Two files of one id in one space: the loser of the extension order is ambiguous.
    let ambiguity_rules: Vec<&Rule> =
        of_kind(db, |c| matches!(c, Check::AmbiguousItem { .. })).collect();
    if !ambiguity_rules.is_empty()
        && let Some(root) = db
            .workspace()
            .roots(db)
            .iter()
            .copied()
            .find(|r| r.space(db) == space)
    {
        let cfg = extractor_config(db);
        let index = space_index(db, root);
        // The only file of its id wins or nothing does: no need to ask whether it is regular
        // (that would keep an `is_regular` memo for every file of the tree).
        if index.is_shared(item_id)
            && let Some(winner) = index.first_regular(db, item_id, cfg)
            && winner != file
        {
            let vars = [
                ("item_id", item_id.to_owned()),
                ("space", space.label()),
                ("winner", format!(".ai/{}", winner.rel(db))),
                ("loser", format!(".ai/{}", file.rel(db))),
            ];
            for rule in ambiguity_rules {
                let notes = vec![note(
                    format!("`{item_id}` resolves to this file instead"),
                    Some(winner.path(db)),
                    None,
                )];
                out.push(rule.emit(site(None), &vars, None, notes));
            }
        }
    }
    out
}

/// Findings about the edge a tool owns (it and the executor it names) and the chain rooted at it.
/// Every edge is checked once: at its child, when that file is linted as a root.
#[salsa::tracked(returns(ref))]
pub fn chain_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    kept(compute_chain_diagnostics(db, file))
}

/// What [`chain_diagnostics`] memoizes, computed without keeping it: a one-shot lint reads each
/// tool's findings once (`analysis::Checks::OneShot`).
pub fn compute_chain_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    if tool_id_ref(db, file).is_none() {
        return Vec::new();
    }
    // Walked here rather than memoized by `chain`: a lint reads each tool's chain once, and
    // memoized chains of 100k tools were the largest memo of the run.
    compute_chain_diagnostics_of(db, file, &walk_chain(db, file))
}

/// [`compute_chain_diagnostics`] of a tool whose chain `ch` (`walk_chain`) is already walked: a
/// lint that also records the chain's ids (the lint cache) walks it once.
pub fn compute_chain_diagnostics_of(db: &dyn Db, file: SourceFile, ch: &Chain) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(item_id) = tool_id_ref(db, file) else {
        return out;
    };
    let path = file.path(db);
    let space = file.space(db);
    // Every span here is one of this file's header (relative to its start, `header_base`, read
    // only when a finding is made: an edit above the header re-runs no other file's checks).
    let base = || header_base(db, file);
    let site = |span: Option<Span>| Site {
        path,
        span: span.map(|s| s.shifted(base())),
        item_id: Some(item_id),
        space: Some(space),
    };
    let meta = metadata(db, file);

    if ch.elements.len() == 1 {
        match &ch.end {
            ChainEnd::Terminal => {
                // DESIGN.md: a file with no executor and no sign of being meant to run is a
                // library or data item (`unrunnable-item`, opt-in), not a tool that forgot its
                // executor (`unknown-primitive`). Files whose `tool_type` marks them as data and
                // files that could not be read or parsed are neither. The run facts come from
                // their own query (`run_facts`), so a body edit re-runs this only when they change.
                let tool_type = meta.tool_type_str().unwrap_or_default();
                let facts = run_facts(db, file);
                let rules: Vec<&Rule> = if facts.sign.is_some() {
                    of_kind(db, |c| matches!(c, Check::TerminalNotPrimitive { .. })).collect()
                } else {
                    of_kind(db, |c| matches!(c, Check::UnrunnableItem { .. })).collect()
                };
                // Each rule with its own list of data types and its own runtimes to suggest.
                for rule in rules {
                    let data_types = match &rule.check {
                        Check::TerminalNotPrimitive {
                            non_executable_tool_types,
                            ..
                        }
                        | Check::UnrunnableItem {
                            non_executable_tool_types,
                        } => non_executable_tool_types.as_slice(),
                        _ => &[],
                    };
                    if !facts.readable || data_types.iter().any(|t| t == tool_type) {
                        continue;
                    }
                    let span = meta
                        .executor_id()
                        .map(|e| e.span)
                        .or(meta.tool_type().map(|t| t.span));
                    let shown = if tool_type.is_empty() {
                        "(none)".to_owned()
                    } else {
                        tool_type.to_owned()
                    };
                    let runtime = suggested_runtime(db, file, &rule.check);
                    let mut d = rule.emit(
                        site(span),
                        &[
                            ("item_id", item_id.to_owned()),
                            ("tool_type", shown),
                            ("runtime", runtime.clone().unwrap_or_default()),
                            ("space", space.label()),
                        ],
                        runtime.is_none().then_some("no_runtime"),
                        Vec::new(),
                    );
                    // The fix: an explicit `None` executor names the runtime instead; a missing
                    // one gets its header line, after the tool type's.
                    if matches!(rule.check, Check::TerminalNotPrimitive { .. })
                        && let Some(runtime) = &runtime
                        && let Some(kind) = parser_of(db, file)
                    {
                        d.edit = match (meta.executor_id(), meta.tool_type()) {
                            (Some(none), _) => {
                                let value = if kind == crate::parse::ParserKind::Yaml {
                                    runtime.clone()
                                } else {
                                    format!("\"{runtime}\"")
                                };
                                Some(crate::diagnostic::Edit {
                                    span: none.span.shifted(base()),
                                    title: format!("Name `{runtime}` as the executor"),
                                    replacement: value,
                                    line_after: false,
                                })
                            }
                            // After the tool type's line, else the version's or the
                            // category's (a script that names neither has no header to extend).
                            (None, tool_type) => tool_type
                                .or(meta.get(crate::model::Field::Version))
                                .or(meta.get(crate::model::Field::Category))
                                .map(|after| {
                                    let line = executor_line(kind, runtime);
                                    crate::diagnostic::Edit {
                                        span: after.span.shifted(base()),
                                        title: format!("Add `{line}`"),
                                        replacement: line,
                                        line_after: true,
                                    }
                                }),
                        }
                        .map(Box::new);
                    }
                    out.push(d);
                }
            }
            ChainEnd::Missing { executor_id, span } => {
                for rule in of_kind(db, |c| matches!(c, Check::MissingExecutor { .. })) {
                    let res = resolve(db, executor_id, space.kind());
                    let searched: Vec<&str> = space
                        .kind()
                        .visible_kinds()
                        .iter()
                        .map(|k| k.name())
                        .collect();
                    let mut vars = vec![
                        ("item_id", item_id.to_owned()),
                        ("executor_id", executor_id.clone()),
                        ("space", space.label()),
                        ("searched", searched.join(", ")),
                    ];
                    let mut notes = Vec::new();
                    let variant = res.hidden.first().map(|h| {
                        vars.push(("hidden_space", h.space.label()));
                        // Where a copy would be visible: a user element also sees the system
                        // space; a system element sees only its bundles (§1.7).
                        vars.push((
                            "copy_into",
                            match space.kind() {
                                crate::model::SpaceKind::System => "a system bundle".to_owned(),
                                k => format!("the {} space (or a lower one)", k.name()),
                            },
                        ));
                        notes.push(note(
                            format!(
                                "`{executor_id}` exists only in the {} space",
                                h.space.label()
                            ),
                            Some(h.file.path(db)),
                            None,
                        ));
                        "hidden"
                    });
                    let mut d = rule.emit(site(Some(*span)), &vars, variant, notes);
                    // Close ids this element may name, from the list computed once per space
                    // kind; not when the id itself exists in a hidden space (the help says so).
                    let near = crate::resolve::suggestions(db, executor_id, space.kind());
                    if variant.is_none() && !near.ids.is_empty() {
                        d.suggestions = Some(Suggestions {
                            original: executor_id.clone(),
                            replacements: near.ids.clone(),
                            certain: near.certain,
                        });
                    }
                    out.push(d);
                }
            }
            ChainEnd::InvalidId {
                executor_id,
                span,
                reason,
            } => {
                for rule in of_kind(db, |c| matches!(c, Check::InvalidItemId { .. })) {
                    let vars = [
                        ("item_id", item_id.to_owned()),
                        ("executor_id", executor_id.clone()),
                        ("reason", (*reason).to_owned()),
                    ];
                    out.push(rule.emit(site(Some(*span)), &vars, None, Vec::new()));
                }
            }
            ChainEnd::WrongType {
                type_name,
                span,
                shown,
            } => {
                for rule in of_kind(db, |c| matches!(c, Check::InvalidItemId { .. })) {
                    out.push(rule.emit(
                        site(Some(*span)),
                        &[
                            ("item_id", item_id.to_owned()),
                            ("executor_id", shown.clone()),
                            ("reason", crate::message::executor_id_wrong_type(type_name)),
                        ],
                        None,
                        Vec::new(),
                    ));
                }
            }
            _ => {}
        }
    }

    // The tools a state graph's actions name, resolved as `rye_execute` resolves them.
    out.extend(super::graph_checks::graph_action_diagnostics(
        db, meta, item_id, &site,
    ));

    if let [child, parent, ..] = ch.elements.as_slice() {
        let exec_span = match meta.executor() {
            ExecutorRef::Id(_, span) => Some(span),
            _ => None,
        };
        edge_checks(db, &mut out, child, parent, &|| site(exec_span));
    }

    if let ChainEnd::TooDeep {
        max, executor_id, ..
    } = &ch.end
    {
        for rule in of_kind(db, |c| matches!(c, Check::ChainDepth { .. })) {
            let last = ch.elements.last().expect("a chain has its root");
            let exec_span = match meta.executor() {
                ExecutorRef::Id(_, span) => Some(span),
                _ => None,
            };
            let vars = [
                ("item_id", item_id.to_owned()),
                ("max_depth", max.to_string()),
                ("stopped_at", last.item_id.clone()),
            ];
            let notes = vec![note(
                format!(
                    "the chain reached {max} elements at `{}`, which names `{executor_id}`",
                    last.item_id
                ),
                last.file.map(|f| f.path(db)),
                None,
            )];
            out.push(rule.emit(site(exec_span), &vars, None, notes));
        }
    }
    out
}

fn edge_checks<'a>(
    db: &'a dyn Db,
    out: &mut Vec<Diagnostic>,
    child: &Element,
    parent: &Element,
    // Made only when a finding is (its span needs the child's `header_base`).
    site: &dyn Fn() -> Site<'a>,
) {
    let parent_path = parent.file.map(|f| f.path(db));
    let parent_note = |what: &str| {
        note(
            format!("`{}` ({what}) is defined here", parent.item_id),
            parent_path,
            None,
        )
    };
    // Spaces are judged by where the file really lives (§4.4 on resolved files); when that
    // differs from where resolution found it, the help says the file is a symlink.
    let parent_where = |e: &Element| {
        if e.origin == e.space.kind() {
            format!("`{}` lives in the {} space", e.item_id, e.origin.name())
        } else {
            format!(
                "the file of `{}` in the {} space is a symlink into the {} space",
                e.item_id,
                e.space.label(),
                e.origin.name()
            )
        }
    };
    let resite = site;
    let cm = child.file.map(|f| metadata(db, f));
    let pm = parent.file.map(|f| metadata(db, f));
    // Header spans made absolute, each in its own file (read only for a finding's position).
    let in_child = |s: Span| child.file.map_or(s, |f| s.shifted(header_base(db, f)));
    let in_parent = |s: Span| parent.file.map_or(s, |f| s.shifted(header_base(db, f)));
    let cl = Link {
        item_id: &child.item_id,
        space: child.origin,
        metadata: cm.map(|m| m.as_ref()),
    };
    let pl = Link {
        item_id: &parent.item_id,
        space: parent.origin,
        metadata: pm.map(|m| m.as_ref()),
    };
    let verdict = check_pair(super::rule_set(db), &cl, &pl);

    // §4.4: a child depends only on equal or lower precedence (judged on where files really
    // live), under each precedence rule's own table.
    if !verdict.space_ok {
        for rule in of_kind(db, |c| matches!(c, Check::SpacePrecedence { .. }))
            .filter(|r| !space_ok_under(r, &cl, &pl))
        {
            let vars = [
                ("child", child.item_id.clone()),
                ("child_space", child.origin.name().to_owned()),
                ("parent", parent.item_id.clone()),
                ("parent_space", parent.origin.name().to_owned()),
                ("parent_where", parent_where(parent)),
            ];
            out.push(rule.emit(resite(), &vars, None, vec![parent_note("the executor")]));
        }
    }
    // §4.5: a system element never delegates to a mutable one.
    if verdict.system_to_mutable {
        for rule in of_kind(db, |c| matches!(c, Check::SystemToMutable { .. })) {
            let vars = [
                ("child", child.item_id.clone()),
                ("parent", parent.item_id.clone()),
                ("parent_space", parent.origin.name().to_owned()),
                ("parent_where", parent_where(parent)),
            ];
            out.push(rule.emit(resite(), &vars, None, vec![parent_note("the executor")]));
        }
    }
    // §4.6: parent inputs ⊆ child outputs, when both are declared.
    if !verdict.io_ok() {
        for rule in of_kind(db, |c| matches!(c, Check::IoCompat { .. })) {
            let vars = [
                ("child", child.item_id.clone()),
                ("parent", parent.item_id.clone()),
                ("missing", py_list(&verdict.missing_inputs)),
                ("outputs", py_list(&verdict.child_outputs)),
            ];
            let span = cm
                .and_then(|m| m.outputs())
                .map(|o| in_child(o.span))
                .or_else(|| resite().span);
            let inputs_span = pm.and_then(|m| m.inputs()).map(|i| in_parent(i.span));
            let notes = vec![note(
                format!("`{}` declares its inputs here", parent.item_id),
                parent_path,
                inputs_span,
            )];
            out.push(rule.emit(Site { span, ..resite() }, &vars, None, notes));
        }
    }
    // §4.7: child_constraints of the parent for this child.
    let constraint = pm.and_then(|m| m.constraint_for(&child.item_id));
    for v in &verdict.versions {
        match v {
            VersionVerdict::Unversioned => {
                for rule in of_kind(db, |c| matches!(c, Check::UnversionedChild { .. })) {
                    let vars = [
                        ("child", child.item_id.clone()),
                        ("parent", parent.item_id.clone()),
                    ];
                    let span = constraint.as_ref().map(|c| in_parent(c.span));
                    let notes = vec![note(
                        format!("`{}` constrains `{}` here", parent.item_id, child.item_id),
                        parent_path,
                        span,
                    )];
                    out.push(rule.emit(resite(), &vars, None, notes));
                }
            }
            VersionVerdict::Violated {
                version,
                comparison,
                bound,
            } => {
                for rule in of_kind(db, |c| matches!(c, Check::VersionConstraint { .. })) {
                    let vars = [
                        ("child", child.item_id.clone()),
                        ("parent", parent.item_id.clone()),
                        ("version", version.clone()),
                        ("comparison", (*comparison).to_owned()),
                        ("bound", bound.clone()),
                    ];
                    let bound_span = constraint.as_ref().and_then(|c| {
                        [&c.min_version, &c.max_version]
                            .into_iter()
                            .flatten()
                            .find(|b| &b.value == bound)
                            .map(|b| in_parent(b.span))
                    });
                    let span = cm
                        .and_then(|m| m.version())
                        .map(|v| in_child(v.span))
                        .or_else(|| resite().span);
                    let notes = vec![note(
                        format!("`{}` requires this version bound", parent.item_id),
                        parent_path,
                        bound_span,
                    )];
                    out.push(rule.emit(Site { span, ..resite() }, &vars, None, notes));
                }
            }
            VersionVerdict::NoConstraint | VersionVerdict::Satisfied => {}
        }
    }
}

/// Cycles of the executor graph, each once, at the member whose path sorts first.
#[salsa::tracked(returns(ref))]
pub fn graph_diagnostics(db: &dyn Db) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let rules: Vec<&Rule> = of_kind(db, |c| matches!(c, Check::ExecutorCycle { .. })).collect();
    if rules.is_empty() {
        return out;
    }
    let g = executor_graph(db);
    for (members, trapped) in g.cycles.iter().zip(&g.trapped) {
        let first = &g.nodes[members[0]];
        let Some(file) = first.file else { continue };
        let meta = metadata(db, file);
        let span = match meta.executor() {
            ExecutorRef::Id(_, span) => Some(span.shifted(header_base(db, file))),
            _ => None,
        };
        let ids: Vec<&str> = members
            .iter()
            .map(|&m| g.nodes[m].item_id.as_str())
            .collect();
        let vars = [
            ("first", first.item_id.clone()),
            ("members", ids.join(" → ")),
            ("count", members.len().to_string()),
            ("trapped_count", trapped.len().to_string()),
        ];
        let mut notes: Vec<Note> = members[1..]
            .iter()
            .filter_map(|&m| {
                g.nodes[m].file.map(|f| {
                    note(
                        format!("`{}` is part of the cycle", g.nodes[m].item_id),
                        Some(f.path(db)),
                        None,
                    )
                })
            })
            .collect();
        notes.extend(trapped.iter().filter_map(|&t| {
            g.nodes[t].file.map(|f| {
                note(
                    format!("`{}` runs into the cycle", g.nodes[t].item_id),
                    Some(f.path(db)),
                    None,
                )
            })
        }));
        for rule in &rules {
            let site = Site {
                path: file.path(db),
                span,
                item_id: Some(&first.item_id),
                space: Some(&first.space),
            };
            out.push(rule.emit(site, &vars, None, notes.clone()));
        }
    }
    out
}

/// The parser that reads `file` (by its extension, as the extractors say).
fn parser_of(db: &dyn Db, file: SourceFile) -> Option<crate::parse::ParserKind> {
    extractor_config(db).parser_for(crate::integrity::extension_of(file.rel(db)))
}

/// The header line naming `runtime` as the executor, in the syntax of a file `kind` reads.
fn executor_line(kind: crate::parse::ParserKind, runtime: &str) -> String {
    use crate::parse::ParserKind;
    match kind {
        ParserKind::PythonAst => format!("__executor_id__ = \"{runtime}\""),
        ParserKind::Shell => format!("__executor_id__=\"{runtime}\""),
        ParserKind::Yaml => format!("executor_id: {runtime}"),
        ParserKind::JavaScript => format!("const __executor_id__ = \"{runtime}\";"),
    }
}

/// The runtimes an `unknown-primitive` help may name for `file` (its rule's list for the file's
/// extension, in order): what that help reads besides the chain (`lazy::chain_ids_of` lists
/// them, so the lint cache re-checks the file when one comes or goes).
pub fn runtime_candidates<'r>(db: &dyn Db, file: SourceFile, check: &'r Check) -> &'r [String] {
    let Check::TerminalNotPrimitive { runtimes, .. } = check else {
        return &[];
    };
    let ext = crate::integrity::extension_of(file.rel(db));
    runtimes.get(ext).map_or(&[], Vec::as_slice)
}

/// The first runtime of [`runtime_candidates`] visible from the file's own space: a help never
/// names a runtime the file could not reach (one only ryechain's embedded bundle has, say).
fn suggested_runtime(db: &dyn Db, file: SourceFile, check: &Check) -> Option<String> {
    let from = file.space(db).kind();
    runtime_candidates(db, file, check)
        .iter()
        .find(|id| crate::resolve::resolve(db, id, from).found.is_some())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::validate::parse_version_lenient;

    fn env_config(yaml: &str) -> Value {
        let parsed = crate::parse::parse(
            crate::parse::ParserKind::Yaml,
            &format!("env_config:\n  interpreter: {yaml}\n"),
        );
        parsed
            .metadata
            .env_config()
            .expect("env_config")
            .value
            .clone()
    }

    fn verdict(yaml: &str) -> Option<InterpreterProblemKind> {
        interpreter_problem(&env_config(yaml)).map(|p| p.kind)
    }

    /// §5.4: a fallback rescues missing settings of a known type, but not an unknown type (the
    /// reference returns before applying it) nor a missing `var` (nothing is set at all).
    #[test]
    fn interpreter_verdicts() {
        use InterpreterProblemKind::*;
        assert_eq!(verdict("{type: local_binary, var: V}"), Some(Unresolvable));
        assert_eq!(verdict("{type: local_binary, var: V, fallback: py}"), None);
        assert_eq!(
            verdict("{type: local_binary, var: V, fallback: \"\"}"),
            Some(Unresolvable)
        );
        assert_eq!(
            verdict("{type: local_binary, var: V, fallback: 3}"),
            Some(Unresolvable)
        );
        assert_eq!(
            verdict("{type: conda, var: V, fallback: py}"),
            Some(UnknownType)
        );
        assert_eq!(verdict("{var: V, fallback: py}"), Some(UnknownType));
        assert_eq!(verdict("{type: 7, var: V}"), Some(UnknownType));
        assert_eq!(verdict("{type: system_binary, fallback: py}"), Some(NoVar));
        assert_eq!(
            verdict("{type: system_binary, var: \"\", binary: x}"),
            Some(NoVar)
        );
        assert_eq!(
            verdict("{type: system_binary, var: [V], binary: x}"),
            Some(Unresolvable)
        );
        assert_eq!(verdict("{type: system_binary, var: V, binary: x}"), None);
        assert_eq!(
            verdict("{type: command, var: V, resolve_cmd: []}"),
            Some(Unresolvable)
        );
        assert_eq!(
            verdict("{type: command, var: V, resolve_cmd: [a, 1]}"),
            Some(Unresolvable)
        );
        assert_eq!(
            verdict("{type: command, var: V, resolve_cmd: [a, b]}"),
            None
        );
        assert_eq!(verdict("{type: venv_python, var: V}"), None);
        assert_eq!(
            verdict("{type: venv_python, var: V, venv_path: [x]}"),
            Some(Unresolvable)
        );
        assert_eq!(verdict("{type: node_modules, var: V}"), None);
        assert_eq!(
            verdict("{type: version_manager, var: V, manager: asdf}"),
            Some(Unresolvable)
        );
        assert_eq!(
            verdict("{type: version_manager, var: V, manager: asdf, version: \"1\"}"),
            None
        );
        assert_eq!(verdict("null"), None);
        assert_eq!(verdict("python3"), Some(Unresolvable));
        assert!(interpreter_problem(&Value::Map(Box::default())).is_none());
        let p = interpreter_problem(&env_config("{type: pipenv, var: V}")).unwrap();
        assert_eq!(p.message, "unknown interpreter type `pipenv`");
    }

    #[test]
    fn lenient_versions() {
        assert_eq!(
            parse_version_lenient("1.0"),
            Some(semver::Version::new(1, 0, 0))
        );
        assert_eq!(
            parse_version_lenient("v2"),
            Some(semver::Version::new(2, 0, 0))
        );
        assert!(parse_version_lenient("1.0.0-alpha").unwrap() < semver::Version::new(1, 0, 0));
        assert_eq!(parse_version_lenient("latest"), None);
        assert_eq!(parse_version_lenient("1..2"), None);
    }
}
