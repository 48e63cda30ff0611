//! L6 `ryechain clean [PATH]`: remove the lint cache of a project (its file in the cache folder),
//! or with `--all` every lint cache ryechain wrote there; nothing else in the folder is touched.
#![allow(
    clippy::disallowed_methods,
    reason = "the clean command lists and removes cache files"
)]

use std::path::{Path, PathBuf};

use super::Context;
use crate::db::Settings;
use crate::lint_cache::CacheKey;

/// Whether `name` is a file the lint cache writes: `lint-<20 hex digits>.bin`.
fn is_cache_file(name: &str) -> bool {
    name.strip_prefix("lint-")
        .and_then(|r| r.strip_suffix(".bin"))
        .is_some_and(|tag| tag.len() == 20 && tag.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub fn clean(ctx: &Context<'_>, path: &Path, all: bool) -> anyhow::Result<u8> {
    let Some(dir) = ctx.lint_cache_dir() else {
        errln!("no cache folder: neither RYECHAIN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
        return Ok(0);
    };
    let files: Vec<PathBuf> = if all {
        match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter(|e| e.file_name().to_str().is_some_and(is_cache_file))
                .map(|e| e.path())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => anyhow::bail!("{} cannot be listed: {e}", dir.display()),
        }
    } else {
        // The project's cache: its name depends on the spaces and the project folder only.
        let (specs, _) = ctx.spaces(path)?;
        let cwd = ctx.project_root(path)?;
        let key = CacheKey::new(None, &Settings::default(), &specs, Some(&cwd));
        vec![dir.join(key.file_name())]
    };
    let mut removed = 0u64;
    let mut count = 0usize;
    for file in &files {
        let Ok(meta) = std::fs::symlink_metadata(file) else {
            continue;
        };
        std::fs::remove_file(file)
            .map_err(|e| anyhow::anyhow!("{} cannot be removed: {e}", file.display()))?;
        removed += meta.len();
        count += 1;
        outln!("removed {}", file.display());
    }
    if count == 0 {
        outln!("nothing to remove in {}", dir.display());
    } else {
        outln!(
            "removed {count} cache file{} ({} KiB)",
            if count == 1 { "" } else { "s" },
            removed.div_ceil(1024)
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_caches_own_files_are_taken() {
        assert!(is_cache_file("lint-00e0ae5db7a082f0d232.bin"));
        assert!(!is_cache_file("lint-00e0ae5db7a082f0d23.bin"));
        assert!(!is_cache_file("lint-zze0ae5db7a082f0d232.bin"));
        assert!(!is_cache_file("notes.txt"));
        assert!(!is_cache_file("lint-00e0ae5db7a082f0d232.bin.tmp"));
    }
}
