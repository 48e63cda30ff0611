//! L5 the anchor system and `verify_deps` (§6): the anchor config and context of a chain, whether
//! the anchor is active (asking the edge about marker files), `env_paths` and `cwd` templating,
//! the context merged under the caller parameters, and the dependency walk to ask for and its
//! judgement (symlink escapes by path components, §15.27 fixed). Pure: machine facts come only
//! through `facts::Ask`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as J;

use super::facts::{Ask, DepListing, DepWalk};
use crate::analysis::chain_view::ChainView;
use crate::analysis::verify::ExtraFile;
use crate::exec::template::fill_names;
use crate::integrity::ItemKind;
use crate::model::EMBEDDED_PATH_PREFIX;
use crate::pyrepr::py_truthy;

/// One chain element as the anchor system sees it (tool first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnchorElement {
    pub item_id: String,
    /// Its file (`None` for a primitive resolved by key). Paths of the embedded bundle start with
    /// `EMBEDDED_PATH_PREFIX` and do not exist on disk.
    pub path: Option<PathBuf>,
    /// The element's `anchor` metadata.
    pub anchor: Option<J>,
    /// The element's `verify_deps` metadata.
    pub verify_deps: Option<J>,
    /// The `.ai` folder of the element's space (`None` without a file): what its `anchor.lib`
    /// must stay inside.
    pub space_root: Option<PathBuf>,
}

impl AnchorElement {
    /// The anchor view of every element of a resolved chain.
    pub fn from_chain(view: &ChainView) -> Vec<AnchorElement> {
        view.elements
            .iter()
            .map(|e| {
                let json = |pick: fn(&crate::model::Metadata) -> Option<J>| {
                    e.metadata.as_deref().and_then(pick)
                };
                AnchorElement {
                    item_id: e.item_id.clone(),
                    path: e.path.clone(),
                    anchor: json(|m| m.anchor().map(|v| v.value.to_json())),
                    verify_deps: json(|m| m.verify_deps().map(|v| v.value.to_json())),
                    space_root: e.space_root.clone(),
                }
            })
            .collect()
    }
}

/// `anchor.mode` (§6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorMode {
    Auto,
    Always,
    Never,
}

/// `anchor.root` (§6.1; an unknown value means `tool_dir`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorRoot {
    ToolDir,
    ToolParent,
    ProjectPath,
}

/// One `env_paths` entry: the variable and its templates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvPath {
    pub var: String,
    pub prepend: Vec<String>,
    pub append: Vec<String>,
}

/// The anchor config of a chain (§6.1), from the first element that has an `anchor` mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorConfig {
    /// Index of the declaring element in the chain.
    pub source: usize,
    /// `enabled` (default false; only a literal `true` enables).
    pub enabled: bool,
    pub mode: AnchorMode,
    pub markers_any: Vec<String>,
    pub root: AnchorRoot,
    pub cwd: Option<String>,
    /// In declaration order.
    pub env_paths: Vec<EnvPath>,
}

/// The anchor context (§6.2): template variables, always computed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorContext {
    pub tool_path: String,
    pub tool_dir: String,
    pub tool_parent: String,
    pub anchor_path: String,
    pub runtime_lib: String,
    pub project_path: String,
    pub user_space: String,
    pub system_space: String,
}

impl AnchorContext {
    /// `(name, value)` pairs, in the reference's order.
    pub fn entries(&self) -> [(&'static str, &str); 8] {
        [
            ("tool_path", &self.tool_path),
            ("tool_dir", &self.tool_dir),
            ("tool_parent", &self.tool_parent),
            ("anchor_path", &self.anchor_path),
            ("runtime_lib", &self.runtime_lib),
            ("project_path", &self.project_path),
            ("user_space", &self.user_space),
            ("system_space", &self.system_space),
        ]
    }
    #[cfg(any(test, feature = "testing"))]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries()
            .into_iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// `verify_deps.scope` (§6.6; an unknown value means `anchor`, as in the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepScope {
    Anchor,
    ToolDir,
    ToolSiblings,
    ToolFile,
}

/// The `verify_deps` config (§6.6), from the first element that has `verify_deps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyDepsConfig {
    pub source: usize,
    pub enabled: bool,
    pub scope: DepScope,
    pub recursive: bool,
    /// Exact, case-sensitive name suffixes including the dot; none listed verifies nothing.
    pub extensions: Vec<String>,
    pub exclude_dirs: Vec<String>,
}

/// Directories a walk skips when `exclude_dirs` is not given.
pub const DEFAULT_EXCLUDE_DIRS: [&str; 4] = ["__pycache__", ".venv", "node_modules", ".git"];

/// The anchor of one execution: config, context (with `anchor_path` set to the root when
/// active), activation and the `verify_deps` config in force.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub config: Option<AnchorConfig>,
    pub context: AnchorContext,
    pub active: bool,
    /// `Some` only when the anchor is active and `verify_deps.enabled` is true (§6.6).
    pub verify: Option<VerifyDepsConfig>,
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Python's `Path.parent` (the root is its own parent; a bare name's parent is `.` there, but
/// chain paths are absolute).
fn parent_of(p: &Path) -> PathBuf {
    p.parent()
        .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
}

fn is_embedded(p: &str) -> bool {
    p.starts_with(EMBEDDED_PATH_PREFIX)
}

/// A path the edge can be asked about: absolute and not in the embedded bundle.
fn on_disk(p: &str) -> bool {
    !is_embedded(p) && Path::new(p).is_absolute()
}

fn strings(v: Option<&J>) -> Vec<String> {
    match v {
        Some(J::String(s)) => vec![s.clone()],
        Some(J::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Parse an `anchor` mapping (§6.1).
pub fn anchor_config(source: usize, v: &J) -> AnchorConfig {
    let mode = match v.get("mode").and_then(J::as_str) {
        Some("always") => AnchorMode::Always,
        Some("never") => AnchorMode::Never,
        _ => AnchorMode::Auto,
    };
    let root = match v.get("root").and_then(J::as_str) {
        Some("tool_parent") => AnchorRoot::ToolParent,
        Some("project_path") => AnchorRoot::ProjectPath,
        _ => AnchorRoot::ToolDir,
    };
    let env_paths = v
        .get("env_paths")
        .and_then(J::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, ops)| ops.is_object())
        .map(|(var, ops)| EnvPath {
            var: var.clone(),
            prepend: strings(ops.get("prepend")),
            append: strings(ops.get("append")),
        })
        .collect();
    AnchorConfig {
        source,
        enabled: v.get("enabled") == Some(&J::Bool(true)),
        mode,
        markers_any: strings(v.get("markers_any")),
        root,
        cwd: v.get("cwd").and_then(J::as_str).map(str::to_owned),
        env_paths,
    }
}

/// Parse a `verify_deps` mapping (§6.6 defaults).
pub fn verify_deps_config(source: usize, v: &J) -> VerifyDepsConfig {
    let scope = match v.get("scope").and_then(J::as_str) {
        Some("tool_dir") => DepScope::ToolDir,
        Some("tool_siblings") => DepScope::ToolSiblings,
        Some("tool_file") => DepScope::ToolFile,
        _ => DepScope::Anchor,
    };
    VerifyDepsConfig {
        source,
        enabled: v.get("enabled") == Some(&J::Bool(true)),
        scope,
        recursive: v.get("recursive").and_then(J::as_bool).unwrap_or(true),
        extensions: strings(v.get("extensions")),
        exclude_dirs: match v.get("exclude_dirs") {
            Some(x) => strings(Some(x)),
            None => DEFAULT_EXCLUDE_DIRS.map(str::to_owned).to_vec(),
        },
    }
}

/// The context of §6.2 (anchor inactive: `anchor_path` is the tool's directory). `runtime_lib`
/// is `<dir of the first element with anchor.lib>/<lib>` with `.` components dropped and `..`
/// kept (as Python's `pathlib` joins); `""` when no element has one or when that element is part
/// of the embedded bundle (it has no directory on disk).
pub fn anchor_context(
    chain: &[AnchorElement],
    project_path: &str,
    user_space: &str,
    system_space: &str,
) -> AnchorContext {
    let tool = chain.first().and_then(|e| e.path.as_deref());
    let (tool_path, tool_dir, tool_parent) = match tool {
        Some(p) => {
            let dir = parent_of(p);
            (path_str(p), path_str(&dir), path_str(&parent_of(&dir)))
        }
        None => Default::default(),
    };
    let runtime_lib = chain
        .iter()
        .find_map(|e| {
            let lib = e.anchor.as_ref()?.get("lib").filter(|l| py_truthy(l))?;
            Some((e, lib))
        })
        .and_then(|(e, lib)| {
            let lib = lib.as_str()?;
            let path = e.path.as_deref()?;
            if is_embedded(&path_str(path)) {
                return None;
            }
            let joined: PathBuf = parent_of(path).join(lib).components().collect();
            Some(path_str(&joined))
        })
        .unwrap_or_default();
    AnchorContext {
        tool_path,
        anchor_path: tool_dir.clone(),
        tool_dir,
        tool_parent,
        runtime_lib,
        project_path: project_path.to_owned(),
        user_space: user_space.to_owned(),
        system_space: system_space.to_owned(),
    }
}

/// `path` with `.` dropped and each `..` taking away the component before it (lexically, as a
/// path written in a header is read before anything on disk is consulted).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Why the chain's `anchor.lib` (the one `runtime_lib` is made from) leaves its element's
/// space, if it does (DESIGN.md: every path built from item text stays inside its space). An
/// absolute `lib`, or one whose `..` climb out of the space's `.ai/`, would put a folder outside
/// every space on the tool's search path.
pub fn anchor_lib_problem(chain: &[AnchorElement]) -> Option<String> {
    let (e, lib) = chain.iter().find_map(|e| {
        let lib = e.anchor.as_ref()?.get("lib").filter(|l| py_truthy(l))?;
        Some((e, lib.as_str()?))
    })?;
    let (path, root) = (e.path.as_deref()?, e.space_root.as_deref()?);
    if is_embedded(&path_str(path)) {
        return None;
    }
    let joined = lexical(&parent_of(path).join(lib));
    (!joined.starts_with(lexical(root))).then(|| {
        format!(
            "The anchor `lib: {lib}` of {} leaves its space: it names {}, outside {}",
            e.item_id,
            joined.display(),
            root.display()
        )
    })
}

/// Whether the anchor applies (§6.3): never/disabled ⇒ no; always ⇒ yes; auto ⇒ any marker is a
/// file directly in the tool's directory (no upward search, §15.17). `None` while a marker's
/// presence is not known yet. An embedded or pathless tool has no markers on disk.
pub fn anchor_applies(cfg: &AnchorConfig, tool_dir: &str, ask: &Ask<'_>) -> Option<bool> {
    if cfg.mode == AnchorMode::Never || !cfg.enabled {
        return Some(false);
    }
    if cfg.mode == AnchorMode::Always {
        return Some(true);
    }
    if !on_disk(tool_dir) {
        return Some(false);
    }
    let mut unknown = false;
    for marker in &cfg.markers_any {
        // A marker is a file name, never a path that leaves the directory.
        if marker.is_empty() || marker.contains('/') || marker == ".." || marker == "." {
            continue;
        }
        match ask.is_file(&Path::new(tool_dir).join(marker)) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown { None } else { Some(false) }
}

/// The anchor of a chain (§6.1–6.4 steps 1 and the verify_deps config). `None` while facts are
/// missing (`ask.needs()` says which).
pub fn plan_anchor(
    chain: &[AnchorElement],
    project_path: &str,
    user_space: &str,
    system_space: &str,
    ask: &Ask<'_>,
) -> Option<Anchor> {
    let mut context = anchor_context(chain, project_path, user_space, system_space);
    let config = chain.iter().enumerate().find_map(|(i, e)| {
        e.anchor
            .as_ref()
            .filter(|a| a.is_object() && py_truthy(a))
            .map(|a| anchor_config(i, a))
    });
    let active = match &config {
        Some(cfg) => anchor_applies(cfg, &context.tool_dir, ask)?,
        None => false,
    };
    if active && let Some(cfg) = &config {
        context.anchor_path = match cfg.root {
            AnchorRoot::ToolDir => context.tool_dir.clone(),
            AnchorRoot::ToolParent => context.tool_parent.clone(),
            AnchorRoot::ProjectPath => context.project_path.clone(),
        };
    }
    let verify = if active {
        chain
            .iter()
            .enumerate()
            .find_map(|(i, e)| {
                e.verify_deps
                    .as_ref()
                    .filter(|v| v.is_object() && py_truthy(v))
                    .map(|v| verify_deps_config(i, v))
            })
            .filter(|v| v.enabled)
    } else {
        None
    };
    Some(Anchor {
        config,
        context,
        active,
        verify,
    })
}

/// `{name}` templating with the anchor context (§6.5): names are word characters; unknown
/// placeholders are kept verbatim.
pub fn template(s: &str, ctx: &AnchorContext) -> String {
    fill_names(s, &ctx.entries())
}

/// The path-list separator (`os.pathsep` on the platforms ryechain runs tools on).
pub const PATH_SEPARATOR: char = ':';

/// Apply `env_paths` to a resolved environment (§6.5): each variable starts from `env`, else
/// `os_env`, else empty; split on `:` dropping empty parts; `prepend` templates are processed in
/// reverse, each put first unless empty or already present (an existing entry is not moved);
/// `append` templates are added last under the same rule.
pub fn apply_env_paths(
    env: &mut BTreeMap<String, String>,
    os_env: &BTreeMap<String, String>,
    env_paths: &[EnvPath],
    ctx: &AnchorContext,
) {
    for ep in env_paths {
        let existing = env
            .get(&ep.var)
            .or_else(|| os_env.get(&ep.var))
            .map(String::as_str)
            .unwrap_or_default();
        let mut parts: Vec<String> = existing
            .split(PATH_SEPARATOR)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        for t in ep.prepend.iter().rev() {
            let p = template(t, ctx);
            if !p.is_empty() && !parts.contains(&p) {
                parts.insert(0, p);
            }
        }
        for t in &ep.append {
            let p = template(t, ctx);
            if !p.is_empty() && !parts.contains(&p) {
                parts.push(p);
            }
        }
        env.insert(ep.var.clone(), parts.join(&PATH_SEPARATOR.to_string()));
    }
}

impl Anchor {
    /// §6.4 step 4: apply `env_paths` when the anchor is active (no-op otherwise).
    pub fn apply_env(&self, env: &mut BTreeMap<String, String>, os_env: &BTreeMap<String, String>) {
        if let (true, Some(cfg)) = (self.active, &self.config) {
            apply_env_paths(env, os_env, &cfg.env_paths, &self.context);
        }
    }

    /// §6.4 step 5: the templated `cwd` when the anchor is active and declares one.
    pub fn cwd(&self) -> Option<String> {
        let cfg = self.config.as_ref().filter(|_| self.active)?;
        cfg.cwd.as_deref().map(|c| template(c, &self.context))
    }

    /// The parameters after §6.4: the context underneath (always, even when inactive), the
    /// caller's parameters over it, and the anchor's `cwd` over a caller-supplied one.
    #[cfg(any(test, feature = "testing"))]
    pub fn parameters(&self, caller: &serde_json::Map<String, J>) -> serde_json::Map<String, J> {
        let mut out: serde_json::Map<String, J> = self
            .context
            .entries()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), J::String(v.to_owned())))
            .collect();
        for (k, v) in caller {
            out.insert(k.clone(), v.clone());
        }
        if let Some(cwd) = self.cwd() {
            out.insert("cwd".to_owned(), J::String(cwd));
        }
        out
    }

    /// The walk §6.6 asks for: `None` when nothing is to be verified (verify_deps off or not
    /// enabled, the anchor inactive, scope `tool_file`, no extensions listed, or a base in the
    /// embedded bundle — trusted by construction — or without a path).
    pub fn dep_walk(&self) -> Option<DepWalk> {
        let v = self.verify.as_ref()?;
        let (base, recursive) = match v.scope {
            DepScope::ToolFile => return None,
            DepScope::ToolSiblings => (&self.context.tool_dir, false),
            DepScope::ToolDir => (&self.context.tool_dir, v.recursive),
            DepScope::Anchor => (&self.context.anchor_path, v.recursive),
        };
        if v.extensions.is_empty() || !on_disk(base) {
            return None;
        }
        Some(DepWalk {
            base: PathBuf::from(base),
            recursive,
            extensions: v.extensions.clone(),
            exclude_dirs: v.exclude_dirs.clone(),
        })
    }

    /// §6.4 step 2: the dependency files to verify (each through the integrity check as an
    /// `ExtraFile`), or the refusal. `None` while the walk is not known yet.
    pub fn dependencies(&self, ask: &Ask<'_>) -> Option<Result<Vec<ExtraFile>, String>> {
        let Some(walk) = self.dep_walk() else {
            return Some(Ok(Vec::new()));
        };
        ask.walk(&walk).map(dep_files)
    }
}

/// Judge a `verify_deps` listing (§6.6): every file must really live under the canonical base,
/// judged by path components (`/a/bc/x` is not under `/a/b`, fixing §15.27), and be readable.
/// A walk error refuses too: a dependency that cannot be listed cannot be verified (the
/// reference's walk skips such directories silently). A missing base has nothing to verify.
pub fn dep_files(listing: &DepListing) -> Result<Vec<ExtraFile>, String> {
    let Some(base) = &listing.real_base else {
        return Ok(Vec::new());
    };
    if let Some(e) = listing.errors.first() {
        return Err(format!(
            "Cannot verify dependencies under {}: {e}",
            base.display()
        ));
    }
    let mut out = Vec::with_capacity(listing.files.len());
    for f in &listing.files {
        let Some(real) = &f.real else {
            return Err(format!(
                "Cannot verify dependency {}: it does not resolve to a file (a dangling symlink?)",
                f.path.display()
            ));
        };
        if !real.starts_with(base) {
            return Err(format!(
                "Symlink escape: {} resolves to {}",
                f.path.display(),
                real.display()
            ));
        }
        match &f.text {
            Ok(text) => out.push(ExtraFile {
                path: f.path.clone(),
                kind: ItemKind::Tool,
                text: text.clone(),
            }),
            Err(reason) => {
                return Err(format!(
                    "Cannot verify dependency {}: {reason}",
                    f.path.display()
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> AnchorContext {
        AnchorContext {
            tool_dir: "/p/t".into(),
            anchor_path: "/p/t".into(),
            ..AnchorContext::default()
        }
    }

    #[test]
    fn template_keeps_unknown_and_malformed_placeholders() {
        let c = ctx();
        assert_eq!(template("{tool_dir}/x", &c), "/p/t/x");
        assert_eq!(template("{nope}/{tool_dir}", &c), "{nope}//p/t");
        assert_eq!(
            template("{ tool_dir}{}{tool_dir", &c),
            "{ tool_dir}{}{tool_dir"
        );
        assert_eq!(template("{{tool_dir}}", &c), "{/p/t}");
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!py_truthy(&json!({})));
        assert!(!py_truthy(&json!("")));
        assert!(py_truthy(&json!({"enabled": false})));
        assert!(!py_truthy(&json!(0)));
    }
}
