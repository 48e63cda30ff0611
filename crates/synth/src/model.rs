//! The in-memory model of a tree: items, spaces, executor slots, and the model's own lint.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use ryechain::model::item_id_problem;

use crate::{MAX_CHAIN_ELEMENTS, PRIMITIVE_IDS, Planted, TERMINAL_TOOL_TYPES, rule};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Sp {
    Project = 0,
    User = 1,
    System = 2,
}

impl Sp {
    fn dir(self) -> &'static str {
        match self {
            Sp::Project => "project",
            Sp::User => "user",
            Sp::System => "system",
        }
    }
    /// Spaces an element of this space resolves executors in, in search order (§1.7).
    fn visible(self) -> &'static [Sp] {
        match self {
            Sp::Project => &[Sp::Project, Sp::User, Sp::System],
            Sp::User => &[Sp::User, Sp::System],
            Sp::System => &[Sp::System],
        }
    }
    fn precedence(self) -> u8 {
        match self {
            Sp::Project => 3,
            Sp::User => 2,
            Sp::System => 1,
        }
    }
}

/// Extensions in resolution order: `x.py` beats `x.yaml` in one space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ext {
    Py = 0,
    Yaml = 1,
}

impl Ext {
    fn as_str(self) -> &'static str {
        match self {
            Ext::Py => "py",
            Ext::Yaml => "yaml",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Tool,
    Runtime,
    /// Primitive and extractor files of the system bundle.
    Infra,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Python,
    Mcp,
    Graph,
    Node,
    Bash,
}

impl Family {
    pub(crate) fn dir(self) -> &'static str {
        match self {
            Family::Python => "python",
            Family::Mcp => "mcp",
            Family::Graph => "state-graph",
            Family::Node => "node",
            Family::Bash => "bash",
        }
    }
}

/// One file of the tree and the metadata its text declares.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub(crate) space: Sp,
    pub(crate) id: String,
    pub(crate) ext: Ext,
    pub(crate) role: Role,
    pub(crate) family: Option<Family>,
    pub(crate) tool_type: String,
    pub(crate) executor: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) inputs: Vec<String>,
    pub(crate) outputs: Vec<String>,
    /// `child_constraints`: (child id, min_version).
    pub(crate) constraints: Vec<(String, String)>,
    /// The text does not parse (planted `unparseable-metadata`).
    pub(crate) unparseable: bool,
    /// This file is a symlink to `items[link]` (its metadata is the target's).
    pub(crate) link: Option<usize>,
    /// Clean and free for other clean files to use as their executor.
    pub(crate) usable: bool,
    pub(crate) contents: String,
}

impl Item {
    pub(crate) fn new(space: Sp, id: String, ext: Ext, role: Role) -> Self {
        Item {
            space,
            id,
            ext,
            role,
            family: None,
            tool_type: String::new(),
            executor: None,
            version: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            constraints: Vec::new(),
            unparseable: false,
            link: None,
            usable: false,
            contents: String::new(),
        }
    }
    pub(crate) fn path(&self) -> String {
        format!(
            "{}/.ai/tools/{}.{}",
            self.space.dir(),
            self.id,
            self.ext.as_str()
        )
    }
}

/// Where a chain walk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChainEnd {
    /// Reached a primitive (or a legitimately terminal file); the element count.
    Ok(usize),
    Missing,
    Cycle,
    /// Unparseable file, invalid id, or a terminal that is not a primitive.
    Broken,
}

/// Files per id: `[space][ext]`.
type Slots = [[Option<usize>; 2]; 3];

pub(crate) fn is_primitive(id: &str) -> bool {
    PRIMITIVE_IDS.contains(&id)
}

fn is_terminal_type(tool_type: &str) -> bool {
    TERMINAL_TOOL_TYPES.contains(&tool_type)
}

/// Strict `MAJOR.MINOR.PATCH` (the shape every clean file uses).
fn is_plain_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

pub(crate) struct Model {
    pub(crate) items: Vec<Item>,
    pub(crate) index: FxHashMap<String, Slots>,
}

impl Model {
    pub(crate) fn add(&mut self, item: Item) -> usize {
        let i = self.items.len();
        let slots = self.index.entry(item.id.clone()).or_default();
        let slot = &mut slots[item.space as usize][item.ext as usize];
        debug_assert!(slot.is_none(), "duplicate file {}", item.path());
        *slot = Some(i);
        self.items.push(item);
        i
    }
    /// The item whose text this file has (its symlink target, or itself).
    fn meta(&self, i: usize) -> &Item {
        let item = &self.items[i];
        item.link.map_or(item, |t| &self.items[t])
    }
    /// The space the file really lives in (a symlink's target space).
    fn real_space(&self, i: usize) -> Sp {
        self.meta(i).space
    }
    /// Resolve `id` as an element of space `from` would (§1.7).
    pub(crate) fn resolve(&self, id: &str, from: Sp) -> Option<usize> {
        let slots = self.index.get(id)?;
        from.visible()
            .iter()
            .find_map(|sp| slots[*sp as usize].iter().flatten().next().copied())
    }
    pub(crate) fn in_space(&self, id: &str, sp: Sp) -> bool {
        self.index
            .get(id)
            .is_some_and(|s| s[sp as usize].iter().any(Option::is_some))
    }
    /// Walk the chain from file `start`.
    pub(crate) fn chain(&self, start: usize) -> ChainEnd {
        let mut seen = vec![start];
        let mut cur = start;
        loop {
            let meta = self.meta(cur);
            if meta.unparseable {
                return ChainEnd::Broken;
            }
            let Some(exec) = meta.executor.as_deref() else {
                let terminal =
                    is_primitive(&self.items[cur].id) || is_terminal_type(&meta.tool_type);
                return if terminal {
                    ChainEnd::Ok(seen.len())
                } else {
                    ChainEnd::Broken
                };
            };
            if is_primitive(exec) {
                return ChainEnd::Ok(seen.len() + 1);
            }
            if item_id_problem(exec).is_some() {
                return ChainEnd::Broken;
            }
            let Some(next) = self.resolve(exec, self.real_space(cur)) else {
                return ChainEnd::Missing;
            };
            if seen.contains(&next) {
                return ChainEnd::Cycle;
            }
            seen.push(next);
            cur = next;
        }
    }

    /// Every finding the rule semantics of the module docs give for this model, derived from the
    /// files alone (not from what was meant to be planted). The manifest must agree exactly;
    /// `finish` checks it in debug builds and the tests check it at several sizes.
    pub(crate) fn findings(&self) -> Vec<Planted> {
        let m = self;
        let mut out = Vec::new();
        let at = |rule: &str, i: usize| Planted {
            rule: rule.to_owned(),
            path: m.items[i].path(),
            item_id: m.items[i].id.clone(),
            members: Vec::new(),
        };
        for i in 0..m.items.len() {
            let item = &m.items[i];
            let meta = m.meta(i);
            if meta.unparseable {
                out.push(at(rule::UNPARSEABLE_METADATA, i));
                continue;
            }
            if meta.version.as_deref().is_some_and(|v| !is_plain_semver(v)) {
                out.push(at(rule::INVALID_VERSION, i));
            }
            if item.ext == Ext::Yaml
                && m.index[&item.id][item.space as usize][Ext::Py as usize].is_some()
            {
                out.push(at(rule::AMBIGUOUS_ITEM, i));
            }
            let Some(exec) = meta.executor.as_deref() else {
                if !is_terminal_type(&meta.tool_type) && !is_primitive(&item.id) {
                    out.push(at(rule::UNKNOWN_PRIMITIVE, i));
                }
                continue;
            };
            if is_primitive(exec) {
                continue;
            }
            if item_id_problem(exec).is_some() {
                out.push(at(rule::INVALID_ITEM_ID, i));
                continue;
            }
            let Some(parent) = m.resolve(exec, m.real_space(i)) else {
                out.push(at(rule::MISSING_EXECUTOR, i));
                continue;
            };
            let (child_sp, parent_sp) = (m.real_space(i), m.real_space(parent));
            if child_sp.precedence() < parent_sp.precedence() {
                // §4.5: a system → mutable edge is also an upward dependency; both are reported.
                if child_sp == Sp::System {
                    out.push(at(rule::SYSTEM_DELEGATES_TO_MUTABLE, i));
                }
                out.push(at(rule::UPWARD_SPACE_DEPENDENCY, i));
            }
            let pm = m.meta(parent);
            if !meta.outputs.is_empty() && pm.inputs.iter().any(|x| !meta.outputs.contains(x)) {
                out.push(at(rule::UNSATISFIED_INPUTS, i));
            }
            if let Some((_, min)) = pm.constraints.iter().find(|(c, _)| *c == item.id) {
                match meta.version.as_deref() {
                    None => out.push(at(rule::UNVERSIONED_CONSTRAINED_CHILD, i)),
                    Some(v) => {
                        let parse = |s: &str| semver::Version::parse(s).ok();
                        if parse(v).zip(parse(min)).is_some_and(|(v, min)| v < min) {
                            out.push(at(rule::VERSION_CONSTRAINT_VIOLATION, i));
                        }
                    }
                }
            }
            if let ChainEnd::Ok(n) = m.chain(i)
                && n > MAX_CHAIN_ELEMENTS
            {
                out.push(at(rule::CHAIN_TOO_DEEP, i));
            }
        }
        // Cycles: follow executor edges from every file; each cycle once.
        let next = |i: usize| -> Option<usize> {
            let meta = m.meta(i);
            let exec = meta.executor.as_deref()?;
            if meta.unparseable || is_primitive(exec) || item_id_problem(exec).is_some() {
                return None;
            }
            m.resolve(exec, m.real_space(i))
        };
        let mut cycles: BTreeMap<Vec<String>, String> = BTreeMap::new();
        for start in 0..m.items.len() {
            let mut path = vec![start];
            let mut cur = start;
            while let Some(n) = next(cur) {
                if let Some(pos) = path.iter().position(|&p| p == n) {
                    let mut members: Vec<(String, String)> = path[pos..]
                        .iter()
                        .map(|&x| (m.items[x].path(), m.items[x].id.clone()))
                        .collect();
                    members.sort();
                    let first_id = members[0].1.clone();
                    cycles.insert(members.into_iter().map(|p| p.0).collect(), first_id);
                    break;
                }
                path.push(n);
                cur = n;
            }
        }
        for (members, item_id) in cycles {
            out.push(Planted {
                rule: rule::EXECUTOR_CYCLE.to_owned(),
                path: members[0].clone(),
                item_id,
                members,
            });
        }
        out.sort();
        out
    }

    /// Element count of the chain an element of `from` gets for executor `id` (`None` if broken).
    pub(crate) fn len_via(&self, id: &str, from: Sp) -> Option<usize> {
        if is_primitive(id) {
            return Some(1);
        }
        match self.chain(self.resolve(id, from)?) {
            ChainEnd::Ok(n) => Some(n),
            _ => None,
        }
    }
}
