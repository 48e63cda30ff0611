//! L4 the chain validator of §4 as pure decisions over adjacent pairs. Lint rules (`rules/checks.rs`)
//! and `chain`/dry-run validation both use `check_pair`; messages come from the rule templates.

use crate::model::{Metadata, SpaceKind};
use crate::rules::{Check, Rule, RuleSet, render_template};

/// One chain element as the validator sees it (§4.8: ryechain carries version and I/O facts).
#[derive(Clone, Copy, Debug)]
pub struct Link<'a> {
    pub item_id: &'a str,
    /// Where the element really lives (symlinks judged by their target's space).
    pub space: SpaceKind,
    pub metadata: Option<&'a Metadata>,
}

/// The outcome of a `child_constraints` check (§4.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionVerdict {
    /// The parent declares no constraint for this child.
    NoConstraint,
    /// A constraint exists but the child has no version (a warning).
    Unversioned,
    /// Constraint met, or a version that cannot be compared (treated as satisfied).
    Satisfied,
    /// `comparison` is `< minimum required` or `> maximum allowed`.
    Violated {
        version: String,
        comparison: &'static str,
        bound: String,
    },
}

/// Every decision about one (child, parent) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairVerdict {
    /// §4.4: child precedence ≥ parent precedence, under the table of every precedence rule.
    pub space_ok: bool,
    /// §4.5: a system child delegating to a mutable parent.
    pub system_to_mutable: bool,
    /// §4.6: parent inputs not among child outputs (empty when either side declares none).
    pub missing_inputs: Vec<String>,
    pub child_outputs: Vec<String>,
    pub versions: Vec<VersionVerdict>,
}

impl PairVerdict {
    pub fn io_ok(&self) -> bool {
        self.missing_inputs.is_empty()
    }
    pub fn version_ok(&self) -> bool {
        !self
            .versions
            .iter()
            .any(|v| matches!(v, VersionVerdict::Violated { .. }))
    }
}

/// A space's precedence under a precedence rule's table (§4.4 default 3/2/1 for a kind the
/// table leaves out).
pub fn precedence(check: &Check, kind: SpaceKind) -> u8 {
    match check {
        Check::SpacePrecedence { precedence } => precedence.get(kind.name()).copied(),
        _ => None,
    }
    .unwrap_or(kind.precedence())
}

/// §4.4 under one precedence rule: the child's precedence is at least its parent's.
pub fn space_ok_under(rule: &Rule, child: &Link<'_>, parent: &Link<'_>) -> bool {
    precedence(&rule.check, child.space) >= precedence(&rule.check, parent.space)
}

/// The precedence rules of a set (each judges the pair with its own table).
fn precedence_rules(rules: &RuleSet) -> impl Iterator<Item = &Rule> {
    rules.with_check(|c| matches!(c, Check::SpacePrecedence { .. }))
}

pub fn check_pair(rules: &RuleSet, child: &Link<'_>, parent: &Link<'_>) -> PairVerdict {
    let space_ok = precedence_rules(rules).all(|r| space_ok_under(r, child, parent));
    let system_to_mutable = child.space == SpaceKind::System && parent.space.is_mutable();
    let (cm, pm) = (child.metadata, parent.metadata);
    let child_outputs = cm.map(Metadata::output_names).unwrap_or_default();
    let parent_inputs = pm.map(Metadata::input_names).unwrap_or_default();
    let missing_inputs = if child_outputs.is_empty() || parent_inputs.is_empty() {
        Vec::new()
    } else {
        parent_inputs
            .into_iter()
            .filter(|i| !child_outputs.contains(i))
            .collect()
    };
    let mut versions = Vec::new();
    match pm.and_then(|m| m.constraint_for(child.item_id)) {
        None => versions.push(VersionVerdict::NoConstraint),
        Some(c) => match cm.and_then(Metadata::version_str) {
            None => versions.push(VersionVerdict::Unversioned),
            Some(v) => {
                let have = parse_version_lenient(v.value);
                let bounds = [
                    (
                        c.min_version,
                        "< minimum required",
                        std::cmp::Ordering::Less,
                    ),
                    (
                        c.max_version,
                        "> maximum allowed",
                        std::cmp::Ordering::Greater,
                    ),
                ];
                for (bound, comparison, bad) in bounds {
                    let Some(bound) = bound else { continue };
                    let want = parse_version_lenient(&bound.value);
                    match (&have, want) {
                        (Some(h), Some(w)) if h.cmp(&w) == bad => {
                            versions.push(VersionVerdict::Violated {
                                version: v.value.to_owned(),
                                comparison,
                                bound: bound.value,
                            })
                        }
                        _ => versions.push(VersionVerdict::Satisfied),
                    }
                }
            }
        },
    }
    PairVerdict {
        space_ok,
        system_to_mutable,
        missing_inputs,
        child_outputs,
        versions,
    }
}

/// Python list repr, as the reference's messages print sets turned into lists (§4.6, sorted).
pub fn py_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", inner.join(", "))
}

/// One `validated_pairs` entry of the dry-run response (§4.11, DESIGN.md: full ids).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PairReport {
    pub child: String,
    pub parent: String,
    pub space_ok: bool,
    pub io_ok: bool,
    pub version_ok: bool,
}

/// `ChainValidationResult` of §4.1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationResult {
    pub valid: bool,
    pub issues: Vec<String>,
    pub warnings: Vec<String>,
    pub pairs: Vec<PairReport>,
}

/// The message of every rule of a check kind, each in its own words.
fn messages(
    rules: &RuleSet,
    rule_check: impl Fn(&Check) -> bool,
    vars: &[(&str, String)],
) -> Vec<String> {
    rules
        .with_check(rule_check)
        .map(|r| render_template(&r.message, vars))
        .collect()
}

/// Validate every adjacent pair (§4.3), then the system → mutable transitions (§4.5). Issue texts
/// are the rule messages, which carry the reference's wording.
pub fn validate_chain(rules: &RuleSet, links: &[Link<'_>]) -> ValidationResult {
    let mut res = ValidationResult {
        valid: true,
        ..Default::default()
    };
    let mut system_to_mutable = Vec::new();
    for pair in links.windows(2) {
        let (child, parent) = (&pair[0], &pair[1]);
        let v = check_pair(rules, child, parent);
        for rule in precedence_rules(rules).filter(|r| !space_ok_under(r, child, parent)) {
            res.issues.push(render_template(
                &rule.message,
                &[
                    ("child", child.item_id.to_owned()),
                    ("child_space", child.space.name().to_owned()),
                    ("parent", parent.item_id.to_owned()),
                    ("parent_space", parent.space.name().to_owned()),
                ],
            ));
        }
        if v.system_to_mutable {
            system_to_mutable.extend(messages(
                rules,
                |c| matches!(c, Check::SystemToMutable { .. }),
                &[
                    ("child", child.item_id.to_owned()),
                    ("parent", parent.item_id.to_owned()),
                    ("parent_space", parent.space.name().to_owned()),
                ],
            ));
        }
        if !v.io_ok() {
            res.issues.extend(messages(
                rules,
                |c| matches!(c, Check::IoCompat { .. }),
                &[
                    ("child", child.item_id.to_owned()),
                    ("parent", parent.item_id.to_owned()),
                    ("missing", py_list(&v.missing_inputs)),
                    ("outputs", py_list(&v.child_outputs)),
                ],
            ));
        }
        for verdict in &v.versions {
            match verdict {
                VersionVerdict::Violated {
                    version,
                    comparison,
                    bound,
                } => res.issues.extend(messages(
                    rules,
                    |c| matches!(c, Check::VersionConstraint { .. }),
                    &[
                        ("child", child.item_id.to_owned()),
                        ("parent", parent.item_id.to_owned()),
                        ("version", version.clone()),
                        ("comparison", (*comparison).to_owned()),
                        ("bound", bound.clone()),
                    ],
                )),
                VersionVerdict::Unversioned => res.warnings.extend(messages(
                    rules,
                    |c| matches!(c, Check::UnversionedChild { .. }),
                    &[
                        ("child", child.item_id.to_owned()),
                        ("parent", parent.item_id.to_owned()),
                    ],
                )),
                _ => {}
            }
        }
        res.pairs.push(PairReport {
            child: child.item_id.to_owned(),
            parent: parent.item_id.to_owned(),
            space_ok: v.space_ok && !v.system_to_mutable,
            io_ok: v.io_ok(),
            version_ok: v.version_ok(),
        });
    }
    res.issues.extend(system_to_mutable);
    res.valid = res.issues.is_empty();
    res
}

/// Lenient version parse for comparisons (`1.0` → 1.0.0, a leading `v` dropped), like the
/// reference's `packaging.version` accepting more than strict semver (§4.7).
pub fn parse_version_lenient(s: &str) -> Option<semver::Version> {
    let s = s.trim();
    if let Ok(v) = semver::Version::parse(s) {
        return Some(v);
    }
    let s = s.strip_prefix('v').unwrap_or(s);
    let (core, rest) = match s.find(['-', '+']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let mut padded = parts.join(".");
    for _ in parts.len()..3 {
        padded.push_str(".0");
    }
    semver::Version::parse(&format!("{padded}{rest}")).ok()
}
