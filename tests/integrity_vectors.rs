//! §10.2–10.3 test vectors: the seed documents 000 and 003 (knowledge entries, copied verbatim
//! into `tests/vectors/`) hash to their embedded hashes, and seed 003's signature verifies under
//! the public key of §10.3 (fingerprint `4b987fd4e40303ac`).

use ryechain::integrity::keys::{fingerprint, public_key_from_pem, verify_hash};
use ryechain::integrity::{
    ItemKind, SigLine, SignatureFormat, Verdict, hash, sigline, verify_text,
};

const SEED000: &str = include_str!("vectors/seed000.md");
const SEED003: &str = include_str!("vectors/seed003.md");
const PEM_003: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAgc0X8VKJuKzFh/aSw/XeYEdp3keIqncwu9ySd81Y69g=\n-----END PUBLIC KEY-----\n";

fn signature(text: &str) -> ryechain::integrity::Signature {
    match sigline::parse_signature(text, &SignatureFormat::html_comment()) {
        SigLine::Signed { signature, .. } => signature,
        other => panic!("seed is not signed: {other:?}"),
    }
}

#[test]
fn s64_seed_000_hashes_to_its_embedded_hash() {
    let sig = signature(SEED000);
    assert!(sig.content_hash.starts_with("f0ca4991") && sig.content_hash.ends_with("6165"));
    let got = hash::content_hash(ItemKind::Knowledge, SEED000, "<!--").unwrap();
    assert_eq!(got, sig.content_hash);
    // Unpadded base64url (seed 000) parses.
    assert!(!sig.signature.ends_with('='));
}

#[test]
fn s64_seed_003_hashes_and_verifies() {
    let sig = signature(SEED003);
    assert!(sig.content_hash.starts_with("055b0497") && sig.content_hash.ends_with("86b9"));
    let got = hash::content_hash(ItemKind::Knowledge, SEED003, "<!--").unwrap();
    assert_eq!(got, sig.content_hash);
    assert_eq!(fingerprint(PEM_003.as_bytes()), "4b987fd4e40303ac");
    assert_eq!(sig.key_fp, "4b987fd4e40303ac");
    let key = public_key_from_pem(PEM_003).unwrap();
    assert!(verify_hash(&key, &sig.content_hash, &sig.signature));

    let trusted = |fp: &str| (fp == "4b987fd4e40303ac").then(|| PEM_003.to_owned());
    let verdict = verify_text(
        ItemKind::Knowledge,
        &SignatureFormat::html_comment(),
        SEED003,
        &trusted,
    );
    assert!(
        matches!(verdict, Verdict::Verified { ref key_fp, .. } if key_fp == "4b987fd4e40303ac"),
        "{verdict:?}"
    );

    // Seed 000 is signed by a key we do not have: untrusted, after the hash check passed.
    let verdict = verify_text(
        ItemKind::Knowledge,
        &SignatureFormat::html_comment(),
        SEED000,
        &trusted,
    );
    assert!(
        matches!(verdict, Verdict::UntrustedKey { ref key_fp, .. } if key_fp == "6ea18199041a1ea8"),
        "{verdict:?}"
    );
}

#[test]
fn seed_003_any_body_change_fails_the_hash() {
    let edited = SEED003.replacen("rye_execute", "rye_exekute", 1);
    let trusted = |_: &str| Some(PEM_003.to_owned());
    let verdict = verify_text(
        ItemKind::Knowledge,
        &SignatureFormat::html_comment(),
        &edited,
        &trusted,
    );
    assert!(
        matches!(verdict, Verdict::HashMismatch { .. }),
        "{verdict:?}"
    );
    assert!(
        verdict
            .error_text("k.md")
            .unwrap()
            .starts_with("Integrity failed: k.md (expected 055b049709664ff5…, got ")
    );
}
