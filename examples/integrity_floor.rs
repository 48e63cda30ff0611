//! The integrity floor of a signed tree: the work `ryechain lint` with the default rules cannot
//! avoid beyond reading the files — hashing each item (§10.2) and verifying each Ed25519
//! signature (§10.3) — timed phase by phase with the library's own functions, on the rayon pool
//! (`RAYON_NUM_THREADS`, default one thread per core).
//!
//! Usage: `integrity_floor TREE` where TREE is a `gen_tree --sign` output (TREE/keys/public_key.pem
//! and TREE/{project,user,system}/.ai/tools). Prints one line per phase; exits 1 if any
//! signature does not verify (the figures would be of a different workload).

// A measuring tool at the edge: it reads the tree itself.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use ryechain::integrity::batch::{Job, verify_each};
use ryechain::integrity::hash::content_hash;
use ryechain::integrity::keys::{decode_signature, public_key_from_pem, verify_hash};
use ryechain::integrity::sigline::parse_signature;
use ryechain::integrity::{ItemKind, SigLine, default_format, extension_of};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            files_under(&e.path(), out);
        } else if kind.is_file() {
            out.push(e.path());
        }
    }
}

fn main() -> std::process::ExitCode {
    let Some(tree) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: integrity_floor TREE   (a `gen_tree --sign` output)");
        return std::process::ExitCode::from(2);
    };
    let pem = match std::fs::read_to_string(tree.join("keys/public_key.pem")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "integrity_floor: {}: {e}",
                tree.join("keys/public_key.pem").display()
            );
            return std::process::ExitCode::from(2);
        }
    };
    let key = match public_key_from_pem(&pem) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("integrity_floor: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let mut paths = Vec::new();
    for space in ["project", "user", "system"] {
        files_under(&tree.join(space).join(".ai/tools"), &mut paths);
    }
    let threads = rayon::current_num_threads();

    let t = Instant::now();
    let texts: Vec<(&Path, String)> = paths
        .par_iter()
        .filter_map(|p| Some((p.as_path(), std::fs::read_to_string(p).ok()?)))
        .collect();
    let read = t.elapsed();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();

    let t = Instant::now();
    let signed: Vec<(String, ryechain::integrity::Signature)> = texts
        .par_iter()
        .filter_map(|(path, text)| {
            // Every file here is a tool, in the built-in format of its extension (gen_tree's
            // extractors declare no other).
            let ext = extension_of(path.to_str()?);
            let fmt = default_format(ItemKind::Tool, ext);
            let SigLine::Signed { signature, .. } = parse_signature(text, &fmt) else {
                return None;
            };
            let hash = content_hash(ItemKind::Tool, text, &fmt.prefix).ok()?;
            Some((hash, signature))
        })
        .collect();
    let hashed = t.elapsed();

    let t = Instant::now();
    let good = signed
        .par_iter()
        .filter(|(hash, sig)| *hash == sig.content_hash && verify_hash(&key, hash, &sig.signature))
        .count();
    let verified = t.elapsed();

    // The same, in batches of the size the lint's chunks have (`integrity::batch`).
    let t = Instant::now();
    let batch = (signed.len() / (threads * 8)).max(32);
    let good_batched: usize = signed
        .par_chunks(batch)
        .map(|chunk| {
            let sigs: Vec<_> = chunk
                .iter()
                .map(|(hash, sig)| (hash, decode_signature(&sig.signature), &sig.content_hash))
                .collect();
            let jobs: Vec<Job<'_>> = sigs
                .iter()
                .filter_map(|(hash, sig, claimed)| {
                    (*hash == *claimed).then_some(Job {
                        key: &key,
                        msg: hash.as_bytes(),
                        sig: sig.as_ref()?,
                    })
                })
                .collect();
            verify_each(&jobs).into_iter().filter(|&ok| ok).count()
        })
        .sum();
    let batched = t.elapsed();

    let per =
        |d: std::time::Duration, n: usize| d.as_secs_f64() * 1e6 * threads as f64 / n.max(1) as f64;
    println!(
        "files {} ({bytes} bytes), signed {}, verified {good}, {threads} threads",
        texts.len(),
        signed.len()
    );
    println!("read             {:6.3} s", read.as_secs_f64());
    println!(
        "sigline + SHA-256 {:6.3} s  ({:.1} us per file per thread)",
        hashed.as_secs_f64(),
        per(hashed, texts.len())
    );
    println!(
        "Ed25519 verify   {:6.3} s  ({:.1} us per signature per thread)",
        verified.as_secs_f64(),
        per(verified, signed.len())
    );
    println!(
        "Ed25519 batches  {:6.3} s  ({:.1} us per signature per thread, {batch} a batch)",
        batched.as_secs_f64(),
        per(batched, signed.len())
    );
    if good == signed.len() && good_batched == good && good > 0 {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!(
            "integrity_floor: {} of {} signatures did not verify",
            signed.len() - good,
            signed.len()
        );
        std::process::ExitCode::FAILURE
    }
}
