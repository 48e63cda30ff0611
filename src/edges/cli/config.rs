//! L6 `ryechain config [PATH]`: the settings in force for a project (its config merged over the
//! user's and the system's), each with the file and line that set it or `default`; the files
//! read; the problems lint would report in them. `--schema` prints the JSON Schema of
//! `.ai/config/ryechain.yaml` (generated from its type; `docs/ryechain.schema.json` holds it).

use std::path::Path;

use serde_json::{Value as Json, json};

use super::{Context, OutputFormat, print_notices, write_stdout};
use crate::db::Settings;

/// How a value reads in the human listing.
fn shown(key: &str, value: &Json) -> String {
    match value {
        Json::Null if key == "lint.select" => "every rule that is on by default".to_owned(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn config(
    ctx: &Context<'_>,
    path: &Path,
    format: Option<OutputFormat>,
    schema: bool,
) -> anyhow::Result<u8> {
    if schema {
        let text = serde_json::to_string_pretty(&crate::config::config_schema())?;
        write_stdout(&format!("{text}\n"))?;
        return Ok(0);
    }
    // The base load (extractors, configs, trust stores): no item is read.
    let (host, notices) = ctx.item_host(path, Settings::default(), &[])?;
    print_notices(&notices);
    let a = host.analysis();
    let view = a.config_settings();
    let where_ = |file, line: Option<usize>| {
        let p = a.path(file).display().to_string();
        match line {
            Some(l) => format!("{p}:{l}"),
            None => p,
        }
    };
    if format == Some(OutputFormat::Json) {
        let settings: Vec<Json> = view
            .settings
            .iter()
            .map(|s| {
                let origin = match s.origin {
                    None => json!("default"),
                    Some((file, line)) => json!({
                        "space": a.space_label(file),
                        "path": a.path(file).display().to_string(),
                        "line": line,
                    }),
                };
                json!({"key": s.key, "value": s.value, "origin": origin})
            })
            .collect();
        let files: Vec<Json> = view
            .files
            .iter()
            .map(|&f| json!({"space": a.space_label(f), "path": a.path(f).display().to_string()}))
            .collect();
        let problems: Vec<Json> = view
            .problems
            .iter()
            .map(|(f, line, m)| json!({"path": a.path(*f).display().to_string(), "line": line, "message": m}))
            .collect();
        let out = json!({"settings": settings, "files": files, "problems": problems});
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&out)?))?;
        return Ok(u8::from(!view.problems.is_empty()));
    }
    let mut out = String::new();
    if view.files.is_empty() {
        out.push_str("no config file: every setting is the default\n");
    } else {
        out.push_str("config files, lowest precedence first:\n");
        for &f in &view.files {
            out.push_str(&format!(
                "  {:<8} {}\n",
                a.space_label(f),
                a.path(f).display()
            ));
        }
    }
    out.push('\n');
    let width = view.settings.iter().map(|s| s.key.len()).max().unwrap_or(0);
    for s in &view.settings {
        let origin = match s.origin {
            None => "default".to_owned(),
            Some((file, line)) => where_(file, line),
        };
        out.push_str(&format!(
            "{:<width$}  {}  ({origin})\n",
            s.key,
            shown(&s.key, &s.value)
        ));
    }
    out.push_str(
        "\ncommand-line flags (--select, --ignore, --max-depth, --allow-unsigned) override these\n",
    );
    write_stdout(&out)?;
    for (file, line, message) in &view.problems {
        errln!("warning: {}: {message}", where_(*file, *line));
    }
    Ok(u8::from(!view.problems.is_empty()))
}
