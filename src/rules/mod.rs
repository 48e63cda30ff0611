//! L4 rules as data: `rules/<family>/<id>.yaml` deserialized into a wire struct, compiled into a
//! validated `Rule` with a typed error (unknown check, placeholder, variant, scope or docs section
//! is refused), then dispatched by the checks in `checks.rs`.

pub mod checks;
pub mod graph;
pub mod graph_checks;
pub mod integrity;
pub mod validate;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::diagnostic::{Diagnostic, Note, Severity};
use crate::model::{Space, Span};

use crate::embedded::data as embedded;
pub use crate::embedded::{embedded_rule_files, embedded_system_files};

/// The documentation page of a rule in markdown: what `ryechain rule ID` prints and what an
/// editor opens from a diagnostic's rule code.
pub fn doc_page(id: &str) -> Option<String> {
    let r = rules().get(id)?;
    let on = if r.enabled {
        "on by default"
    } else {
        "off by default (name it in `--select`, or give it a level under `lint.severity` in `.ai/config/ryechain.yaml`)"
    };
    Some(format!(
        "# {} ({})\n\nFamily: {} · Default severity: {} · {on} · Scope: {:?}\n\n{}\n\n{}\n",
        r.id,
        r.summary,
        r.family,
        r.severity.as_str(),
        r.scope,
        r.summary,
        r.docs.trim_end()
    ))
}

/// Where a rule's check runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One file on its own.
    File,
    /// One element and the executor it names (every edge is checked once, at its child).
    ChainEdge,
    /// A whole chain from a root tool.
    Chain,
    /// The whole executor graph.
    Graph,
}

/// The closed set of check kinds, with typed parameters.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    ParseProblem {},
    UnreadableFile {},
    SymlinkEscape {},
    InvalidConfig {},
    InvalidDirective {},
    InvalidKnowledge {},
    InvalidVersion {},
    UnresolvableInterpreter {},
    AmbiguousItem {},
    InvalidItemId {},
    MissingExecutor {},
    TerminalNotPrimitive {
        non_executable_tool_types: Vec<String>,
        /// The runtimes the help may suggest for a file of each extension (`.py`: …), in order;
        /// the first one visible from the file's space is named.
        #[serde(default)]
        runtimes: BTreeMap<String, Vec<String>>,
    },
    UnrunnableItem {
        non_executable_tool_types: Vec<String>,
    },
    SpacePrecedence {
        precedence: BTreeMap<String, u8>,
    },
    SystemToMutable {},
    IoCompat {},
    VersionConstraint {},
    UnversionedChild {},
    ChainDepth {},
    ExecutorCycle {},
    UnsignedItem {},
    HashMismatch {},
    UntrustedKey {},
    BadSignature {},
    MalformedSignature {},
    InvalidTrustedKey {},
    UnapprovedProjectKey {},
    ProjectDisablesSignatures {},
    StaleLockfile {},
    UnusedSuppression {},
    /// A state graph's config of the wrong shape (`rules::graph`).
    GraphShape {},
    /// A state graph without a start node.
    GraphStart {},
    /// An edge of a state graph to a node it does not have.
    GraphTarget {},
    /// A node of a state graph no walk from its start reaches.
    GraphUnreachable {},
    /// A node of a state graph with nothing to do.
    GraphNodeAction {},
    /// An action of a state graph naming a tool no space holds.
    GraphAction {},
}

/// What a check kind declares: its scope, the placeholders its templates may use, and the
/// alternative help texts (variants) it may ask for.
pub struct CheckSpec {
    pub scope: Scope,
    pub placeholders: &'static [&'static str],
    pub variants: &'static [&'static str],
}

impl Check {
    pub fn spec(&self) -> CheckSpec {
        use Scope::*;
        let (scope, placeholders, variants): (
            Scope,
            &'static [&'static str],
            &'static [&'static str],
        ) = match self {
            Check::ParseProblem { .. } => (File, &["item_id", "problem"], &[]),
            Check::UnreadableFile { .. } => (File, &["reason"], &[]),
            Check::SymlinkEscape { .. } => (File, &["target"], &[]),
            Check::InvalidConfig { .. } => (File, &["problem"], &[]),
            Check::InvalidDirective { .. } => (File, &["item", "problem"], &[]),
            Check::InvalidKnowledge { .. } => (File, &["item", "problem"], &[]),
            Check::InvalidVersion { .. } => (File, &["item_id", "version", "reason"], &[]),
            Check::UnresolvableInterpreter { .. } => {
                (File, &["item_id", "problem"], &["unknown_type", "no_var"])
            }
            Check::AmbiguousItem { .. } => (File, &["item_id", "space", "winner", "loser"], &[]),
            Check::InvalidItemId { .. } => (ChainEdge, &["item_id", "executor_id", "reason"], &[]),
            Check::MissingExecutor { .. } => (
                ChainEdge,
                &[
                    "item_id",
                    "executor_id",
                    "space",
                    "searched",
                    "hidden_space",
                    "copy_into",
                ],
                &["hidden"],
            ),
            Check::TerminalNotPrimitive { .. } => (
                ChainEdge,
                &["item_id", "tool_type", "runtime", "space"],
                &["no_runtime"],
            ),
            Check::UnrunnableItem { .. } => (ChainEdge, &["item_id", "tool_type"], &[]),
            Check::SpacePrecedence { .. } => (
                ChainEdge,
                &[
                    "child",
                    "child_space",
                    "parent",
                    "parent_space",
                    "parent_where",
                ],
                &[],
            ),
            Check::SystemToMutable { .. } => (
                ChainEdge,
                &["child", "parent", "parent_space", "parent_where"],
                &[],
            ),
            Check::IoCompat { .. } => (ChainEdge, &["child", "parent", "missing", "outputs"], &[]),
            Check::VersionConstraint { .. } => (
                ChainEdge,
                &["child", "parent", "version", "comparison", "bound"],
                &[],
            ),
            Check::UnversionedChild { .. } => (ChainEdge, &["child", "parent"], &[]),
            Check::ChainDepth { .. } => (Chain, &["item_id", "max_depth", "stopped_at"], &[]),
            Check::ExecutorCycle { .. } => {
                (Graph, &["first", "members", "count", "trapped_count"], &[])
            }
            Check::UnsignedItem { .. } => (File, &["item", "kind"], &["legacy", "system"]),
            Check::HashMismatch { .. } => (File, &["item", "expected", "got"], &["system"]),
            Check::UntrustedKey { .. } => {
                (File, &["item", "key_fp", "shipped_in"], &["unapproved"])
            }
            Check::BadSignature { .. } => (File, &["item", "key_fp"], &["system"]),
            Check::MalformedSignature { .. } => (File, &["item", "reason"], &["system"]),
            Check::InvalidTrustedKey { .. } => (File, &["item", "reason"], &[]),
            Check::UnapprovedProjectKey { .. } => {
                (File, &["item", "key_fp", "owner", "project"], &[])
            }
            Check::ProjectDisablesSignatures { .. } => (File, &[], &[]),
            Check::StaleLockfile { .. } => (File, &["item", "problem"], &[]),
            Check::UnusedSuppression { .. } => (
                File,
                &["rule", "problem"],
                &["unknown", "unreadable", "not_by_comment"],
            ),
            Check::GraphShape { .. } => (File, &["item_id", "problem"], &[]),
            Check::GraphStart { .. } => (File, &["item_id", "problem", "nodes"], &[]),
            Check::GraphTarget { .. } => (File, &["item_id", "node", "target", "nodes"], &[]),
            Check::GraphUnreachable { .. } => (File, &["item_id", "node", "start"], &[]),
            Check::GraphNodeAction { .. } => {
                (File, &["item_id", "node", "node_type"], &["unknown_type"])
            }
            Check::GraphAction { .. } => (
                ChainEdge,
                &["item_id", "node", "action_id", "reason"],
                &["invalid"],
            ),
        };
        CheckSpec {
            scope,
            placeholders,
            variants,
        }
    }
}

/// The wire format of a rule file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleWire {
    id: String,
    family: String,
    summary: String,
    severity: String,
    scope: Scope,
    check: Check,
    message: String,
    #[serde(default)]
    help: Option<String>,
    #[serde(default)]
    variants: BTreeMap<String, String>,
    docs: String,
    /// `false` for an opt-in rule: it runs only when selected by its id or given a severity in
    /// the config (a family, `ALL` or no selection leave it off).
    #[serde(default = "enabled_by_default")]
    enabled: bool,
}

fn enabled_by_default() -> bool {
    true
}

/// A validated rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: Arc<str>,
    pub family: String,
    pub summary: String,
    pub severity: Severity,
    pub scope: Scope,
    pub check: Check,
    pub message: String,
    /// Shared: a help without placeholders is the same text in every diagnostic of the rule.
    pub help: Option<Arc<str>>,
    pub variants: BTreeMap<String, Arc<str>>,
    pub docs: String,
    /// Whether the rule runs without being asked for by its id (`enabled: false` in its file).
    pub enabled: bool,
    last_help: LastHelp,
}

/// The help a rule rendered last, handed to the next diagnostic whose help renders the same:
/// `sign the {kind} with ...` is one text for nearly every `unsigned-item` finding, and an
/// unsigned 100k tree held it 100k times (16 MB). One per rule, so it cannot grow.
#[derive(Default)]
struct LastHelp(std::sync::Mutex<Option<Arc<str>>>);

impl LastHelp {
    fn share(&self, rendered: String) -> Arc<str> {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &*last {
            Some(text) if **text == *rendered => text.clone(),
            _ => last.insert(Arc::from(rendered)).clone(),
        }
    }
}

/// A memo, not part of the rule's value.
impl Clone for LastHelp {
    fn clone(&self) -> Self {
        LastHelp::default()
    }
}

impl PartialEq for LastHelp {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LastHelp {}

impl std::fmt::Debug for LastHelp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LastHelp")
    }
}

/// Why a rule file is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RuleError {
    #[error("{file}: invalid rule file: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: rule id `{id}` must be kebab-case and match the file name")]
    BadId { file: String, id: String },
    #[error("{file}: family `{family}` must match the directory the rule lives in")]
    BadFamily { file: String, family: String },
    #[error("{file}: unknown severity `{severity}` (use error, warning or info)")]
    BadSeverity { file: String, severity: String },
    #[error(
        "{file}: scope `{declared:?}` does not match check `{check}`, which runs at scope `{expected:?}`"
    )]
    ScopeMismatch {
        file: String,
        declared: Scope,
        expected: Scope,
        check: String,
    },
    #[error(
        "{file}: template `{template}` uses placeholder `{{{placeholder}}}`, which check `{check}` does not provide (it provides: {provided})"
    )]
    UnknownPlaceholder {
        file: String,
        template: String,
        placeholder: String,
        check: String,
        provided: String,
    },
    #[error("{file}: template `{template}` has an unclosed `{{`")]
    UnclosedPlaceholder { file: String, template: String },
    #[error(
        "{file}: variant `{variant}` is not one check `{check}` can use (it can use: {provided})"
    )]
    UnknownVariant {
        file: String,
        variant: String,
        check: String,
        provided: String,
    },
    #[error("{file}: check `{check}` needs help variant `{variant}`")]
    MissingVariant {
        file: String,
        variant: String,
        check: String,
    },
    #[error("{file}: docs lack the section `{section}`")]
    MissingDocs { file: String, section: String },
    #[error("{file}: duplicate rule id `{id}`")]
    Duplicate { file: String, id: String },
}

/// Section headings every rule's docs must have (CONVENTIONS habit 1).
pub const DOC_SECTIONS: [&str; 4] = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
];

fn check_name(check: &Check) -> String {
    let dbg = format!("{check:?}");
    let name = dbg.split([' ', '{', '(']).next().unwrap_or_default();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A template with a `{` that is never closed.
#[derive(Debug, PartialEq, Eq)]
pub struct UnclosedBrace;

/// Placeholder names used by a template (`{name}`; `{{` and `}}` are literal braces).
pub fn placeholders(template: &str) -> Result<Vec<&str>, UnclosedBrace> {
    let mut out = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => i += 2,
            b'}' if bytes.get(i + 1) == Some(&b'}') => i += 2,
            b'{' => {
                let end = template[i + 1..].find('}').ok_or(UnclosedBrace)? + i + 1;
                out.push(&template[i + 1..end]);
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    Ok(out)
}

/// `; did you mean `x`?` for a name that is not a rule id (or, with `families`, a family): the
/// nearest one (`message::nearest`), or nothing.
pub fn did_you_mean_rule(set: &RuleSet, name: &str, families: bool) -> String {
    let families = if families { set.families() } else { Vec::new() };
    crate::message::did_you_mean(
        name,
        set.rules.iter().map(|r| r.id.as_ref()).chain(families),
    )
}

/// Fill a template. Unknown placeholders cannot occur: compile refused them.
pub fn render_template(template: &str, vars: &[(&str, String)]) -> String {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    crate::message::render(template, &vars)
}

fn is_kebab(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Compile one rule file. `file` is `<family>/<id>.yaml`.
pub fn compile_rule(file: &str, text: &str) -> Result<Rule, RuleError> {
    let wire: RuleWire = serde_yaml::from_str(text).map_err(|e| RuleError::Syntax {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    compile_wire(file, wire)
}

/// Compile one rule file from the JSON form `build.rs` converted it to (the same document).
fn compile_rule_json(file: &str, json: &str) -> Result<Rule, RuleError> {
    let wire: RuleWire = serde_json::from_str(json).map_err(|e| RuleError::Syntax {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    compile_wire(file, wire)
}

fn compile_wire(file: &str, wire: RuleWire) -> Result<Rule, RuleError> {
    let f = || file.to_owned();
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name);
    if !is_kebab(&wire.id) || wire.id != stem {
        return Err(RuleError::BadId {
            file: f(),
            id: wire.id,
        });
    }
    if wire.family != dir.rsplit('/').next().unwrap_or(dir) {
        return Err(RuleError::BadFamily {
            file: f(),
            family: wire.family,
        });
    }
    let severity = Severity::parse(&wire.severity).ok_or_else(|| RuleError::BadSeverity {
        file: f(),
        severity: wire.severity.clone(),
    })?;
    let spec = wire.check.spec();
    let check = check_name(&wire.check);
    if spec.scope != wire.scope {
        return Err(RuleError::ScopeMismatch {
            file: f(),
            declared: wire.scope,
            expected: spec.scope,
            check,
        });
    }
    let mut templates: Vec<&str> = vec![&wire.message];
    templates.extend(wire.help.as_deref());
    for (variant, text) in &wire.variants {
        if !spec.variants.contains(&variant.as_str()) {
            return Err(RuleError::UnknownVariant {
                file: f(),
                variant: variant.clone(),
                check,
                provided: spec.variants.join(", "),
            });
        }
        templates.push(text);
    }
    for v in spec.variants {
        if !wire.variants.contains_key(*v) {
            return Err(RuleError::MissingVariant {
                file: f(),
                variant: (*v).to_owned(),
                check,
            });
        }
    }
    for t in templates {
        let names = placeholders(t).map_err(|UnclosedBrace| RuleError::UnclosedPlaceholder {
            file: f(),
            template: t.to_owned(),
        })?;
        if let Some(bad) = names.iter().find(|n| !spec.placeholders.contains(n)) {
            return Err(RuleError::UnknownPlaceholder {
                file: f(),
                template: t.to_owned(),
                placeholder: (*bad).to_owned(),
                check,
                provided: spec.placeholders.join(", "),
            });
        }
    }
    for section in DOC_SECTIONS {
        if !wire.docs.contains(section) {
            return Err(RuleError::MissingDocs {
                file: f(),
                section: section.to_owned(),
            });
        }
    }
    Ok(Rule {
        id: Arc::from(wire.id),
        family: wire.family,
        summary: wire.summary,
        severity,
        scope: wire.scope,
        check: wire.check,
        message: wire.message,
        help: wire.help.map(Arc::from),
        variants: wire
            .variants
            .into_iter()
            .map(|(k, v)| (k, Arc::from(v)))
            .collect(),
        docs: wire.docs,
        enabled: wire.enabled,
        last_help: LastHelp::default(),
    })
}

/// A compiled set of rules, sorted by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

impl RuleSet {
    pub fn compile<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<RuleSet, Vec<RuleError>> {
        Self::collect(
            files
                .into_iter()
                .map(|(file, text)| (file, compile_rule(file, text))),
        )
    }

    /// Gather compiled rules: refuse duplicates, sort by id.
    fn collect<'a>(
        compiled: impl IntoIterator<Item = (&'a str, Result<Rule, RuleError>)>,
    ) -> Result<RuleSet, Vec<RuleError>> {
        let mut rules: Vec<Rule> = Vec::new();
        let mut errors = Vec::new();
        for (file, result) in compiled {
            match result {
                Ok(rule) if rules.iter().any(|r| r.id == rule.id) => {
                    errors.push(RuleError::Duplicate {
                        file: file.to_owned(),
                        id: rule.id.to_string(),
                    })
                }
                Ok(rule) => rules.push(rule),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        rules.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(RuleSet { rules })
    }
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id.as_ref() == id)
    }
    /// Rules whose check is of a given kind (a check kind may back several rules).
    pub fn with_check(&self, pred: impl Fn(&Check) -> bool) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(move |r| pred(&r.check))
    }
    pub fn families(&self) -> Vec<&str> {
        let mut f: Vec<&str> = self.rules.iter().map(|r| r.family.as_str()).collect();
        f.sort_unstable();
        f.dedup();
        f
    }
}

/// The rules compiled into the binary. An error here is a build defect (a test pins it never happens);
/// the CLI reports it and exits 2.
pub fn registry() -> Result<&'static RuleSet, &'static [RuleError]> {
    static REGISTRY: OnceLock<Result<RuleSet, Vec<RuleError>>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            // The build-time JSON of each rule file; a file that did not convert is compiled from
            // its YAML so the error names the real problem.
            let files = embedded_rule_files().iter().zip(embedded::RULE_JSON);
            RuleSet::collect(files.map(|((file, yaml), json)| {
                let rule = if json.is_empty() {
                    compile_rule(file, yaml)
                } else {
                    compile_rule_json(file, json)
                };
                (*file, rule)
            }))
        })
        .as_ref()
        .map_err(Vec::as_slice)
}

/// The rules a database's checks run, as an input of the database: installed by whoever builds
/// it (`install`), the embedded rules where none was (the CLI, the language server and the exec
/// planner run the embedded rules; a test runs a set of its own).
#[salsa::input(singleton)]
pub struct RuleSetInput {
    #[returns(ref)]
    pub set: Arc<RuleSet>,
}

/// The rules `db`'s checks run: each is executed as itself, with its own parameters and words
/// (`of_kind`).
pub fn rule_set(db: &dyn crate::db::Db) -> &RuleSet {
    match RuleSetInput::try_get(db) {
        Some(input) => input.set(db).as_ref(),
        None => rules(),
    }
}

/// Make `set` the rules `db`'s checks run, in place of the embedded ones.
pub fn install(db: &mut crate::db::RootDb, set: RuleSet) {
    use salsa::Setter;
    match RuleSetInput::try_get(db) {
        Some(input) => {
            input.set_set(db).to(Arc::new(set));
        }
        None => {
            RuleSetInput::new(db, Arc::new(set));
        }
    }
}

/// The rules of `db` whose check is of a kind (several rules may share a check kind, each with
/// its own parameters, severity and words: each fires on its own).
pub fn of_kind<'db>(
    db: &'db dyn crate::db::Db,
    pred: impl Fn(&Check) -> bool + 'db,
) -> impl Iterator<Item = &'db Rule> {
    rule_set(db).with_check(pred)
}

/// The embedded rules, or none if they failed to compile (the CLI refuses to run in that case).
pub fn rules() -> &'static RuleSet {
    static EMPTY: RuleSet = RuleSet { rules: Vec::new() };
    registry().unwrap_or(&EMPTY)
}

/// Where a diagnostic points and what it is about.
pub struct Site<'a> {
    pub path: &'a Arc<std::path::PathBuf>,
    pub span: Option<Span>,
    pub item_id: Option<&'a str>,
    pub space: Option<&'a Space>,
}

impl Rule {
    /// Build a diagnostic for this rule, filling its templates with `vars`.
    pub fn emit(
        &self,
        site: Site<'_>,
        vars: &[(&str, String)],
        variant: Option<&str>,
        notes: Vec<Note>,
    ) -> Diagnostic {
        let help = variant
            .and_then(|v| self.variants.get(v))
            .or(self.help.as_ref())
            .map(|t| {
                if t.contains(['{', '}']) {
                    self.last_help.share(render_template(t, vars))
                } else {
                    t.clone()
                }
            });
        Diagnostic {
            rule: self.id.clone(),
            severity: self.severity,
            path: site.path.clone(),
            span: site.span,
            item_id: site.item_id.map(str::to_owned),
            space: site.space.cloned(),
            message: render_template(&self.message, vars),
            help,
            notes,
            suggestions: None,
            edit: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "id: sample-rule\nfamily: chain\nsummary: s\nseverity: error\nscope: chain-edge\ncheck:\n  kind: invalid_item_id\nmessage: \"bad {executor_id}\"\nhelp: \"fix {item_id}\"\ndocs: |\n  ## What it does\n  ## Why is this bad?\n  ## Example\n  ## Use instead\n";

    #[test]
    fn embedded_rules_compile() {
        let set = registry()
            .map_err(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>())
            .unwrap();
        assert!(!set.rules.is_empty());
        // The build-time JSON form compiles to exactly what the YAML files say.
        assert!(embedded::RULE_JSON.iter().all(|j| !j.is_empty()));
        let from_yaml = RuleSet::compile(embedded_rule_files().iter().copied())
            .map_err(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>())
            .unwrap();
        assert_eq!(set, &from_yaml);
    }

    #[test]
    fn a_good_rule_compiles() {
        let rule = compile_rule("chain/sample-rule.yaml", GOOD).unwrap();
        assert_eq!(rule.severity, Severity::Error);
        assert_eq!(rule.scope, Scope::ChainEdge);
    }

    #[test]
    fn equal_helps_in_a_row_share_one_text() {
        let rule = compile_rule("chain/sample-rule.yaml", GOOD).unwrap();
        let path = Arc::new(std::path::PathBuf::from("t.py"));
        let emit = |id: &str| {
            let site = Site {
                path: &path,
                span: None,
                item_id: Some(id),
                space: None,
            };
            rule.emit(site, &[("item_id", id.to_owned())], None, Vec::new())
                .help
                .unwrap()
        };
        let (a, b, c, d) = (emit("a/b"), emit("a/b"), emit("x/y"), emit("a/b"));
        assert_eq!((&*a, &*c, &*d), ("fix a/b", "fix x/y", "fix a/b"));
        assert!(
            Arc::ptr_eq(&a, &b),
            "the same help twice in a row is one text"
        );
        assert!(!Arc::ptr_eq(&a, &d), "only the last help is remembered");
    }

    #[test]
    fn unknown_placeholder_is_refused() {
        let text = GOOD.replace("{executor_id}", "{nope}");
        let err = compile_rule("chain/sample-rule.yaml", &text).unwrap_err();
        assert!(
            matches!(err, RuleError::UnknownPlaceholder { ref placeholder, .. } if placeholder == "nope"),
            "{err}"
        );
    }

    #[test]
    fn unknown_check_is_refused() {
        let text = GOOD.replace("invalid_item_id", "made_up_check");
        assert!(matches!(
            compile_rule("chain/sample-rule.yaml", &text),
            Err(RuleError::Syntax { .. })
        ));
    }

    #[test]
    fn unknown_check_parameter_is_refused() {
        let text = GOOD.replace("kind: invalid_item_id", "kind: invalid_item_id\n  extra: 1");
        assert!(matches!(
            compile_rule("chain/sample-rule.yaml", &text),
            Err(RuleError::Syntax { .. })
        ));
    }

    #[test]
    fn scope_mismatch_is_refused() {
        let text = GOOD.replace("scope: chain-edge", "scope: file");
        assert!(matches!(
            compile_rule("chain/sample-rule.yaml", &text),
            Err(RuleError::ScopeMismatch { .. })
        ));
    }

    #[test]
    fn id_must_match_file_and_family_dir() {
        assert!(matches!(
            compile_rule("chain/other.yaml", GOOD),
            Err(RuleError::BadId { .. })
        ));
        assert!(matches!(
            compile_rule("space/sample-rule.yaml", GOOD),
            Err(RuleError::BadFamily { .. })
        ));
    }

    #[test]
    fn missing_docs_section_is_refused() {
        let text = GOOD.replace("  ## Use instead\n", "");
        assert!(matches!(
            compile_rule("chain/sample-rule.yaml", &text),
            Err(RuleError::MissingDocs { .. })
        ));
    }

    #[test]
    fn variants_are_checked() {
        let text = GOOD.replace("docs:", "variants:\n  hidden: \"x\"\ndocs:");
        assert!(matches!(
            compile_rule("chain/sample-rule.yaml", &text),
            Err(RuleError::UnknownVariant { .. })
        ));
    }

    #[test]
    fn templates_render_and_escape() {
        assert_eq!(
            render_template("a {x} {{y}} {z}", &[("x", "1".into())]),
            "a 1 {y} {z}"
        );
        assert_eq!(placeholders("a {x} {{y}}").unwrap(), vec!["x"]);
        assert!(placeholders("a {x").is_err());
    }
}
