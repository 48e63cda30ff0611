//! Property tests of the integrity core (issue 4 item 7): sign → verify round-trips for arbitrary
//! content and every extension, any single-character change of signed content is detected, and
//! the signature-line parser never panics.

use proptest::prelude::*;

use super::keys::{fingerprint, key_pair_from_seed, signing_key_from_pem};
use super::sigline::{SignatureFormat, parse_signature, with_signature_line};
use super::{ItemKind, Verdict, default_format, hash, sign_text, verify_text};

struct Key {
    sk: ed25519_dalek::SigningKey,
    pem: String,
    fp: String,
}

fn key() -> Key {
    let pair = key_pair_from_seed(&[42; 32]).expect("key from seed");
    Key {
        sk: signing_key_from_pem(&pair.private_pem).expect("own PEM parses"),
        fp: fingerprint(pair.public_pem.as_bytes()),
        pem: pair.public_pem,
    }
}

/// Every (kind, extension) a signature format exists for.
const TARGETS: &[(ItemKind, &str)] = &[
    (ItemKind::Tool, ".py"),
    (ItemKind::Tool, ".yaml"),
    (ItemKind::Tool, ".yml"),
    (ItemKind::Tool, ".json"),
    (ItemKind::Tool, ".sh"),
    (ItemKind::Tool, ".toml"),
    (ItemKind::Tool, ".js"),
    (ItemKind::Tool, ".ts"),
    (ItemKind::Tool, ".mjs"),
    (ItemKind::Tool, ".cjs"),
    (ItemKind::Directive, ".md"),
    (ItemKind::Knowledge, ".md"),
];

/// Make arbitrary text a valid item of its kind (a directive needs its XML block).
fn item_text(kind: ItemKind, body: &str) -> String {
    match kind {
        ItemKind::Directive => format!("# D\n<directive name=\"d\">{body}</directive>\n"),
        _ => body.to_owned(),
    }
}

fn sign(kind: ItemKind, fmt: &SignatureFormat, text: &str, k: &Key) -> String {
    let ts = "2026-11-22T00:00:00Z".to_owned();
    sign_text(kind, fmt, text, &k.sk, &k.fp, ts)
        .expect("hashable")
        .0
}

/// Bodies without the constructs whose bytes the reference leaves unhashed (a leading shebang,
/// a leading `---` frontmatter) and without a leading signature-like line.
fn body() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _:=\"'#/<>!.\\-\n\t\u{e9}\u{4e2d}]{0,120}".prop_filter("no unhashed lead", |s| {
        !s.starts_with("#!")
            && !s.starts_with("---")
            && !s.starts_with('#')
            && !s.starts_with("//")
            && !s.starts_with("<!--")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn sign_then_verify_round_trips(body in body(), target in 0..TARGETS.len(), shebang in any::<bool>()) {
        let k = key();
        let (kind, ext) = TARGETS[target];
        let fmt = default_format(kind, ext);
        let mut text = item_text(kind, &body);
        if shebang && kind == ItemKind::Tool {
            text = format!("#!/usr/bin/env tool\n{text}");
        }
        let signed = sign(kind, &fmt, &text, &k);
        let trusted = |fp: &str| (fp == k.fp).then(|| k.pem.clone());
        let verdict = verify_text(kind, &fmt, &signed, &trusted);
        prop_assert!(matches!(verdict, Verdict::Verified { .. }), "{:?}\n{}", verdict, signed);
        // Signing again replaces the line: still exactly one signature, still verified.
        let again = sign(kind, &fmt, &signed, &k);
        prop_assert_eq!(again.matches("rye:signed:").count(), signed.matches("rye:signed:").count());
        prop_assert!(verify_text(kind, &fmt, &again, &trusted).passed());
        // The shebang stays first.
        if shebang && kind == ItemKind::Tool {
            prop_assert!(signed.starts_with("#!/usr/bin/env tool\n"));
        }
    }

    #[test]
    fn any_single_character_change_is_detected(
        body in body().prop_filter("non-empty", |b| !b.is_empty()),
        target in 0..TARGETS.len(),
        pick in any::<prop::sample::Index>(),
        replacement in prop::char::any(),
    ) {
        let k = key();
        let (kind, ext) = TARGETS[target];
        let fmt = default_format(kind, ext);
        let signed = sign(kind, &fmt, &item_text(kind, &body), &k);
        // Positions the signature does not cover, by design of the reference: the timestamp
        // (never signed), and for directives the markdown outside the XML block.
        let line_end = signed.find('\n').unwrap_or(signed.len());
        let ts_start = signed.find("rye:signed:").map(|i| i + "rye:signed:".len()).unwrap_or(0);
        let covered = |i: usize| -> bool {
            if i >= ts_start && i < ts_start + 20 { return false; }
            if kind == ItemKind::Directive && i > line_end {
                let start = signed.find("<directive").unwrap_or(0);
                let end = signed.rfind("</directive>").map(|e| e + 12).unwrap_or(signed.len());
                return i >= start && i < end;
            }
            true
        };
        let chars: Vec<(usize, char)> = signed.char_indices().filter(|(i, _)| covered(*i)).collect();
        let (at, old) = chars[pick.index(chars.len())];
        prop_assume!(old != replacement);
        let mut changed = String::with_capacity(signed.len() + 4);
        changed.push_str(&signed[..at]);
        changed.push(replacement);
        changed.push_str(&signed[at + old.len_utf8()..]);
        // Line breaks are read as universal newlines (§10.2): `\n` made `\r` is the same text.
        prop_assume!(hash::universal_newlines(&changed) != hash::universal_newlines(&signed));
        // Whitespace the hash rules strip (directive XML, knowledge frontmatter) is not content.
        if kind == ItemKind::Directive && (old.is_whitespace() || replacement.is_whitespace()) {
            let before = hash::directive_content(&signed).ok();
            let after = hash::directive_content(&changed).ok();
            prop_assume!(before != after);
        }
        let trusted = |fp: &str| (fp == k.fp).then(|| k.pem.clone());
        let verdict = verify_text(kind, &fmt, &changed, &trusted);
        prop_assert!(!verdict.passed(), "undetected change at {} ({:?} → {:?}): {:?}", at, old, replacement, verdict);
    }

    /// §10.2: the hash is taken over the text with universal newlines, so any text hashes as
    /// its LF form (made here independently of `universal_newlines`) and as its CRLF form.
    #[test]
    fn s10_2_hash_of_crlf_or_cr_text_is_the_hash_of_its_lf_form(
        text in prop_oneof![any::<String>(), "[a-z#!<>/ :\\-\r\n]{0,80}", "(<!-- rye:signed:x -->|#!/bin/sh|# rye:signed:x|---|<directive>|</directive>|\r|\n|\r\n|a){0,12}"],
        prefix in "(#|//|<!--)",
    ) {
        let lf = text.replace("\r\n", "\n").replace('\r', "\n");
        let crlf = lf.replace('\n', "\r\n");
        for kind in [ItemKind::Tool, ItemKind::Directive, ItemKind::Knowledge] {
            let want = hash::content_hash(kind, &lf, &prefix);
            prop_assert_eq!(&hash::content_hash(kind, &text, &prefix), &want, "{:?}", text);
            prop_assert_eq!(&hash::content_hash(kind, &crlf, &prefix), &want, "{:?}", crlf);
        }
    }

    /// Signing a CRLF or CR-only file keeps its line breaks: the signature line ends as the
    /// file's lines do and every other byte stays; the result verifies, and so does its LF form
    /// (what the reference reads).
    #[test]
    fn signing_keeps_crlf_and_cr_line_breaks(
        body in body(),
        target in 0..TARGETS.len(),
        shebang in any::<bool>(),
        eol in "(\r\n|\r)",
    ) {
        let k = key();
        let (kind, ext) = TARGETS[target];
        let fmt = default_format(kind, ext);
        let mut lf = item_text(kind, &body);
        if shebang && kind == ItemKind::Tool {
            lf = format!("#!/usr/bin/env tool\n{lf}");
        }
        prop_assume!(lf.contains('\n'));
        let text = lf.replace('\n', &eol);
        let signed = sign(kind, &fmt, &text, &k);
        let trusted = |fp: &str| (fp == k.fp).then(|| k.pem.clone());
        let verdict = verify_text(kind, &fmt, &signed, &trusted);
        prop_assert!(matches!(verdict, Verdict::Verified { .. }), "{:?}\n{:?}", verdict, signed);
        let signed_lf = signed.replace(&eol, "\n");
        prop_assert!(!signed_lf.contains('\r'), "a line break other than {:?}: {:?}", eol, signed);
        prop_assert!(verify_text(kind, &fmt, &signed_lf, &trusted).passed());
        prop_assert_eq!(signed_lf, sign(kind, &fmt, &lf, &k));
    }

    #[test]
    fn signature_parser_never_panics(text in any::<String>(), prefix in "(#|//|<!--|)", suffix in any::<bool>(), after in any::<bool>()) {
        let fmt = SignatureFormat {
            prefix,
            suffix: suffix.then(|| "-->".to_owned()),
            after_shebang: after,
        };
        let _ = parse_signature(&text, &fmt);
        let line = format!("{} rye:signed:{}", fmt.prefix, text);
        let _ = parse_signature(&line, &fmt);
        let _ = with_signature_line(&text, &fmt, "# x");
        for kind in [ItemKind::Tool, ItemKind::Directive, ItemKind::Knowledge] {
            let _ = hash::content_hash(kind, &text, &fmt.prefix);
        }
    }

    /// The approval reader (a document in the user space) never panics on any text, and what
    /// `keys trust --project` writes always reads back as the same approval, whatever the
    /// project path holds (quotes, backslashes, newlines, any Unicode).
    #[test]
    fn approvals_never_panic_and_round_trip(text in "\\PC{0,300}", project in "\\PC{1,80}", owner in "\\PC{0,20}") {
        let _ = super::trust::parse_approval(&text);
        let k = key();
        let trusted = super::trust::TrustedKey { fingerprint: k.fp.clone(), pem: k.pem.clone(), owner: None };
        let a = super::trust::Approval::of(&trusted, &project);
        let doc = a.to_toml(Some(&owner), ".ai/config/keys/trusted/x.toml", "now");
        prop_assert_eq!(super::trust::parse_approval(&doc), Ok(a));
    }
}
