//! The tree builder: the bundle copies, runtimes and tools of each space, and the planted problems.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::{Ext, Family, Item, Model, Role, Sp};
use crate::render::{
    PyExec, PySpec, RuntimeSpec, YamlKind, YamlSpec, render_python, render_runtime,
    render_yaml_tool, semver,
};
use crate::rng::Rng;
use crate::vocab::{
    DOMAINS, GRAPH_VARIANTS, LEAVES, MCP_SERVERS, MCP_VARIANTS, NOUNS, PROJECT_ROOTS, PY_VARIANTS,
    SUBAREAS, USER_ROOTS, VERBS,
};
use crate::{
    GenFile, GenOptions, GenSymlink, GeneratedTree, MAX_CHAIN_ELEMENTS, Manifest, PRIMITIVE_IDS,
    Planted,
};

/// The shipped system bundle, copied into every generated system space.
const BUNDLE: [(&str, &str, &str, Option<Family>); 17] = [
    (
        "rye/core/extractors/tool/tool_extractor",
        "extractor",
        include_str!("../../../.ai/tools/rye/core/extractors/tool/tool_extractor.yaml"),
        None,
    ),
    (
        "rye/core/primitives/subprocess",
        "primitive",
        include_str!("../../../.ai/tools/rye/core/primitives/subprocess.yaml"),
        None,
    ),
    (
        "rye/core/primitives/execute",
        "primitive",
        include_str!("../../../.ai/tools/rye/core/primitives/execute.yaml"),
        None,
    ),
    (
        "rye/core/primitives/http_client",
        "primitive",
        include_str!("../../../.ai/tools/rye/core/primitives/http_client.yaml"),
        None,
    ),
    (
        "rye/core/runtimes/python/script",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/python/script.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/python/function",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/python/function.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/node/node",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/node/node.yaml"),
        Some(Family::Node),
    ),
    (
        "rye/core/runtimes/bash/bash",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/bash/bash.yaml"),
        Some(Family::Bash),
    ),
    (
        "rye/core/runtimes/mcp/stdio",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/mcp/stdio.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/mcp/http",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/mcp/http.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/state-graph/runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/state-graph/runtime.yaml"),
        Some(Family::Graph),
    ),
    (
        "rye/core/runtimes/python_script_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/python_script_runtime.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/python_function_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/python_function_runtime.yaml"),
        Some(Family::Python),
    ),
    (
        "rye/core/runtimes/node_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/node_runtime.yaml"),
        Some(Family::Node),
    ),
    (
        "rye/core/runtimes/bash_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/bash_runtime.yaml"),
        Some(Family::Bash),
    ),
    (
        "rye/core/runtimes/mcp_stdio_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/mcp_stdio_runtime.yaml"),
        Some(Family::Mcp),
    ),
    (
        "rye/core/runtimes/mcp_http_runtime",
        "runtime",
        include_str!("../../../.ai/tools/rye/core/runtimes/mcp_http_runtime.yaml"),
        Some(Family::Mcp),
    ),
];

/// The shipped python/script runtime: never shadowed, so every space resolves it to the system file.
pub(crate) const BASE_SCRIPT: &str = "rye/core/runtimes/python/script";
pub(crate) const BASE_FUNCTION: &str = "rye/core/runtimes/python/function";

pub(crate) struct Gen {
    pub(crate) seed: u64,
    pub(crate) target: usize,
    pub(crate) rng: Rng,
    pub(crate) model: Model,
    /// Every id used in any space, plus reserved typo ids.
    pub(crate) taken: FxHashSet<String>,
    pub(crate) planted: Vec<Planted>,
    /// Runtimes a clean file of a space may name, with their element counts, per family.
    pub(crate) candidates: FxHashMap<(Sp, Family), Vec<(String, usize)>>,
    /// Clean fill tools per space that a higher space may shadow.
    pub(crate) shadowable: [Vec<usize>; 3],
    /// Ids of tools, for graph nodes to call.
    pub(crate) tool_ids: Vec<String>,
    pub(crate) tools: usize,
}

impl Gen {
    pub(crate) fn build(opts: &GenOptions) -> Gen {
        let mut g = Gen {
            seed: opts.seed,
            target: opts.tools,
            rng: Rng::new(opts.seed ^ 0x7279_6563_6861_696E),
            model: Model {
                items: Vec::new(),
                index: FxHashMap::default(),
            },
            taken: FxHashSet::default(),
            planted: Vec::new(),
            candidates: FxHashMap::default(),
            shadowable: [Vec::new(), Vec::new(), Vec::new()],
            tool_ids: Vec::new(),
            tools: 0,
        };
        g.system_bundle();
        g.runtimes();
        g.plants();
        g.fill();
        g
    }

    pub(crate) fn add(&mut self, item: Item) -> usize {
        self.taken.insert(item.id.clone());
        if item.role == Role::Tool {
            self.tools += 1;
            self.tool_ids.push(item.id.clone());
        }
        self.model.add(item)
    }

    pub(crate) fn plant(&mut self, rule: &str, at: usize) {
        let item = &self.model.items[at];
        self.planted.push(Planted {
            rule: rule.to_owned(),
            path: item.path(),
            item_id: item.id.clone(),
            members: Vec::new(),
        });
    }

    pub(crate) fn unique(&self, base: String, sep: char) -> String {
        if !self.taken.contains(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}{sep}{n}"))
            .find(|c| !self.taken.contains(c))
            .unwrap_or(base)
    }

    pub(crate) fn root(&mut self, space: Sp) -> &'static str {
        match space {
            Sp::Project => PROJECT_ROOTS[self.rng.below(PROJECT_ROOTS.len())],
            Sp::User => USER_ROOTS[self.rng.below(USER_ROOTS.len())],
            Sp::System => "rye",
        }
    }

    /// A new tool id `<root>/<domain>[/<sub>[/<leaf>]]/<verb>_<noun>`.
    pub(crate) fn fresh_tool_id(&mut self, space: Sp) -> String {
        let root = self.root(space);
        let mut id = format!("{root}/{}", self.rng.pick(&DOMAINS));
        let depth = [2, 3, 3, 3, 3, 4, 4, 2, 2, 3][self.rng.below(10)];
        if depth >= 3 {
            id.push('/');
            id.push_str(self.rng.word(&SUBAREAS));
        }
        if depth >= 4 {
            id.push('/');
            id.push_str(self.rng.word(&LEAVES));
        }
        let name = format!("{}_{}", self.rng.pick(&VERBS), self.rng.pick(&NOUNS));
        self.unique(format!("{id}/{name}"), '_')
    }

    /// A new runtime id for a wrapper of `family` in `space`.
    pub(crate) fn fresh_runtime_id(&mut self, space: Sp, family: Family) -> String {
        let variant = match family {
            Family::Mcp => *self.rng.pick(&MCP_VARIANTS),
            Family::Graph => *self.rng.pick(&GRAPH_VARIANTS),
            _ => *self.rng.pick(&PY_VARIANTS),
        };
        let base = match space {
            Sp::System => format!("rye/core/runtimes/{}/{variant}", family.dir()),
            Sp::User => format!("{}/runtimes/{}-{variant}", self.root(space), family.dir()),
            Sp::Project => {
                let root = self.root(space);
                if self.rng.percent(50) {
                    format!("{root}/runtimes/{}-{variant}", family.dir())
                } else {
                    format!(
                        "{root}/{}/runtimes/{}-{variant}",
                        self.rng.pick(&DOMAINS),
                        family.dir()
                    )
                }
            }
        };
        self.unique(base, '-')
    }

    fn system_bundle(&mut self) {
        for (id, tool_type, text, family) in BUNDLE {
            let role = if tool_type == "runtime" {
                Role::Runtime
            } else {
                Role::Infra
            };
            let mut item = Item::new(Sp::System, id.to_owned(), Ext::Yaml, role);
            item.family = family;
            item.tool_type = tool_type.to_owned();
            item.version = Some("1.0.0".to_owned());
            item.executor = (role == Role::Runtime).then(|| PRIMITIVE_IDS[0].to_owned());
            item.usable = role == Role::Runtime;
            item.contents = text.to_owned();
            self.add(item);
        }
    }

    /// Usable runtimes of `family` an element of `space` can name, deduplicated by id, with the
    /// element count of the chain it resolves to.
    fn visible_runtimes(&self, space: Sp, family: Family, max_len: usize) -> Vec<(String, usize)> {
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        let mut out = Vec::new();
        for item in &self.model.items {
            if item.role != Role::Runtime
                || item.family != Some(family)
                || !item.usable
                || !seen.insert(&item.id)
            {
                continue;
            }
            let Some(r) = self.model.resolve(&item.id, space) else {
                continue;
            };
            if !self.model.items[r].usable {
                continue;
            }
            if let Some(len) = self
                .model
                .len_via(&item.id, space)
                .filter(|l| *l <= max_len)
            {
                out.push((item.id.clone(), len));
            }
        }
        out
    }

    fn pick_family(&mut self) -> Family {
        [Family::Python, Family::Mcp, Family::Graph][self.rng.weighted(&[70, 18, 12])]
    }

    /// A usable runtime wrapping another one visible from `space` whose chain has at most
    /// `max_parent_len` elements.
    /// The first wrappers of a space (`stack`) are Python and take the deepest parent, so every
    /// tree has chains of every length up to the maximum.
    fn wrapper(&mut self, space: Sp, max_parent_len: usize, stack: bool) {
        let family = if stack {
            Family::Python
        } else {
            self.pick_family()
        };
        let parents = self.visible_runtimes(space, family, max_parent_len);
        if parents.is_empty() {
            return;
        }
        let (parent, _) = if stack || self.rng.percent(30) {
            let best = parents.iter().map(|p| p.1).max().unwrap_or(0);
            let deepest: Vec<&(String, usize)> = parents.iter().filter(|p| p.1 == best).collect();
            (*self.rng.pick(&deepest)).clone()
        } else {
            self.rng.pick(&parents).clone()
        };
        let id = self.fresh_runtime_id(space, family);
        self.new_runtime(
            space,
            id,
            family,
            Some(parent),
            Vec::new(),
            Vec::new(),
            None,
            true,
        );
    }

    /// A copy of a generated runtime of `from` in the higher space `into`, same id and parent.
    fn shadow_runtime(&mut self, from: Sp, into: Sp, max_len: usize) {
        let pool: Vec<usize> = (0..self.model.items.len())
            .filter(|&i| {
                let it = &self.model.items[i];
                it.space == from
                    && it.role == Role::Runtime
                    && it.usable
                    && it.link.is_none()
                    && !BUNDLE.iter().any(|b| b.0 == it.id)
                    && !self.model.in_space(&it.id, into)
            })
            .collect();
        if pool.is_empty() {
            return;
        }
        let orig = *self.rng.pick(&pool);
        let (id, family, parent) = {
            let it = &self.model.items[orig];
            (
                it.id.clone(),
                it.family.unwrap_or(Family::Python),
                it.executor.clone().unwrap_or_default(),
            )
        };
        match self.model.len_via(&parent, into) {
            Some(len) if len < max_len => {}
            _ => return,
        }
        self.new_runtime(
            into,
            id,
            family,
            Some(parent),
            Vec::new(),
            Vec::new(),
            None,
            true,
        );
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the runtime's fields"
    )]
    pub(crate) fn new_runtime(
        &mut self,
        space: Sp,
        id: String,
        family: Family,
        executor: Option<String>,
        inputs: Vec<String>,
        constraints: Vec<(String, String)>,
        note: Option<&str>,
        usable: bool,
    ) -> usize {
        let version = semver(&mut self.rng);
        let mut rng = self.rng.fork();
        let contents = render_runtime(
            &mut rng,
            &RuntimeSpec {
                id: &id,
                family,
                version: &version,
                executor: executor.as_deref(),
                inputs: &inputs,
                constraints: &constraints,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Yaml, Role::Runtime);
        item.family = Some(family);
        item.tool_type = "runtime".to_owned();
        item.executor = executor;
        item.version = Some(version);
        item.inputs = inputs;
        item.constraints = constraints;
        item.usable = usable;
        item.contents = contents;
        self.add(item)
    }

    fn runtimes(&mut self) {
        let n = self.target;
        let (ns, nu, np) = (3 + n / 600, 2 + n / 400, 2 + n / 400);
        for i in 0..ns {
            self.wrapper(Sp::System, 4, i < 3);
        }
        for _ in 0..1 + ns / 8 {
            self.shadow_runtime(Sp::System, Sp::User, 7);
        }
        for i in 0..nu {
            self.wrapper(Sp::User, 6, i < 2);
        }
        for _ in 0..1 + nu / 8 {
            self.shadow_runtime(Sp::User, Sp::Project, 9);
        }
        for i in 0..np {
            self.wrapper(Sp::Project, 8, i < 2);
        }
        // Tools name runtimes whose chain has at most 9 elements, so theirs has at most 10.
        for space in [Sp::Project, Sp::User, Sp::System] {
            for family in [Family::Python, Family::Mcp, Family::Graph] {
                let list = self.visible_runtimes(space, family, MAX_CHAIN_ELEMENTS - 1);
                self.candidates.insert((space, family), list);
            }
        }
    }

    /// A clean executor for a tool of `space` and `family`.
    pub(crate) fn pick_exec(&mut self, space: Sp, family: Family) -> String {
        let list = &self.candidates[&(space, family)];
        list[self.rng.below(list.len())].0.clone()
    }

    pub(crate) fn version_for_clean(&mut self) -> Option<String> {
        Some(semver(&mut self.rng))
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the tool's fields"
    )]
    pub(crate) fn new_py_tool(
        &mut self,
        space: Sp,
        id: String,
        exec: PyExec,
        version: Option<String>,
        outputs: Vec<String>,
        syntax_error: bool,
        note: Option<&str>,
    ) -> usize {
        let mut rng = self.rng.fork();
        let contents = render_python(
            &mut rng,
            &PySpec {
                id: &id,
                tool_type: "python",
                version: version.as_deref(),
                exec,
                outputs: &outputs,
                syntax_error,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Py, Role::Tool);
        item.tool_type = "python".to_owned();
        item.executor = match exec {
            PyExec::Id(e) => Some(e.to_owned()),
            PyExec::None | PyExec::Omit => None,
        };
        item.version = version;
        item.outputs = outputs;
        item.unparseable = syntax_error;
        item.contents = contents;
        self.add(item)
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a private constructor mirroring the tool's fields"
    )]
    pub(crate) fn new_yaml_tool(
        &mut self,
        space: Sp,
        id: String,
        kind: YamlKind,
        executor: Option<String>,
        version: Option<String>,
        outputs: Vec<String>,
        malformed: bool,
        note: Option<&str>,
    ) -> usize {
        let graph_targets: Vec<String> = if kind == YamlKind::Graph && !self.tool_ids.is_empty() {
            (0..self.rng.range(1, 4))
                .map(|_| self.tool_ids[self.rng.below(self.tool_ids.len())].clone())
                .collect()
        } else {
            Vec::new()
        };
        let mut rng = self.rng.fork();
        let contents = render_yaml_tool(
            &mut rng,
            &YamlSpec {
                id: &id,
                kind,
                version: version.as_deref(),
                executor: executor.as_deref(),
                outputs: &outputs,
                graph_targets: &graph_targets,
                malformed,
                note,
            },
        );
        let mut item = Item::new(space, id, Ext::Yaml, Role::Tool);
        item.tool_type = match kind {
            YamlKind::Command => "yaml",
            YamlKind::Http => "http",
            YamlKind::Mcp => "mcp",
            YamlKind::Graph => "graph",
            YamlKind::McpServer => "mcp_server",
        }
        .to_owned();
        item.executor = executor;
        item.version = version;
        item.outputs = outputs;
        item.unparseable = malformed;
        item.contents = contents;
        self.add(item)
    }

    /// A clean Python tool of `space` using `executor`.
    pub(crate) fn clean_py(&mut self, space: Sp, executor: &str) -> usize {
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        self.new_py_tool(
            space,
            id,
            PyExec::Id(executor),
            version,
            Vec::new(),
            false,
            None,
        )
    }

    pub(crate) fn random_space(&mut self) -> Sp {
        [Sp::Project, Sp::User, Sp::System][self.rng.weighted(&[50, 30, 20])]
    }

    pub(crate) fn mutable_space(&mut self) -> Sp {
        if self.rng.percent(60) {
            Sp::Project
        } else {
            Sp::User
        }
    }

    // -----------------------------------------------------------------------------------------
    // Clean tools

    fn fill(&mut self) {
        let remaining = self.target.saturating_sub(self.tools);
        let system = remaining * 20 / 100;
        let user = remaining * 30 / 100;
        let project = remaining - system - user;
        for (space, n) in [
            (Sp::System, system),
            (Sp::User, user),
            (Sp::Project, project),
        ] {
            for _ in 0..n {
                self.fill_tool(space);
            }
        }
    }

    fn fill_tool(&mut self, space: Sp) {
        let roll = self.rng.below(100);
        // A data file with no executor (library module or MCP server config).
        if roll < 3 {
            let at = self.terminal_tool(space);
            self.shadowable[space as usize].push(at);
            return;
        }
        // Shadow a clean tool of the next lower space.
        if roll < 7 {
            let lower = match space {
                Sp::Project => Some(Sp::User),
                Sp::User => Some(Sp::System),
                Sp::System => None,
            };
            if let Some(lower) = lower {
                let pool = &self.shadowable[lower as usize];
                if !pool.is_empty() {
                    let orig = pool[self.rng.below(pool.len())];
                    let (id, ext) = (
                        self.model.items[orig].id.clone(),
                        self.model.items[orig].ext,
                    );
                    if !self.model.in_space(&id, space) && self.model.items[orig].executor.is_some()
                    {
                        self.regular_tool(space, id, ext);
                        return;
                    }
                }
            }
        }
        let id = self.fresh_tool_id(space);
        let ext = if self.rng.percent(70) {
            Ext::Py
        } else {
            Ext::Yaml
        };
        let at = self.regular_tool(space, id, ext);
        self.shadowable[space as usize].push(at);
    }

    fn regular_tool(&mut self, space: Sp, id: String, ext: Ext) -> usize {
        let version = self.version_for_clean();
        let outputs: Vec<String> = if self.rng.percent(8) {
            vec![["report", "summary", "artifact"][self.rng.below(3)].to_owned()]
        } else {
            Vec::new()
        };
        match ext {
            Ext::Py => {
                let exec = self.pick_exec(space, Family::Python);
                self.new_py_tool(space, id, PyExec::Id(&exec), version, outputs, false, None)
            }
            Ext::Yaml => {
                let kind = [
                    YamlKind::Command,
                    YamlKind::Http,
                    YamlKind::Mcp,
                    YamlKind::Graph,
                ][self.rng.weighted(&[35, 20, 25, 20])];
                let exec = match kind {
                    YamlKind::Command => {
                        PRIMITIVE_IDS[if self.rng.percent(85) { 0 } else { 1 }].to_owned()
                    }
                    YamlKind::Http => PRIMITIVE_IDS[2].to_owned(),
                    YamlKind::Mcp => self.pick_exec(space, Family::Mcp),
                    _ => self.pick_exec(space, Family::Graph),
                };
                self.new_yaml_tool(space, id, kind, Some(exec), version, outputs, false, None)
            }
        }
    }

    /// A Python library module or an MCP server config: tool types that need no executor.
    fn terminal_tool(&mut self, space: Sp) -> usize {
        let root = self.root(space);
        let version = self.version_for_clean();
        if self.rng.percent(50) {
            let base = format!(
                "{root}/{}/lib/{}_utils",
                self.rng.pick(&DOMAINS),
                self.rng.pick(&NOUNS)
            );
            let id = self.unique(base, '_');
            let mut rng = self.rng.fork();
            let contents = render_python(
                &mut rng,
                &PySpec {
                    id: &id,
                    tool_type: "python_lib",
                    version: version.as_deref(),
                    exec: PyExec::None,
                    outputs: &[],
                    syntax_error: false,
                    note: None,
                },
            );
            let mut item = Item::new(space, id, Ext::Py, Role::Tool);
            item.tool_type = "python_lib".to_owned();
            item.version = version;
            item.contents = contents;
            self.add(item)
        } else {
            let base = format!("{root}/mcp/servers/{}", self.rng.pick(&MCP_SERVERS));
            let id = self.unique(base, '-');
            self.new_yaml_tool(
                space,
                id,
                YamlKind::McpServer,
                None,
                version,
                Vec::new(),
                false,
                None,
            )
        }
    }

    // -----------------------------------------------------------------------------------------
    // Output

    pub(crate) fn finish(mut self) -> GeneratedTree {
        let mut planted = std::mem::take(&mut self.planted);
        planted.sort();
        debug_assert_eq!(
            planted,
            self.model.findings(),
            "planted findings disagree with the model (seed {})",
            self.seed
        );
        let flagged: FxHashSet<&str> = planted
            .iter()
            .flat_map(|p| {
                std::iter::once(p.path.as_str()).chain(p.members.iter().map(String::as_str))
            })
            .collect();
        let clean_tools = self
            .model
            .items
            .iter()
            .filter(|it| it.role == Role::Tool && !flagged.contains(it.path().as_str()))
            .count();
        let paths: Vec<String> = self.model.items.iter().map(Item::path).collect();
        let mut files = Vec::new();
        let mut symlinks = Vec::new();
        for (item, path) in self.model.items.iter_mut().zip(&paths) {
            match item.link {
                Some(t) => symlinks.push(GenSymlink {
                    path: path.clone(),
                    target: Gen::link_target(path, &paths[t]),
                }),
                // Moved, not cloned: the model is dropped here and large trees hold hundreds of MB.
                None => files.push(GenFile {
                    path: path.clone(),
                    contents: std::mem::take(&mut item.contents),
                }),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        symlinks.sort_by(|a, b| a.path.cmp(&b.path));
        let manifest = Manifest {
            seed: self.seed,
            tools: self.tools,
            files: files.len(),
            planted,
            clean_tools,
            signed_by: None,
        };
        GeneratedTree {
            files,
            symlinks,
            manifest,
        }
    }
}
