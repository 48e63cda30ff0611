//! L6 the language server edge (`ryechain lsp`): stdio transport, the main loop over one `Host`
//! (`server`), answering from `Analysis` views on snapshots; positions and URIs; and the
//! read-only copies of embedded files and rule pages under the user cache dir that the editor
//! opens (the server never writes into the workspace).

#![allow(
    clippy::disallowed_methods,
    reason = "the language server's edge: it writes the read-only embedded copies under the user cache dir"
)]

pub mod position;
pub mod server;
pub mod transport;
pub mod uri;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::rules::{doc_page, embedded_system_files, rules};

/// A file the editor can open for `path`: itself, or the materialised copy of an embedded file
/// (`materialised(bundle, rel)` maps `<embedded:bundle>/…` to a path on disk).
pub fn openable(
    path: &Path,
    materialised: &dyn Fn(&str, &str) -> Option<PathBuf>,
) -> Option<PathBuf> {
    let s = path.to_str()?;
    match s.strip_prefix(crate::model::EMBEDDED_PATH_PREFIX) {
        Some(rest) => {
            let (bundle, rel) = rest.split_once(">/")?;
            materialised(bundle, rel)
        }
        None => Some(path.to_path_buf()),
    }
}

/// Where the embedded bundle and the rule pages are copied for the editor:
/// `$XDG_CACHE_HOME/ryechain/embedded-<hash>` (or `~/.cache/...`), the hash naming exactly this
/// build's embedded files so two versions never share a copy.
pub fn cache_root(xdg_cache: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let base = match (xdg_cache.filter(|s| s.starts_with('/')), home) {
        (Some(x), _) => PathBuf::from(x),
        (None, Some(h)) if h.starts_with('/') => Path::new(h).join(".cache"),
        _ => return None,
    };
    let mut h = Sha256::new();
    for (rel, bytes) in embedded_system_files() {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(bytes);
    }
    for r in &rules().rules {
        h.update(doc_page(&r.id).unwrap_or_default().as_bytes());
    }
    let digest = h.finalize();
    let tag: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Some(base.join("ryechain").join(format!("embedded-{tag}")))
}

/// Write `bytes` at `path` read-only unless it is already there with these bytes (a temp file
/// renamed into place, so a concurrent server never sees half a file).
fn write_read_only(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("f"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)?;
    let mut perms = std::fs::metadata(&tmp)?.permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&tmp, perms)?;
    std::fs::rename(&tmp, path)
}

/// Copy the embedded bundle (`<root>/<bundle>/.ai/...`) and the rule pages (`<root>/rules/ID.md`)
/// under `root`. Errors are returned (the server then links nothing there).
pub fn materialise(root: &Path, bundle: &str) -> std::io::Result<()> {
    for (rel, bytes) in embedded_system_files() {
        write_read_only(&root.join(bundle).join(rel), bytes)?;
    }
    for r in &rules().rules {
        if let Some(page) = doc_page(&r.id) {
            write_read_only(
                &root.join("rules").join(format!("{}.md", r.id)),
                page.as_bytes(),
            )?;
        }
    }
    Ok(())
}
