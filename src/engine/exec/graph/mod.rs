//! L5 the state-graph runtime's core (`rye/core/runtimes/state-graph/runtime`, issue 33): a graph
//! tool (`tool_type: graph`) walked node by node. `graph_source` finds the graph and vouches for
//! it (the execution policy over its whole chain, before a node runs); `walk` is the step machine
//! (node selection, conditions, interpolation, state updates, capability checks); `state_doc`
//! the state as a knowledge item. The edge (`cli::graph_run`) drives it: it runs each action
//! through the executor (`runner::execute`), and signs and writes the state after every step.
//! Nothing here does I/O.

pub mod caps;
pub mod cond;
pub mod interp;
pub mod state_doc;
pub mod walk;

use std::path::PathBuf;

use crate::analysis::Analysis;
use crate::analysis::verify::Policy;
use crate::exec::facts::{Facts, Need};

/// Where finding the graph stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphSource {
    /// Load these and ask again.
    Need(Vec<Need>),
    /// It cannot be walked: the refusal's text.
    Refused(String),
    /// The graph's file and its text, verified under the policy with its whole chain.
    Ready { path: PathBuf, text: String },
}

/// The graph tool `item_id`, as an execution finds it: resolved, every element of its chain
/// verified under `policy` (the graph file first), and the text that was verified.
pub fn graph_source(a: Analysis<'_>, item_id: &str, policy: &Policy, facts: &Facts) -> GraphSource {
    if let Some(reason) = crate::model::item_id_problem(item_id) {
        return GraphSource::Refused(crate::message::invalid_item_id(item_id, reason));
    }
    let needs = a.item_chain_needs(item_id, &facts.items);
    if !needs.is_empty() {
        return GraphSource::Need(needs.into_iter().map(Need::Item).collect());
    }
    let view = a.chain(item_id);
    let Some(root) = view.elements.first().filter(|_| view.found) else {
        return GraphSource::Refused(crate::message::tool_not_found(item_id));
    };
    let Some(verification) = a.verify_chain(item_id, &[]) else {
        return GraphSource::Refused(crate::message::tool_not_found(item_id));
    };
    if let Some(err) = verification.refusal(policy) {
        return GraphSource::Refused(err.to_owned());
    }
    let Some(path) = root.path.clone() else {
        return GraphSource::Refused(format!("`{item_id}` has no file to read"));
    };
    let Some(file) = a.file_at(&path) else {
        return GraphSource::Refused(crate::message::tool_not_found(item_id));
    };
    match a.text(file) {
        Some(text) => GraphSource::Ready {
            path,
            text: text.into_owned(),
        },
        None => GraphSource::Refused(format!("{} cannot be read", path.display())),
    }
}
