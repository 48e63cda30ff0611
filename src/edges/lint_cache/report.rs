//! L6 the report from cached findings: which spaces' lints show each finding (`--space`), and
//! the findings the shown spaces leave out.

use crate::analysis::scope::{Hidden, Owner, Uses};
use crate::analysis::{LintReport, report_of};
use crate::diagnostic::Finding;
use crate::model::{SpaceKind, SpaceSet};

use super::{CacheData, CachedLint, Entry, GRAPH, Spent};

/// The report from cached findings (moved out of the cache), with what `lint.shown` leaves out.
pub(super) fn report_from(
    lint: &CachedLint<'_>,
    mut data: CacheData,
    internal_errors: usize,
    spent: &mut Spent,
) -> LintReport {
    let files = data.entries.len();
    let tools = data.entries.iter().filter(|e| e.tool).count();
    let findings = std::mem::take(&mut data.findings);
    if data.used_by.len() != findings.len() {
        data.used_by = uses_of(lint, &findings, &data.entries, &data.ids);
    }
    let (findings, hidden) = shown_findings(findings, &data.used_by, lint.shown);
    spent.keep(data);
    let mut report = report_of(findings, files, tools, internal_errors);
    report.summary.hidden = hidden.count;
    report.summary.hidden_spaces = hidden.spaces;
    report
}

/// [`CacheData::used_by`] of a cache about to be written or reported.
pub(super) fn note_uses(lint: &CachedLint<'_>, data: &mut CacheData) {
    data.used_by = uses_of(lint, &data.findings, &data.entries, &data.ids);
}

/// For each finding, the spaces whose lint shows it (`analysis::scope`): the entries are the
/// lint's files, each tool's recorded dependency ids what its chain reads.
pub(super) fn uses_of(
    lint: &CachedLint<'_>,
    findings: &[(u32, Finding)],
    entries: &[Entry],
    ids: &[String],
) -> Vec<u8> {
    let kind = |space: u32| {
        lint.specs
            .get(space as usize)
            .map_or(SpaceKind::System, |s| s.space.kind())
    };
    let files: Vec<(SpaceKind, &str)> = entries.iter().map(|e| (kind(e.space), &*e.rel)).collect();
    let reads = |i: usize| {
        entries[i]
            .deps
            .iter()
            .filter_map(|&j| ids.get(j as usize).map(String::as_str))
            .collect::<Vec<&str>>()
    };
    let uses = Uses::new(&files, reads, SpaceSet::ALL);
    findings
        .iter()
        .map(|(owner, f)| {
            let owner = if *owner == GRAPH {
                Owner::Graph
            } else {
                Owner::File(*owner as usize)
            };
            uses.of(owner, f).bits()
        })
        .collect()
}

/// The findings `shown` shows, by each one's `used_by`, and what it left out.
pub(super) fn shown_findings(
    findings: Vec<(u32, Finding)>,
    used_by: &[u8],
    shown: SpaceSet,
) -> (Vec<Finding>, Hidden) {
    let mut hidden = Hidden::default();
    let mut kept = Vec::with_capacity(findings.len());
    for ((_, f), &bits) in findings.into_iter().zip(used_by) {
        if SpaceSet::from_bits(bits).meets(shown) {
            kept.push(f);
        } else {
            hidden.add(&f);
        }
    }
    (kept, hidden)
}
