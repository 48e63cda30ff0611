//! L5 which findings a lint shows (issue 35 item 10): those of the files of the spaces the person
//! asked for (the project by default), of every file a tool of those spaces uses on its chain (a
//! user runtime a project tool names), and of the files every check reads (config, extractors,
//! the trust store). A broken personal tool no project tool uses does not fail a project's lint;
//! `--space user` shows it.

use rustc_hash::FxHashMap;

use crate::diagnostic::Finding;
use crate::model::{SpaceKind, SpaceSet, kind_of_label};
use crate::place::Place;

/// The findings a scope leaves out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hidden {
    pub count: usize,
    /// The spaces whose files they are in.
    pub spaces: SpaceSet,
}

/// Whose check produced a finding: a file (its index in the file list) or the graph-wide checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    File(usize),
    Graph,
}

/// Files every check reads: their findings are shown in every scope.
fn read_by_every_check(rel: &str) -> bool {
    !matches!(
        Place::of(rel),
        Place::Tool | Place::Directive | Place::Knowledge | Place::Lockfile
    )
}

/// Whether `f` is a finding of a file outside the `shown` spaces (only those can be hidden).
pub fn outside(f: &Finding, shown: SpaceSet) -> bool {
    f.space
        .as_deref()
        .and_then(kind_of_label)
        .is_some_and(|k| !shown.contains(k))
}

/// Which spaces use each file of a lint: its own, every space with a tool whose chain reads it,
/// and every space for a file every check reads.
pub struct Uses<'a> {
    used: Vec<SpaceSet>,
    /// Each tool id's file under read precedence (project, user, system; the first met of a kind).
    winner: FxHashMap<&'a str, usize>,
}

impl<'a> Uses<'a> {
    /// `files` are the lint's files (space kind, path inside `.ai/`); `reads(i)` the ids the
    /// chain of tool `i` reads beyond its own (`lazy::file_chain_ids`), asked only of the tools
    /// of `shown` spaces.
    pub fn new<S, I>(
        files: &[(SpaceKind, &'a str)],
        reads: impl Fn(usize) -> I,
        shown: SpaceSet,
    ) -> Uses<'a>
    where
        S: AsRef<str>,
        I: IntoIterator<Item = S>,
    {
        let mut winner: FxHashMap<&'a str, usize> = FxHashMap::default();
        for (i, &(kind, rel)) in files.iter().enumerate() {
            if Place::of(rel) != Place::Tool {
                continue;
            }
            let Some((id, _)) = crate::resolve::split_tool_rel(rel) else {
                continue;
            };
            winner
                .entry(id)
                .and_modify(|w| {
                    if kind.precedence() > files[*w].0.precedence() {
                        *w = i;
                    }
                })
                .or_insert(i);
        }
        let mut used: Vec<SpaceSet> = files
            .iter()
            .map(|&(kind, rel)| {
                if read_by_every_check(rel) {
                    SpaceSet::ALL
                } else {
                    SpaceSet::of(kind)
                }
            })
            .collect();
        for (i, &(kind, rel)) in files.iter().enumerate() {
            // A tool's chain is what uses a file of another space (a lockfile pins a chain its
            // tool also reads, or read once).
            if !shown.contains(kind) || Place::of(rel) != Place::Tool {
                continue;
            }
            for id in reads(i) {
                if let Some(&w) = winner.get(id.as_ref()) {
                    used[w] = used[w].with(kind);
                }
            }
        }
        Uses { used, winner }
    }

    /// Whether `shown` shows finding `f`, which `owner`'s check produced (the `Uses` were made
    /// for `shown`, or for more).
    pub fn shows(&self, owner: Owner, f: &Finding, shown: SpaceSet) -> bool {
        self.of(owner, f).meets(shown)
    }

    /// The spaces whose reports show finding `f`, which `owner`'s check produced: those that use
    /// its file. A graph-wide finding belongs to its own space and to those that use its item.
    pub fn of(&self, owner: Owner, f: &Finding) -> SpaceSet {
        match owner {
            Owner::File(i) => self.used.get(i).copied().unwrap_or(SpaceSet::ALL),
            Owner::Graph => {
                let own = f
                    .space
                    .as_deref()
                    .and_then(kind_of_label)
                    .map_or(SpaceSet::ALL, SpaceSet::of);
                let item = f
                    .item_id
                    .as_deref()
                    .and_then(|id| self.winner.get(id))
                    .map_or(SpaceSet::NONE, |&w| self.used[w]);
                own.union(item)
            }
        }
    }
}

impl Hidden {
    /// Count `f` as hidden.
    pub fn add(&mut self, f: &Finding) {
        self.count += 1;
        if let Some(k) = f.space.as_deref().and_then(kind_of_label) {
            self.spaces = self.spaces.with(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings `shown` keeps, in the order given, and what it left out ([`Uses`]). Nothing is
    /// asked of `reads` when every finding is of a shown space.
    fn scoped<S, I>(
        findings: Vec<(Owner, Finding)>,
        files: &[(SpaceKind, &str)],
        reads: impl Fn(usize) -> I,
        shown: SpaceSet,
    ) -> (Vec<Finding>, Hidden)
    where
        S: AsRef<str>,
        I: IntoIterator<Item = S>,
    {
        if !findings.iter().any(|(_, f)| outside(f, shown)) {
            return (
                findings.into_iter().map(|(_, f)| f).collect(),
                Hidden::default(),
            );
        }
        let uses = Uses::new(files, reads, shown);
        let mut hidden = Hidden::default();
        let mut kept = Vec::with_capacity(findings.len());
        for (owner, f) in findings {
            if uses.shows(owner, &f, shown) {
                kept.push(f);
            } else {
                hidden.add(&f);
            }
        }
        (kept, hidden)
    }

    fn finding(space: &str, item: &str) -> Finding {
        Finding {
            rule: "missing-executor".into(),
            severity: crate::diagnostic::Severity::Error,
            path: format!("{item}.yaml"),
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 2,
            item_id: Some(item.to_owned()),
            space: Some(space.into()),
            message: "m".to_owned(),
            help: None,
            notes: Vec::new(),
            excerpt: None,
            suggestions: Vec::new(),
            fix: None,
        }
    }

    const FILES: [(SpaceKind, &str); 5] = [
        (SpaceKind::Project, "tools/acme/t.yaml"),
        (SpaceKind::User, "tools/me/rt.yaml"),
        (SpaceKind::User, "tools/me/broken.yaml"),
        (SpaceKind::User, "config/ryechain.yaml"),
        (SpaceKind::System, "tools/me/rt.yaml"),
    ];

    fn reads(i: usize) -> Vec<&'static str> {
        match i {
            0 => vec!["me/rt", "rye/core/primitives/subprocesss"],
            2 => vec!["rye/core/runtimes/nope"],
            _ => Vec::new(),
        }
    }

    #[test]
    fn a_user_tool_no_project_tool_uses_is_hidden_and_one_it_uses_is_shown() {
        let findings = vec![
            (Owner::File(0), finding("project", "acme/t")),
            (Owner::File(1), finding("user", "me/rt")),
            (Owner::File(2), finding("user", "me/broken")),
            (Owner::File(3), finding("user", "config")),
            // Shadowed by the user's me/rt: the project's chain does not reach it.
            (Owner::File(4), finding("system:ryechain", "me/rt")),
        ];
        let (kept, hidden) = scoped(findings.clone(), &FILES, reads, SpaceSet::PROJECT);
        let items: Vec<_> = kept.iter().map(|f| f.item_id.clone().unwrap()).collect();
        assert_eq!(items, ["acme/t", "me/rt", "config"]);
        assert_eq!(hidden.count, 2);
        assert_eq!(hidden.spaces.names(), ["user", "system"]);
        // Asked for, the user space is shown whole.
        let (kept, hidden) = scoped(
            findings.clone(),
            &FILES,
            reads,
            SpaceSet::PROJECT.with(SpaceKind::User),
        );
        assert_eq!(kept.len(), 4);
        assert_eq!(hidden.count, 1);
        let (kept, hidden) = scoped(findings, &FILES, reads, SpaceSet::ALL);
        assert_eq!((kept.len(), hidden.count), (5, 0));
    }

    #[test]
    fn graph_findings_follow_their_item() {
        let findings = vec![
            (Owner::Graph, finding("user", "me/rt")),
            (Owner::Graph, finding("user", "me/broken")),
        ];
        let (kept, hidden) = scoped(findings, &FILES, reads, SpaceSet::PROJECT);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].item_id.as_deref(), Some("me/rt"));
        assert_eq!(hidden.count, 1);
    }

    #[test]
    fn nothing_outside_the_scope_asks_for_no_reads() {
        let findings = vec![(Owner::File(0), finding("project", "acme/t"))];
        let (kept, hidden) = scoped(
            findings,
            &FILES,
            |_| -> Vec<&str> { panic!("reads asked for") },
            SpaceSet::PROJECT,
        );
        assert_eq!((kept.len(), hidden), (1, Hidden::default()));
    }
}
