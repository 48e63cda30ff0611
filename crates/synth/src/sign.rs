//! Signing a generated tree with a throwaway key derived from its seed.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;
use ryechain::analysis::Host;
use ryechain::db::change::{FileSpec, RootSpec};
use ryechain::db::{Change, FileContents};
use ryechain::integrity::keys::{KeyError, fingerprint, key_pair_from_seed, signing_key_from_pem};
use ryechain::integrity::timefmt::signature_timestamp;
use ryechain::integrity::trust::trust_doc_toml;
use ryechain::integrity::{
    ItemKind, SignatureFormat, SignatureFormats, extension_of, formats_of, sign_text,
};
use ryechain::model::Space;
use ryechain::resolve::extractor::EXTRACTORS_DIR;

use crate::rng::Rng;
use crate::{GenFile, GeneratedTree};

/// Where [`sign`] trusts its key: the seed-era trust document of the generated user space.
pub const TRUST_DOC_DIR: &str = "user/.ai/config/keys/trusted";

/// The time written into every signature line of a signed tree (2026-01-01T00:00:00Z), so the
/// same options still give byte-identical trees.
pub const SIGNED_AT: i64 = 1_767_225_600;

/// The throwaway key a tree was signed with (PEM texts as `ryechain keys generate` writes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeKey {
    pub private_pem: String,
    pub public_pem: String,
    pub fingerprint: String,
}

/// Sign every item of a generated tree in place with a throwaway Ed25519 key derived from the
/// tree's seed, and trust that key in the generated user space (`TRUST_DOC_DIR/<fp>.toml`, a new
/// file of the tree). Signing is the library's own (`integrity::sign_text`) with the signature
/// format the tree's extractors configure, so `ryechain lint` with the integrity family on reports
/// exactly the manifest's planted findings. Symlinks are covered by their targets. Pure and
/// deterministic (the key comes from the seed, the time is [`SIGNED_AT`]); items are signed in
/// parallel. The key is for benchmarks and tests only: anyone can derive it from the seed.
pub fn sign(tree: &mut GeneratedTree) -> Result<TreeKey, KeyError> {
    let mut rng = Rng::new(tree.manifest.seed ^ 0x7369_676E_5F6B_6579); // "sign_key"
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let pem = key_pair_from_seed(&seed)?;
    let key = signing_key_from_pem(&pem.private_pem)?;
    let fp = fingerprint(pem.public_pem.as_bytes());
    let formats = SignatureFormatsOf::read(tree);
    let timestamp = signature_timestamp(SIGNED_AT);
    tree.files.par_iter_mut().for_each(|f| {
        let Some((_, rel)) = f.path.split_once("/.ai/") else {
            return;
        };
        let Some(kind @ ItemKind::Tool) = ItemKind::of_rel(rel) else {
            return;
        };
        let fmt = formats.get(kind, rel);
        // Only a directive without XML fails to sign; a tree holds tools only.
        if let Ok((signed, _)) = sign_text(kind, &fmt, &f.contents, &key, &fp, timestamp.clone()) {
            f.contents = signed;
        }
    });
    let doc = GenFile {
        path: format!("{TRUST_DOC_DIR}/{fp}.toml"),
        contents: trust_doc_toml(&pem.public_pem, "gen_tree (throwaway benchmark key)"),
    };
    let at = tree.files.partition_point(|f| f.path < doc.path);
    tree.files.insert(at, doc);
    tree.manifest.files = tree.files.len();
    tree.manifest.signed_by = Some(fp.clone());
    Ok(TreeKey {
        private_pem: pem.private_pem,
        public_pem: pem.public_pem,
        fingerprint: fp,
    })
}

/// The signature formats the tree's own extractors configure, read through the same query
/// `ryechain sign` uses (a database holding only the extractor files).
struct SignatureFormatsOf(SignatureFormats);

impl SignatureFormatsOf {
    fn read(tree: &GeneratedTree) -> Self {
        let spaces = [
            ("project", Space::Project),
            ("user", Space::User),
            (
                "system",
                Space::System {
                    order: 0,
                    bundle: Arc::from("gen"),
                },
            ),
        ];
        let roots = spaces
            .into_iter()
            .map(|(dir, space)| {
                let base = PathBuf::from("/gen").join(dir).join(".ai");
                let files = tree
                    .files
                    .iter()
                    .filter_map(|f| {
                        let rel = f.path.strip_prefix(dir)?.strip_prefix("/.ai/")?;
                        rel.starts_with(EXTRACTORS_DIR).then(|| FileSpec {
                            space: space.clone(),
                            path: base.join(rel),
                            rel: rel.to_owned(),
                            contents: FileContents::Text(f.contents.as_str().into()),
                            link_origin: None,
                        })
                    })
                    .collect();
                RootSpec {
                    space,
                    root: base,
                    files,
                }
            })
            .collect();
        let mut host = Host::new();
        host.apply(Change {
            roots: Some(roots),
            ..Change::default()
        });
        let db = host.snapshot();
        SignatureFormatsOf(formats_of(&db, ItemKind::Tool).clone())
    }

    fn get(&self, kind: ItemKind, rel: &str) -> SignatureFormat {
        self.0.get(kind, extension_of(rel))
    }
}
