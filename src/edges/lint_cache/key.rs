//! L6 the lint cache's key: everything besides the files that a cached finding depends on,
//! and the cache file's name.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::db::Settings;
use crate::load::SpaceSpec;
use crate::system::FileStamp;

/// Everything besides the files that the findings depend on. A cache with another key is
/// rebuilt without a word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    pub version: String,
    /// The stamp of the running executable (a rebuilt ryechain is another build).
    pub build: Option<FileStamp>,
    pub settings: String,
    pub spaces: Vec<String>,
    pub cwd: String,
}

impl CacheKey {
    pub fn new(
        build: Option<FileStamp>,
        settings: &Settings,
        specs: &[SpaceSpec],
        cwd: Option<&Path>,
    ) -> CacheKey {
        CacheKey {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            build,
            settings: format!("{settings:?}"),
            spaces: specs.iter().map(|s| format!("{s:?}")).collect(),
            cwd: cwd.map(|p| p.display().to_string()).unwrap_or_default(),
        }
    }

    /// The cache file's name: one per spaces and working directory (settings and builds share
    /// it, the last run's wins).
    pub fn file_name(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for s in &self.spaces {
            h.update(s.as_bytes());
            h.update([0]);
        }
        h.update(self.cwd.as_bytes());
        let d = h.finalize();
        let tag: String = d.iter().take(10).map(|b| format!("{b:02x}")).collect();
        format!("lint-{tag}.bin")
    }
}
