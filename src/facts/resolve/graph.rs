//! L3 the whole executor graph (petgraph): one node per tool file plus primitive ids, one edge per
//! executor reference; cycles are its strongly connected components, each reported once.

use std::sync::Arc;

use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::FxHashMap;

use super::{extractor_config, metadata, resolve, split_tool_rel, tool_files};
use crate::db::{Db, SourceFile};
use crate::model::{ExecutorRef, Space, item_id_problem};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphNode {
    pub item_id: String,
    pub space: Space,
    /// `None` for a primitive id without a file.
    pub file: Option<SourceFile>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEdge {
    pub from: usize,
    /// `None` when the executor id does not resolve.
    pub to: Option<usize>,
    /// Shared between the edges naming the same id (most tools name one of a few runtimes).
    pub executor_id: Arc<str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// Each cycle (an SCC with more than one node, or a self-loop), members sorted by path.
    pub cycles: Vec<Vec<usize>>,
    /// For each cycle, the nodes outside it whose chains run into it, sorted by path.
    pub trapped: Vec<Vec<usize>>,
}

fn path_key(db: &dyn Db, n: &GraphNode) -> String {
    n.file
        .map(|f| f.path(db).display().to_string())
        .unwrap_or_default()
}

#[salsa::tracked(returns(ref))]
pub fn executor_graph(db: &dyn Db) -> ExecutorGraph {
    let primitives = &db.workspace().settings(db).primitives;
    // Room for the primitive nodes too: one push past the tool count would double the capacity
    // of a vector kept for the whole run.
    let mut nodes: Vec<GraphNode> = Vec::with_capacity(tool_files(db).len() + primitives.len());
    let mut index: FxHashMap<SourceFile, usize> =
        FxHashMap::with_capacity_and_hasher(nodes.capacity(), Default::default());
    // The tool files in `tool_files` order, walked here so that a file's space is read once per
    // root rather than once per file: this query reads every file, and each read is an edge
    // salsa keeps (and, while the query runs, a hash-set entry, at the lint's peak).
    let cfg = extractor_config(db);
    let mut files: Vec<SourceFile> = Vec::with_capacity(nodes.capacity());
    for &root in db.workspace().roots(db) {
        let space = root.space(db);
        // Two inputs read per root (`entries`), not one field per file: each read is an edge
        // this query keeps.
        for (rel, file) in root.entries(db) {
            let Some((id, ext)) = split_tool_rel(rel) else {
                continue;
            };
            if !cfg.has_extension(ext) {
                continue;
            }
            index.insert(file, nodes.len());
            files.push(file);
            nodes.push(GraphNode {
                item_id: id.to_owned(),
                space: space.clone(),
                file: Some(file),
            });
        }
    }
    let mut prim_nodes: FxHashMap<String, usize> = FxHashMap::default();
    // At most one edge per file.
    let mut edges = Vec::with_capacity(files.len());
    let mut ids: rustc_hash::FxHashSet<Arc<str>> = rustc_hash::FxHashSet::default();
    let mut shared = |id: &str| -> Arc<str> {
        if let Some(known) = ids.get(id) {
            return known.clone();
        }
        let new: Arc<str> = Arc::from(id);
        ids.insert(new.clone());
        new
    };
    // Each (executor id, kind of space) resolved once here: a hundred thousand tools name a few
    // hundred runtimes, and each `resolve` interns its key and records a read of this query.
    let mut resolved: FxHashMap<(Arc<str>, crate::model::SpaceKind), Option<SourceFile>> =
        FxHashMap::default();
    for (from, &file) in files.iter().enumerate() {
        if primitives.contains(&nodes[from].item_id) {
            continue; // a primitive terminates whatever its file says
        }
        let ExecutorRef::Id(next, _) = metadata(db, file).executor() else {
            continue;
        };
        if item_id_problem(next).is_some() {
            edges.push(GraphEdge {
                from,
                to: None,
                executor_id: shared(next),
            });
            continue;
        }
        let executor_id = shared(next);
        let to = if primitives.iter().any(|p| p == next) {
            let from_kind = crate::model::SpaceKind::System;
            let found = *resolved
                .entry((executor_id.clone(), from_kind))
                .or_insert_with(|| resolve(db, next, from_kind).found.as_ref().map(|c| c.file));
            match found.and_then(|file| index.get(&file)) {
                Some(&i) => Some(i),
                None => Some(*prim_nodes.entry(next.to_owned()).or_insert_with(|| {
                    nodes.push(GraphNode {
                        item_id: next.to_owned(),
                        space: super::first_bundle(db),
                        file: None,
                    });
                    nodes.len() - 1
                })),
            }
        } else {
            let from_kind = nodes[from].space.kind();
            let found = *resolved
                .entry((executor_id.clone(), from_kind))
                .or_insert_with(|| resolve(db, next, from_kind).found.as_ref().map(|c| c.file));
            found.and_then(|file| index.get(&file).copied())
        };
        edges.push(GraphEdge {
            from,
            to,
            executor_id,
        });
    }

    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(nodes.len(), edges.len());
    for _ in &nodes {
        g.add_node(());
    }
    for e in &edges {
        if let Some(to) = e.to {
            g.add_edge(NodeIndex::new(e.from), NodeIndex::new(to), ());
        }
    }
    let mut cycles: Vec<Vec<usize>> = petgraph::algo::tarjan_scc(&g)
        .into_iter()
        .filter(|scc| scc.len() > 1 || g.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let mut members: Vec<usize> = scc.into_iter().map(NodeIndex::index).collect();
            members.sort_by_cached_key(|&i| path_key(db, &nodes[i]));
            members
        })
        .collect();
    cycles.sort_by_cached_key(|m| path_key(db, &nodes[m[0]]));

    // Trapped tools: everything that reaches a cycle, found by walking edges backwards. The
    // reverse edges in one array, each node's run at `starts[n]..starts[n + 1]` (a vector per
    // node cost 24 bytes a node, at the lint's peak).
    let mut starts = vec![0u32; nodes.len() + 1];
    for e in &edges {
        if let Some(to) = e.to {
            starts[to + 1] += 1;
        }
    }
    for n in 0..nodes.len() {
        starts[n + 1] += starts[n];
    }
    let mut fill = starts.clone();
    let mut parents = vec![0u32; starts[nodes.len()] as usize];
    for e in &edges {
        if let Some(to) = e.to {
            parents[fill[to] as usize] = e.from as u32;
            fill[to] += 1;
        }
    }
    drop(fill);
    let parents_of = |n: usize| &parents[starts[n] as usize..starts[n + 1] as usize];
    let trapped = cycles
        .iter()
        .map(|members| {
            let mut seen = vec![false; nodes.len()];
            let mut stack: Vec<usize> = members.clone();
            for &m in members {
                seen[m] = true;
            }
            let mut out = Vec::new();
            while let Some(n) = stack.pop() {
                for &p in parents_of(n) {
                    let p = p as usize;
                    if !seen[p] {
                        seen[p] = true;
                        out.push(p);
                        stack.push(p);
                    }
                }
            }
            out.sort_by_cached_key(|&i| path_key(db, &nodes[i]));
            out
        })
        .collect();
    ExecutorGraph {
        nodes,
        edges,
        cycles,
        trapped,
    }
}
