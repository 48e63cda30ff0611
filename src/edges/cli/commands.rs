//! L6 the subcommands: lint, chain, rules, rule, graph — each loads spaces, asks the analysis, prints.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::{
    Context, GraphFormat, LintFormat, print_notices, use_color, write_output_file, write_stdout,
};
use crate::analysis::{Analysis, Checks, LintOptions};
use crate::db::Settings;
use crate::diagnostic::{Finding, Severity};
use crate::lint_cache::{self, CacheKey, CachedLint};
use crate::model::{SpaceSet, item_id_problem};
use crate::render::{HumanOptions, RuleMeta, ToolInfo};
use crate::rules::rules;

/// Below this many files a progress bar is only noise.
const PROGRESS_MIN_FILES: usize = 2_000;

/// What `ryechain lint` was asked to print and how it exits (the flags besides rule selection).
#[derive(Debug)]
pub struct LintArgs {
    pub format: LintFormat,
    pub no_progress: bool,
    /// Count findings per rule instead of printing them (`ruff --statistics`).
    pub statistics: bool,
    /// Write the report here instead of stdout.
    pub output_file: Option<PathBuf>,
    /// Exit 0 with findings; internal errors still exit 2.
    pub exit_zero: bool,
    /// Only the findings: no summary line, no notices.
    pub quiet: bool,
    /// List the files that would be checked and stop.
    pub show_files: bool,
    /// Keep watching the spaces after the report (`--watch`).
    pub watch: bool,
    /// Neither read nor write the lint cache.
    pub no_cache: bool,
    /// Apply the certain fixes first (`--fix`).
    pub fix: bool,
    /// Print the fixes as diffs and change nothing (`--diff`).
    pub diff: bool,
    /// `--space`: the spaces reported whole (`None`: the project's, with what its tools use).
    pub spaces: Option<crate::model::SpaceSet>,
}

pub fn lint(
    ctx: &Context<'_>,
    path: &Path,
    args: &LintArgs,
    settings: Settings,
) -> anyhow::Result<u8> {
    for tok in settings.select.iter().flatten().chain(&settings.ignore) {
        if tok != "ALL" && rules().get(tok).is_none() && !rules().families().contains(&tok.as_str())
        {
            anyhow::bail!(
                "`{tok}` is not a rule id or family{} (`ryechain rules` lists them)",
                crate::rules::did_you_mean_rule(rules(), tok, true)
            );
        }
    }
    if args.statistics && args.format == LintFormat::Sarif {
        anyhow::bail!(
            "`--statistics` prints a table (or JSON with `--format json`); it cannot be combined with `--format sarif`"
        );
    }
    if args.watch && args.format == LintFormat::Sarif {
        anyhow::bail!(
            "`--watch` prints human or JSON lines; it cannot be combined with `--format sarif`"
        );
    }
    // Paths are shown relative to the project root (as cargo shows them relative to its
    // workspace), wherever the command runs from; files outside it keep their full path.
    let cwd = Some(ctx.project_root(path)?);
    let fixed = if args.fix || args.diff {
        let fixes = super::fix::plan(ctx, path, settings.clone())?;
        if args.diff {
            return show_diff(args, &fixes);
        }
        Some(write_fixes(args, fixes))
    } else {
        None
    };
    let opts = LintOptions {
        display_base: cwd.clone(),
    };
    let cache_dir = (!args.no_cache && !args.watch && !args.show_files)
        .then(|| ctx.lint_cache_dir())
        .flatten();
    let mut host = None;
    let shown = args.spaces.unwrap_or(SpaceSet::PROJECT);
    let read = ctx
        .spaces(path)?
        .0
        .iter()
        .fold(SpaceSet::NONE, |set, s| set.with(s.space.kind()));
    let mut report = if let Some(dir) = cache_dir {
        let (specs, mut notices) = ctx.spaces(path)?;
        let key = CacheKey::new(ctx.build_stamp(), &settings, &specs, cwd.as_deref());
        let cached = CachedLint {
            sys: ctx.sys,
            specs: &specs,
            settings,
            opts: &opts,
            path: dir.join(key.file_name()),
            key,
            shown,
        };
        let outcome = lint_cache::lint(&cached, &|a| checked_parts(a, args, &opts, true));
        // The process ends after printing, and the OS takes the memory back at once.
        std::mem::forget(outcome.spent);
        notices.extend(outcome.notices);
        if !args.quiet {
            print_notices(&notices);
            print_notices(&outcome.warnings);
        }
        if ctx
            .sys
            .env_var("RYECHAIN_CACHE_REPORT")
            .is_some_and(|v| !v.is_empty() && v != "0")
        {
            match outcome.dirs_on_trust {
                Some((trusted, of, settled)) => errln!(
                    "cache: {}; {trusted} of {of} directories not read again, {settled} files settled by their stamps",
                    outcome.how
                ),
                None => errln!("cache: {}", outcome.how),
            }
        }
        outcome.report
    } else {
        let (h, notices, links) = ctx.host_with_links(path, settings)?;
        if !args.quiet {
            print_notices(&notices);
        }
        let a = h.analysis();
        if args.show_files {
            let files = a.lint_files();
            let mut shown: Vec<String> = files
                .iter()
                .map(|&f| crate::analysis::display_path(a.path(f), cwd.as_deref()))
                .collect();
            shown.sort_unstable();
            shown.dedup();
            let mut out = shown.join("\n");
            if !out.is_empty() {
                out.push('\n');
            }
            emit(args, &out)?;
            return Ok(0);
        }
        // `--watch` keeps what each file's findings read, to re-check only what a change reaches.
        let mut parts = checked_parts(a, args, &opts, args.watch);
        if args.watch {
            let live = crate::analysis::live::LiveLint::from_parts(parts, opts.clone());
            let report = live.scoped_report(h.analysis(), shown);
            host = Some((h, links, live));
            report
        } else {
            let hidden = a.hide_unused(&mut parts, shown);
            if parts.files.iter().map(|f| f.findings.len()).sum::<usize>() <= FORGET_HOST_BELOW {
                // The process ends after printing, and the OS takes the memory back at once:
                // freeing the texts and memos one by one took 0.17 s of a 2.3 s lint of 100k tools.
                std::mem::forget(h);
            } else {
                // Many findings: the texts and memos go before the findings are merged and rendered
                // (the run's peak otherwise: 597 MiB instead of 479 on the bad-input 100k tree).
                drop(h);
                crate::memory::release_freed_memory();
            }
            let mut report = parts.into_report();
            report.summary.hidden = hidden.count;
            report.summary.hidden_spaces = hidden.spaces;
            report
        }
    };
    report.summary.read = read;
    report.summary.shown = shown;
    let out = if args.statistics {
        statistics(&report.findings, args.format == LintFormat::Json)?
    } else {
        render_report(&report, args, cwd.clone())
    };
    emit(args, &out)?;
    if args.watch
        && let Some((host, links, live)) = host
    {
        // The first report's findings are what each batch's new and fixed are told against.
        let (specs, _) = ctx.spaces(path)?;
        let json = args.format == LintFormat::Json;
        let scope = super::watch::Scope {
            shown,
            findings: live.any_outside(shown).then_some(report.findings),
        };
        return super::watch::watch(ctx.sys, &specs, host, &links, live, scope, json);
    }
    if let Some(fixed) = &fixed
        && !args.quiet
    {
        fixed_summary(fixed, report.findings.len());
    }
    if report.internal_errors > 0 {
        errln!(
            "error: ryechain hit {} internal error(s); the results are incomplete",
            report.internal_errors
        );
        return Ok(2);
    }
    let errors = report
        .findings
        .iter()
        .any(|f| f.severity == Severity::Error);
    Ok(u8::from(errors && !args.exit_zero))
}

/// What `--fix` wrote: each fixed file with its fixes, and the signed ones among them.
struct Fixed {
    /// Fixes written.
    count: usize,
    files: usize,
    /// `ryechain sign` ids of the signed items fixed.
    resign: Vec<String>,
}

/// `lint --diff`: the fixes as unified diffs on stdout, a summary on stderr; exit 1 when there
/// is something to fix.
fn show_diff(args: &LintArgs, fixes: &super::fix::Fixes) -> anyhow::Result<u8> {
    if !args.quiet {
        print_notices(&fixes.notices);
    }
    emit(args, &super::fix::diff(fixes))?;
    if !args.quiet {
        for l in &fixes.left {
            errln!("note: {l}");
        }
        let n = fixes.count();
        match n {
            0 => errln!("No fixes available."),
            _ => errln!(
                "Would fix {n} finding{} in {} file{} (`ryechain lint --fix` applies them).",
                plural(n),
                fixes.files.len(),
                plural(fixes.files.len())
            ),
        }
    }
    Ok(u8::from(!fixes.files.is_empty()))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `lint --fix`: write the fixed files, saying what was fixed in each (stderr), and what could
/// not be written.
fn write_fixes(args: &LintArgs, fixes: super::fix::Fixes) -> Fixed {
    if !args.quiet {
        print_notices(&fixes.notices);
    }
    let results = super::fix::write(&fixes);
    let mut fixed = Fixed {
        count: 0,
        files: 0,
        resign: Vec::new(),
    };
    for (f, r) in fixes.files.iter().zip(results) {
        match r {
            Ok(()) => {
                fixed.count += f.rules.len();
                fixed.files += 1;
                if let Some((_, id)) = &f.signed {
                    fixed.resign.push(id.clone());
                }
                if !args.quiet {
                    let mut rules = f.rules.clone();
                    rules.dedup();
                    errln!(
                        "fixed {} ({} fix{}: {})",
                        f.shown,
                        f.rules.len(),
                        if f.rules.len() == 1 { "" } else { "es" },
                        rules.join(", ")
                    );
                }
            }
            Err(e) => errln!("warning: {} was not fixed: {e}", f.shown),
        }
    }
    if !args.quiet {
        for l in &fixes.left {
            errln!("note: {l}");
        }
    }
    if fixes.unsettled {
        errln!("warning: fixes kept making fixes after 10 rounds; run `ryechain lint --fix` again");
    }
    fixed
}

/// ruff's "N fixed, M remaining", and what a signed file that was fixed needs.
fn fixed_summary(fixed: &Fixed, remaining: usize) {
    errln!(
        "{} fixed in {} file{}, {remaining} remaining.",
        fixed.count,
        fixed.files,
        plural(fixed.files)
    );
    let ids: Vec<String> = fixed
        .resign
        .iter()
        .map(|id| format!("`ryechain sign {id}`"))
        .collect();
    match ids.len() {
        0 => {}
        1 => errln!(
            "note: {} was signed; its signature no longer matches the fixed text: review the change, then {} (a fix never signs for you)",
            fixed.resign[0],
            ids[0]
        ),
        n => errln!(
            "note: {n} fixed items were signed; their signatures no longer match the fixed texts: review the changes, then {} (a fix never signs for you)",
            ids.join(", ")
        ),
    }
}

/// A one-shot lint with at most this many findings leaves its database to the OS at exit rather
/// than freeing it: merging and rendering so few findings adds little to the peak.
const FORGET_HOST_BELOW: usize = 20_000;

/// Check every file of `db` (with a progress bar on a terminal for big trees); `deps`: record
/// what each file's findings depend on, for the lint cache.
fn checked_parts(
    a: Analysis<'_>,
    args: &LintArgs,
    opts: &LintOptions,
    deps: bool,
) -> crate::analysis::LintParts {
    let total = a.lint_files().len();
    let bar = (!args.no_progress && std::io::stderr().is_terminal() && total >= PROGRESS_MIN_FILES)
        .then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} checking {pos}/{len} files {wide_bar} {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
    let progress = |n: usize| {
        if let Some(b) = &bar {
            b.inc(n as u64);
        }
    };
    // `--watch` lints the same host again after each change; otherwise the database is dropped
    // after this one lint.
    let checks = if args.watch {
        Checks::Memoized
    } else {
        Checks::OneShot
    };
    let parts = a.lint_parts(opts, &progress, deps, checks);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    parts
}

/// The report in the chosen format.
fn render_report(
    report: &crate::analysis::LintReport,
    args: &LintArgs,
    cwd: Option<PathBuf>,
) -> String {
    match args.format {
        LintFormat::Human => crate::render::human::render(
            &report.findings,
            &report.summary,
            &HumanOptions {
                color: args.output_file.is_none() && use_color(),
                quiet: args.quiet,
            },
        ),
        LintFormat::Concise => {
            crate::render::human::concise(&report.findings, &report.summary, args.quiet)
        }
        LintFormat::Json => crate::render::json::render(&report.findings, &report.summary),
        LintFormat::Sarif => {
            let home = "https://github.com/ryechain/ryechain";
            let metas: Vec<RuleMeta> = rules()
                .rules
                .iter()
                .map(|r| RuleMeta {
                    id: r.id.to_string(),
                    family: r.family.clone(),
                    summary: r.summary.clone(),
                    docs: r.docs.clone(),
                    default_severity: r.severity,
                    // The rule file, whose `docs` are its page (`ryechain rule ID` prints it).
                    help_uri: Some(format!("{home}/blob/main/rules/{}/{}.yaml", r.family, r.id)),
                })
                .collect();
            let tool = ToolInfo {
                name: "ryechain".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                information_uri: home.to_owned(),
                src_root: cwd.map(|c| c.display().to_string()),
            };
            crate::render::sarif::render(&report.findings, &metas, &tool)
        }
    }
}

/// `--statistics`: findings counted per rule, most frequent first (then by rule id), as an
/// aligned table (`count  rule  severity  summary`) or a JSON array.
fn statistics(findings: &[Finding], json: bool) -> anyhow::Result<String> {
    let mut counts: Vec<(&str, Severity, usize)> = Vec::new();
    for f in findings {
        match counts
            .iter_mut()
            .find(|(r, s, _)| *r == &*f.rule && *s == f.severity)
        {
            Some(entry) => entry.2 += 1,
            None => counts.push((&*f.rule, f.severity, 1)),
        }
    }
    counts.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    let summary = |rule: &str| {
        rules()
            .get(rule)
            .map(|r| r.summary.clone())
            .unwrap_or_default()
    };
    if json {
        let rows: Vec<serde_json::Value> = counts
            .iter()
            .map(|(rule, severity, count)| {
                serde_json::json!({
                    "rule": rule,
                    "severity": severity.as_str(),
                    "count": count,
                    "summary": summary(rule),
                })
            })
            .collect();
        return Ok(format!("{}\n", serde_json::to_string_pretty(&rows)?));
    }
    let count_w = counts
        .iter()
        .map(|c| c.2.to_string().len())
        .max()
        .unwrap_or(1);
    let rule_w = counts.iter().map(|c| c.0.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (rule, severity, count) in &counts {
        out.push_str(
            format!(
                "{count:>count_w$}  {rule:<rule_w$}  {:<7}  {}",
                severity.as_str(),
                summary(rule)
            )
            .trim_end(),
        );
        out.push('\n');
    }
    Ok(out)
}

/// The report goes to `--output-file` when given, else stdout.
fn emit(args: &LintArgs, text: &str) -> anyhow::Result<()> {
    match &args.output_file {
        Some(p) => write_output_file(p, text),
        None => write_stdout(text),
    }
}

pub fn chain(
    ctx: &Context<'_>,
    item: &str,
    path: &Path,
    json: bool,
    settings: Settings,
) -> anyhow::Result<u8> {
    if let Some(reason) = item_id_problem(item) {
        anyhow::bail!(crate::message::invalid_item_id(item, reason));
    }
    // A single item: only its chain's files are read (lazy loading).
    let (host, notices) = ctx.item_host(path, settings, &[item.to_owned()])?;
    print_notices(&notices);
    let a = host.analysis();
    let view = a.chain(item);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&crate::render::chain::dry_run(&view))?
        );
        return Ok(u8::from(
            !view.passed() || view.unknown_primitive_finding.is_some(),
        ));
    }
    // §10.5: each element's integrity verdict (the dry run itself does not refuse on it).
    let verdicts = a
        .verify_chain(item, &[])
        .map(|v| v.files)
        .unwrap_or_default();
    let (text, ok) = crate::render::chain::human(&view, &verdicts);
    write_stdout(&text)?;
    if !view.found {
        errln!(
            "{}",
            ctx.not_found_help(path, crate::integrity::ItemKind::Tool, item)
        );
    }
    Ok(u8::from(!ok))
}

pub fn rules_list() -> anyhow::Result<u8> {
    let set = rules();
    let width = set.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in &set.rules {
        let off = if r.enabled {
            String::new()
        } else {
            format!(" (off by default; `--select ALL,{}` adds it)", r.id)
        };
        outln!(
            "{:<width$}  {:<7}  {:<10}  {}{off}",
            r.id,
            r.severity.as_str(),
            r.family,
            r.summary
        );
    }
    Ok(0)
}

pub fn rule_doc(id: &str) -> anyhow::Result<u8> {
    let Some(page) = crate::rules::doc_page(id) else {
        anyhow::bail!(
            "no rule `{id}`{} (`ryechain rules` lists them)",
            crate::rules::did_you_mean_rule(rules(), id, false)
        );
    };
    outln!("{}", page.trim_end());
    Ok(0)
}

pub fn graph(ctx: &Context<'_>, path: &Path, format: GraphFormat) -> anyhow::Result<u8> {
    let (host, notices) = ctx.host(path, Settings::default())?;
    print_notices(&notices);
    let g = host.analysis().executor_graph();
    match format {
        GraphFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&crate::render::chain::graph_json(&g))?
        ),
        GraphFormat::Dot => write_stdout(&crate::render::chain::graph_dot(&g))?,
    }
    Ok(0)
}
