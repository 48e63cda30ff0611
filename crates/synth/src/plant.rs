//! The planted problems: one builder step per rule the manifest lists, each a small edit of the model.

use ryechain::model::item_id_problem;

use crate::build::{BASE_FUNCTION, BASE_SCRIPT, Gen};
use crate::model::{Ext, Family, Item, Role, Sp, is_primitive};
use crate::render::{PyExec, YamlKind, name_of, semver};
use crate::vocab::{DOMAINS, IO_SETS};
use crate::{MAX_CHAIN_ELEMENTS, PLANTED_RULES, PRIMITIVE_IDS, Planted, rule};

impl Gen {
    pub(crate) fn plants(&mut self) {
        if self.target < 200 {
            return;
        }
        // ~0.75 % of the tools overall, spread evenly over the rules.
        let per_rule =
            ((self.target as f64 * 0.0075 / PLANTED_RULES.len() as f64).round() as usize).max(1);
        for i in 0..per_rule.max(2) {
            self.plant_missing_executor(i);
        }
        for i in 0..per_rule.max(2) {
            self.plant_cycle(i);
        }
        for _ in 0..per_rule {
            self.plant_too_deep();
        }
        for i in 0..per_rule.max(2) {
            self.plant_unknown_primitive(i);
        }
        for i in 0..per_rule.max(2) {
            self.plant_unparseable(i);
        }
        for _ in 0..per_rule {
            self.plant_ambiguous();
        }
        for i in 0..per_rule.max(3) {
            self.plant_invalid_id(i);
        }
        for i in 0..per_rule.max(3) {
            self.plant_invalid_version(i);
        }
        for _ in 0..per_rule {
            self.plant_unsatisfied_inputs();
        }
        for _ in 0..per_rule {
            self.plant_constraint(true);
        }
        for _ in 0..per_rule {
            self.plant_constraint(false);
        }
        for _ in 0..per_rule {
            self.plant_upward();
        }
        for _ in 0..per_rule {
            self.plant_system_delegates();
        }
    }

    /// A near miss of `id` (one edit in its last segment) that names no file anywhere.
    fn typo_of(&mut self, id: &str) -> String {
        let (folder, name) = id.rsplit_once('/').unwrap_or(("", id));
        let chars: Vec<char> = name.chars().collect();
        for _ in 0..64 {
            let mut c = chars.clone();
            let at = self.rng.below(c.len());
            match self.rng.below(3) {
                0 if at + 1 < c.len() => c.swap(at, at + 1),
                1 if c.len() > 2 => {
                    c.remove(at);
                }
                _ => c.insert(at, c[at]),
            }
            let name: String = c.into_iter().collect();
            let cand = if folder.is_empty() {
                name
            } else {
                format!("{folder}/{name}")
            };
            if cand != id
                && !self.taken.contains(&cand)
                && !is_primitive(&cand)
                && item_id_problem(&cand).is_none()
            {
                return cand;
            }
        }
        self.unique(format!("{id}-old"), '-')
    }

    fn plant_missing_executor(&mut self, i: usize) {
        if i.is_multiple_of(2) {
            // A typo of a runtime the tool could see.
            let space = self.random_space();
            let real = self.pick_exec(space, Family::Python);
            let typo = self.typo_of(&real);
            self.taken.insert(typo.clone());
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let note = format!("planted missing-executor (typo of {real})");
            let at = if self.rng.percent(70) {
                self.new_py_tool(
                    space,
                    id,
                    PyExec::Id(&typo),
                    version,
                    Vec::new(),
                    false,
                    Some(&note),
                )
            } else {
                self.new_yaml_tool(
                    space,
                    id,
                    YamlKind::Command,
                    Some(typo),
                    version,
                    Vec::new(),
                    false,
                    Some(&note),
                )
            };
            self.plant(rule::MISSING_EXECUTOR, at);
        } else {
            // A user tool naming a runtime that exists only in the project space.
            let hidden: Vec<String> = self
                .model
                .items
                .iter()
                .filter(|it| {
                    it.space == Sp::Project
                        && it.role == Role::Runtime
                        && it.usable
                        && !self.model.in_space(&it.id, Sp::User)
                        && !self.model.in_space(&it.id, Sp::System)
                })
                .map(|it| it.id.clone())
                .collect();
            let Some(runtime) =
                (!hidden.is_empty()).then(|| hidden[self.rng.below(hidden.len())].clone())
            else {
                return self.plant_missing_executor(i + 1);
            };
            let id = self.fresh_tool_id(Sp::User);
            let version = self.version_for_clean();
            let note =
                format!("planted missing-executor ({runtime} exists only in the project space)");
            let at = self.new_py_tool(
                Sp::User,
                id,
                PyExec::Id(&runtime),
                version,
                Vec::new(),
                false,
                Some(&note),
            );
            self.plant(rule::MISSING_EXECUTOR, at);
        }
    }

    fn plant_cycle(&mut self, i: usize) {
        let space = self.mutable_space();
        let members: Vec<usize> = if i.is_multiple_of(2) {
            // Two runtimes naming each other.
            let a = self.fresh_runtime_id(space, Family::Python);
            self.taken.insert(a.clone());
            let b = self.fresh_runtime_id(space, Family::Python);
            self.taken.insert(b.clone());
            let note = "planted executor-cycle (two runtimes)";
            let ia = self.new_runtime(
                space,
                a.clone(),
                Family::Python,
                Some(b.clone()),
                Vec::new(),
                Vec::new(),
                Some(note),
                false,
            );
            let ib = self.new_runtime(
                space,
                b,
                Family::Python,
                Some(a.clone()),
                Vec::new(),
                Vec::new(),
                Some(note),
                false,
            );
            if self.rng.percent(50) {
                // Upstream of the cycle: clean by definition.
                self.clean_py(space, &a);
            }
            vec![ia, ib]
        } else {
            // A tool naming itself.
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let own = id.clone();
            vec![self.new_py_tool(
                space,
                id,
                PyExec::Id(&own),
                version,
                Vec::new(),
                false,
                Some("planted executor-cycle (self-loop)"),
            )]
        };
        let mut paths: Vec<(String, String)> = members
            .iter()
            .map(|&m| (self.model.items[m].path(), self.model.items[m].id.clone()))
            .collect();
        paths.sort();
        self.planted.push(Planted {
            rule: rule::EXECUTOR_CYCLE.to_owned(),
            path: paths[0].0.clone(),
            item_id: paths[0].1.clone(),
            members: paths.into_iter().map(|p| p.0).collect(),
        });
    }

    /// 11–14 stacked wrappers (system, then user, then project) plus a project tool on top.
    fn plant_too_deep(&mut self) {
        let tag = loop {
            let t = format!("compat-{:04x}", self.rng.below(0x10000));
            if !self.taken.iter().any(|id| id.contains(&t)) {
                break t;
            }
        };
        let layers = self.rng.range(11, 14);
        let (user_root, project_root) = (self.root(Sp::User), self.root(Sp::Project));
        let mut below = BASE_SCRIPT.to_owned();
        let mut flagged = Vec::new();
        for k in 1..=layers {
            let (space, root) = match k {
                1..=4 => (Sp::System, "rye"),
                5..=8 => (Sp::User, user_root),
                _ => (Sp::Project, project_root),
            };
            let id = format!("{root}/legacy/{tag}/layer-{k:02}");
            // Layer k has k + 2 elements (layer, k - 1 layers, python/script, subprocess).
            let deep = k + 2 > MAX_CHAIN_ELEMENTS;
            let note = deep.then_some("planted chain-too-deep (wrapper stack)");
            let at = self.new_runtime(
                space,
                id.clone(),
                Family::Python,
                Some(below),
                Vec::new(),
                Vec::new(),
                note,
                false,
            );
            if deep {
                flagged.push(at);
            }
            below = id;
        }
        let id = self.fresh_tool_id(Sp::Project);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::Project,
            id,
            PyExec::Id(&below),
            version,
            Vec::new(),
            false,
            Some("planted chain-too-deep (tool on the stack)"),
        );
        flagged.push(at);
        for at in flagged {
            self.plant(rule::CHAIN_TOO_DEEP, at);
        }
    }

    fn plant_unknown_primitive(&mut self, i: usize) {
        if i.is_multiple_of(2) {
            // A Python tool that forgot `__executor_id__`.
            let space = self.random_space();
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            let at = self.new_py_tool(
                space,
                id,
                PyExec::Omit,
                version,
                Vec::new(),
                false,
                Some("planted unknown-primitive (no __executor_id__)"),
            );
            self.plant(rule::UNKNOWN_PRIMITIVE, at);
        } else {
            // A runtime with `executor_id: null`, used by clean tools.
            let space = self.mutable_space();
            let id = self.fresh_runtime_id(space, Family::Python);
            let at = self.new_runtime(
                space,
                id.clone(),
                Family::Python,
                None,
                Vec::new(),
                Vec::new(),
                Some("planted unknown-primitive (runtime without executor)"),
                false,
            );
            self.plant(rule::UNKNOWN_PRIMITIVE, at);
            for _ in 0..self.rng.range(1, 2) {
                self.clean_py(space, &id);
            }
        }
    }

    fn plant_unparseable(&mut self, i: usize) {
        let space = self.random_space();
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let at = if i.is_multiple_of(2) {
            let exec = self.pick_exec(space, Family::Python);
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&exec),
                version,
                Vec::new(),
                true,
                Some("planted unparseable-metadata (syntax error in a body line)"),
            )
        } else {
            let exec = PRIMITIVE_IDS[0].to_owned();
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(exec),
                version,
                Vec::new(),
                true,
                Some("planted unparseable-metadata (malformed YAML)"),
            )
        };
        self.plant(rule::UNPARSEABLE_METADATA, at);
    }

    fn plant_ambiguous(&mut self) {
        let space = self.random_space();
        let id = self.fresh_tool_id(space);
        let exec = self.pick_exec(space, Family::Python);
        let version = self.version_for_clean();
        self.new_py_tool(
            space,
            id.clone(),
            PyExec::Id(&exec),
            version,
            Vec::new(),
            false,
            None,
        );
        let version = self.version_for_clean();
        let at = self.new_yaml_tool(
            space,
            id,
            YamlKind::Command,
            Some(PRIMITIVE_IDS[0].to_owned()),
            version,
            Vec::new(),
            false,
            Some("planted ambiguous-item (a .py of the same id wins)"),
        );
        self.plant(rule::AMBIGUOUS_ITEM, at);
    }

    fn plant_invalid_id(&mut self, i: usize) {
        let space = self.random_space();
        let real = self.pick_exec(space, Family::Python);
        let bad = match i % 3 {
            0 => format!("../{}/runtimes/python", self.rng.pick(&DOMAINS)),
            1 => format!("/opt/rye/{}", real),
            _ => real.replacen('/', "//", 1),
        };
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let note = "planted invalid-item-id";
        let at = if self.rng.percent(70) {
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&bad),
                version,
                Vec::new(),
                false,
                Some(note),
            )
        } else {
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(bad),
                version,
                Vec::new(),
                false,
                Some(note),
            )
        };
        self.plant(rule::INVALID_ITEM_ID, at);
    }

    fn plant_invalid_version(&mut self, i: usize) {
        let space = self.random_space();
        let version = match i % 3 {
            0 => format!("{}.{}", self.rng.range(0, 3), self.rng.below(10)),
            1 => format!("v{}", semver(&mut self.rng)),
            _ => ["latest", "dev", "unstable"][self.rng.below(3)].to_owned(),
        };
        let id = self.fresh_tool_id(space);
        let note = "planted invalid-version";
        let at = if self.rng.percent(70) {
            let exec = self.pick_exec(space, Family::Python);
            self.new_py_tool(
                space,
                id,
                PyExec::Id(&exec),
                Some(version),
                Vec::new(),
                false,
                Some(note),
            )
        } else {
            let exec = PRIMITIVE_IDS[0].to_owned();
            self.new_yaml_tool(
                space,
                id,
                YamlKind::Command,
                Some(exec),
                Some(version),
                Vec::new(),
                false,
                Some(note),
            )
        };
        self.plant(rule::INVALID_VERSION, at);
    }

    fn plant_unsatisfied_inputs(&mut self) {
        let space = self.mutable_space();
        let set = IO_SETS[self.rng.below(IO_SETS.len())];
        let n = self.rng.range(2, 3);
        let inputs: Vec<String> = set[..n].iter().map(|s| (*s).to_owned()).collect();
        let rid = self.fresh_runtime_id(space, Family::Python);
        self.new_runtime(
            space,
            rid.clone(),
            Family::Python,
            Some(BASE_FUNCTION.to_owned()),
            inputs.clone(),
            Vec::new(),
            None,
            false,
        );
        // The planted tool provides all but the last input.
        let id = self.fresh_tool_id(space);
        let version = self.version_for_clean();
        let outputs = inputs[..n - 1].to_vec();
        let at = self.new_py_tool(
            space,
            id,
            PyExec::Id(&rid),
            version,
            outputs,
            false,
            Some("planted unsatisfied-inputs"),
        );
        self.plant(rule::UNSATISFIED_INPUTS, at);
        // Clean siblings: no outputs declared at all, and every input covered.
        self.clean_py(space, &rid);
        if self.rng.percent(50) {
            let id = self.fresh_tool_id(space);
            let version = self.version_for_clean();
            self.new_py_tool(space, id, PyExec::Id(&rid), version, inputs, false, None);
        }
    }

    /// `violation`: a 1.x tool under `min_version: 2.0.0`-ish; else a tool with no version.
    fn plant_constraint(&mut self, violation: bool) {
        let space = self.mutable_space();
        let bad = self.fresh_tool_id(space);
        self.taken.insert(bad.clone());
        let good = self.fresh_tool_id(space);
        self.taken.insert(good.clone());
        let major = self.rng.range(2, 3);
        let min = format!("{major}.0.0");
        let constraints = vec![(bad.clone(), min.clone()), (good.clone(), min)];
        let rid = self.fresh_runtime_id(space, Family::Python);
        self.new_runtime(
            space,
            rid.clone(),
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            constraints,
            None,
            false,
        );
        let (rule, version, note) = if violation {
            let v = format!(
                "{}.{}.{}",
                major - 1,
                self.rng.below(10),
                self.rng.below(10)
            );
            (
                rule::VERSION_CONSTRAINT_VIOLATION,
                Some(v),
                "planted version-constraint-violation",
            )
        } else {
            (
                rule::UNVERSIONED_CONSTRAINED_CHILD,
                None,
                "planted unversioned-constrained-child",
            )
        };
        let at = self.new_py_tool(
            space,
            bad,
            PyExec::Id(&rid),
            version,
            Vec::new(),
            false,
            Some(note),
        );
        self.plant(rule, at);
        let v = format!("{major}.{}.{}", self.rng.below(10), self.rng.below(10));
        self.new_py_tool(
            space,
            good,
            PyExec::Id(&rid),
            Some(v),
            Vec::new(),
            false,
            None,
        );
    }

    /// The relative target of a symlink at `link` pointing to `target` (both relative to OUT).
    pub(crate) fn link_target(link: &str, target: &str) -> String {
        let ups = link.matches('/').count();
        format!("{}{target}", "../".repeat(ups))
    }

    /// A symlink item in `space` with id `id` pointing to item `target`.
    fn new_link(&mut self, space: Sp, id: String, target: usize) -> usize {
        let mut item = Item::new(space, id, Ext::Yaml, Role::Runtime);
        item.family = self.model.items[target].family;
        item.link = Some(target);
        self.add(item)
    }

    fn plant_upward(&mut self) {
        let pid = self.fresh_runtime_id(Sp::Project, Family::Python);
        let p = self.new_runtime(
            Sp::Project,
            pid,
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            Vec::new(),
            None,
            false,
        );
        let lid = {
            let root = self.root(Sp::User);
            let name = name_of(&self.model.items[p].id).to_owned();
            self.unique(format!("{root}/linked/runtimes/{name}"), '-')
        };
        self.new_link(Sp::User, lid.clone(), p);
        let id = self.fresh_tool_id(Sp::User);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::User,
            id,
            PyExec::Id(&lid),
            version,
            Vec::new(),
            false,
            Some("planted upward-space-dependency (runtime is a symlink into the project space)"),
        );
        self.plant(rule::UPWARD_SPACE_DEPENDENCY, at);
    }

    fn plant_system_delegates(&mut self) {
        let uid = self.fresh_runtime_id(Sp::User, Family::Python);
        let u = self.new_runtime(
            Sp::User,
            uid,
            Family::Python,
            Some(BASE_SCRIPT.to_owned()),
            Vec::new(),
            Vec::new(),
            None,
            false,
        );
        let mid = {
            let name = name_of(&self.model.items[u].id).to_owned();
            self.unique(format!("rye/vendor/runtimes/{name}"), '-')
        };
        self.new_link(Sp::System, mid.clone(), u);
        let id = self.fresh_tool_id(Sp::System);
        let version = self.version_for_clean();
        let at = self.new_py_tool(
            Sp::System,
            id,
            PyExec::Id(&mid),
            version,
            Vec::new(),
            false,
            Some("planted system-delegates-to-mutable (runtime is a symlink into the user space)"),
        );
        self.plant(rule::SYSTEM_DELEGATES_TO_MUTABLE, at);
        // §4.5: the same edge is also an upward space dependency; the reference reports both.
        self.plant(rule::UPWARD_SPACE_DEPENDENCY, at);
    }
}
