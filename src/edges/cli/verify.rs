//! L6 `ryechain verify [ITEM…] [--path DIR]`: the integrity verdict of items (all items of every
//! space by default, or the chains of the named tools) with the reference's error texts (§10.5);
//! exit 1 when any item fails under the execution policy (an item file that cannot be read always
//! fails, in lint's words), exit 2 when the project directory has no `.ai/`.

use std::path::Path;

use serde_json::json;

use super::{Context, print_notices};
use crate::analysis::display_path;
use crate::analysis::verify::FileVerdict;
use crate::db::Settings;

pub fn verify(
    ctx: &Context<'_>,
    items: &[String],
    path: &Path,
    json_out: bool,
    allow_unsigned: bool,
) -> anyhow::Result<u8> {
    for item in items {
        if let Some(reason) = crate::model::item_id_problem(item) {
            anyhow::bail!(crate::message::invalid_item_id(item, reason));
        }
    }
    // Without a project there is nothing of its own to verify: say so rather than "0 failed".
    let path = &ctx.project_root(path)?;
    // Named items: only their chains' files are read (lazy loading); otherwise every file.
    let (host, notices) = if items.is_empty() {
        ctx.host(path, Settings::default())?
    } else {
        ctx.item_host(path, Settings::default(), items)?
    };
    print_notices(&notices);
    let a = host.analysis();
    let policy = a.policy(allow_unsigned);
    print_notices(&a.policy_notices());
    let mut files: Vec<FileVerdict> = Vec::new();
    if items.is_empty() {
        files = a.verify_all();
    } else {
        for item in items {
            // A missing item is a failed check (exit 1, as `chain`, `exec`, `lock` and `sign`
            // say it), not an internal error.
            let Some(v) = a.verify_chain(item, &[]) else {
                errln!("error: {}", crate::message::tool_not_found(item));
                errln!(
                    "{}",
                    ctx.not_found_help(path, crate::integrity::ItemKind::Tool, item)
                );
                return Ok(1);
            };
            for f in v.files {
                if !files.iter().any(|g| g.path == f.path) {
                    files.push(f);
                }
            }
        }
    }
    let base = ctx.project_root(path).ok();
    let shown = |f: &FileVerdict| display_path(&f.path, base.as_deref());
    let failed = files.iter().filter(|f| !policy.accepts(&f.verdict)).count();
    if json_out {
        let list: Vec<_> = files
            .iter()
            .map(|f| {
                json!({
                    "item_id": f.item_id,
                    "path": shown(f),
                    "verified": f.verdict.passed(),
                    "accepted": policy.accepts(&f.verdict),
                    "key_fp": f.verdict.key_fp(),
                    "error": f.error_at(&shown(f)),
                })
            })
            .collect();
        let out = json!({
            "items": list,
            "summary": {"total": files.len(), "failed": failed, "allow_unsigned": policy.allow_unsigned},
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for f in &files {
            let p = shown(f);
            match (f.verdict.key_fp(), f.error_at(&p)) {
                (Some(fp), _) => outln!("ok      {p} (key {fp})"),
                (None, Some(err)) if policy.accepts(&f.verdict) => {
                    outln!("allowed {err}");
                }
                (None, Some(err)) => outln!("FAILED  {err}"),
                (None, None) => outln!("ok      {p}"),
            }
        }
        outln!(
            "\n{} item(s) checked, {failed} failed{}",
            files.len(),
            if policy.allow_unsigned {
                " (unsigned items allowed)"
            } else {
                ""
            }
        );
    }
    Ok(u8::from(failed > 0))
}
