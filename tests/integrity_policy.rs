//! The verification entry point and policy the execution path uses (§10.5): per-file verdicts of
//! a whole chain plus extra files with the reference's texts; any failing element or extra file
//! refuses the chain; unsigned items pass only with `--allow-unsigned` or
//! `integrity.require_signatures: false`. Also: the embedded bundle is trusted by construction.

use std::path::PathBuf;

use ryechain::analysis::verify::{ExtraFile, Policy, verify_all, verify_chain};
use ryechain::analysis::{LintOptions, lint};
use ryechain::integrity::{
    EMBEDDED_KEY_FP, ItemKind, Verdict, default_format, extension_of, sign_text, trust,
};
use ryechain::testing::host;

use ryechain::testing::{TestKey, test_key};

fn signed(rel: &str, text: &str, key: &TestKey) -> String {
    let kind = ItemKind::of_rel(rel).unwrap();
    let fmt = default_format(kind, extension_of(rel));
    let ts = "2026-11-22T00:00:00Z".to_owned();
    sign_text(kind, &fmt, text, &key.sk, &key.fp, ts).unwrap().0
}

const TOOL: &str = "__version__ = \"1.0.0\"\n__tool_type__ = \"python\"\n__executor_id__ = \"acme/rt/python\"\nprint('hi')\n";
const RUNTIME: &str =
    "version: \"1.0.0\"\ntool_type: runtime\nexecutor_id: rye/core/runtimes/python/script\n";

/// A project with tool → project runtime → embedded system runtime → primitive.
fn fixture(tool: &str, runtime: &str, key: &TestKey, extra: &str) -> String {
    format!(
        "//- /user/.ai/config/keys/trusted/{fp}.toml\n{doc}//- /project/.ai/tools/acme/hello.py\n{tool}//- /project/.ai/tools/acme/rt/python.yaml\n{runtime}{extra}",
        fp = key.fp,
        doc = trust::trust_doc_toml(&key.public_pem, "test"),
    )
}

/// The fixture with the tool and its runtime both signed by `key`.
fn signed_fixture(key: &TestKey) -> String {
    fixture(
        &signed("tools/acme/hello.py", TOOL, key),
        &signed("tools/acme/rt/python.yaml", RUNTIME, key),
        key,
        "",
    )
}

#[test]
fn a_fully_signed_chain_runs_and_the_embedded_runtime_is_trusted() {
    let k = test_key(1);
    let text = signed_fixture(&k);
    let host = host(&text);
    let db = host.snapshot();
    let v = verify_chain(&db, "acme/hello", &[]).expect("the tool resolves");
    let ids: Vec<_> = v.files.iter().map(|f| f.item_id.clone().unwrap()).collect();
    // DESIGN.md: a primitive with a system file is loaded and verified too.
    assert_eq!(
        ids,
        [
            "acme/hello",
            "acme/rt/python",
            "rye/core/runtimes/python/script",
            "rye/core/primitives/subprocess"
        ]
    );
    assert_eq!(v.files[0].verdict.key_fp(), Some(k.fp.as_str()));
    assert_eq!(v.files[2].verdict.key_fp(), Some(EMBEDDED_KEY_FP));
    assert!(v.files.iter().all(|f| f.error.is_none()));
    assert_eq!(
        v.refusal(&Policy {
            allow_unsigned: false
        }),
        None
    );
}

#[test]
fn s62_unsigned_elements_are_refused_unless_allowed() {
    let k = test_key(1);
    let text = fixture(
        TOOL,
        &signed("tools/acme/rt/python.yaml", RUNTIME, &k),
        &k,
        "",
    );
    let host = host(&text);
    let db = host.snapshot();
    let v = verify_chain(&db, "acme/hello", &[]).unwrap();
    let refusal = v
        .refusal(&Policy {
            allow_unsigned: false,
        })
        .unwrap();
    assert_eq!(
        refusal,
        "Unsigned item: /fixture/project/.ai/tools/acme/hello.py"
    );
    assert_eq!(
        v.refusal(&Policy {
            allow_unsigned: true
        }),
        None
    );
    // Default policy (no config, no flag): signatures required.
    assert_eq!(
        Policy::resolve(&db, false),
        Policy {
            allow_unsigned: false
        }
    );
    assert!(Policy::resolve(&db, true).allow_unsigned);
}

#[test]
fn the_users_config_can_allow_unsigned_items() {
    let k = test_key(1);
    let cfg = "//- /user/.ai/config/ryechain.yaml\nintegrity:\n  require_signatures: false\n";
    let host = host(&fixture(TOOL, RUNTIME, &k, cfg));
    let db = host.snapshot();
    let policy = Policy::resolve(&db, false);
    assert!(policy.allow_unsigned);
    assert!(Policy::notices(&db).is_empty());
    let v = verify_chain(&db, "acme/hello", &[]).unwrap();
    assert_eq!(v.refusal(&policy), None);
}

/// DESIGN.md "Trust": a project can never lower the integrity policy. Its
/// `require_signatures: false` is ignored, with a notice for `exec`/`verify` and a lint finding
/// on the config file; it may still raise the policy over the user's `false`.
#[test]
fn a_project_config_cannot_lower_the_policy() {
    let k = test_key(1);
    let cfg = "//- /project/.ai/config/ryechain.yaml\nintegrity:\n  require_signatures: false\n";
    let host = host(&fixture(TOOL, RUNTIME, &k, cfg));
    let db = host.snapshot();
    let policy = Policy::resolve(&db, false);
    assert!(!policy.allow_unsigned);
    let v = verify_chain(&db, "acme/hello", &[]).unwrap();
    assert_eq!(
        v.refusal(&policy),
        Some("Unsigned item: /fixture/project/.ai/tools/acme/hello.py")
    );
    let notices = Policy::notices(&db);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("/fixture/project/.ai/config/ryechain.yaml: `integrity.require_signatures: false` in a project's config is ignored"),
        "{notices:?}"
    );
    let report = lint(&db, &LintOptions::default(), &|_| {});
    let found: Vec<_> = report
        .findings
        .iter()
        .filter(|f| &*f.rule == "project-disables-signatures")
        .map(|f| (f.path.clone(), f.line))
        .collect();
    assert_eq!(
        found,
        [("/fixture/project/.ai/config/ryechain.yaml".to_owned(), 2)]
    );

    // The user's `false` under the project's `true`: the stricter word wins.
    let both = "//- /user/.ai/config/ryechain.yaml\nintegrity:\n  require_signatures: false\n//- /project/.ai/config/ryechain.yaml\nintegrity:\n  require_signatures: true\n";
    let host = ryechain::testing::host(&fixture(TOOL, RUNTIME, &k, both));
    let db = host.snapshot();
    assert!(!Policy::resolve(&db, false).allow_unsigned);
    assert!(Policy::notices(&db).is_empty());
}

/// A project that ships its own key beside tools signed with it: the tree being checked vouching
/// for itself. Before approval every item it signed is refused, with the way to approve.
fn self_vouching_project(key: &TestKey, extra: &str) -> String {
    format!(
        "//- /project/.ai/config/keys/trusted/{fp}.toml\n{doc}//- /project/.ai/tools/acme/hello.py\n{tool}//- /project/.ai/tools/acme/rt/python.yaml\n{rt}{extra}",
        fp = key.fp,
        doc = trust::trust_doc_toml(&key.public_pem, "team"),
        tool = signed("tools/acme/hello.py", TOOL, key),
        rt = signed("tools/acme/rt/python.yaml", RUNTIME, key),
    )
}

/// The approval document `keys trust --project` writes, for `project`.
fn approval(key: &TestKey, project: &str) -> (String, String) {
    let pem = format!("{}\n", key.public_pem.trim());
    let trusted = trust::parse_trust_doc(&format!("trusted_keys/{}.pem", key.fp), &pem).unwrap();
    let a = trust::Approval::of(&trusted, project);
    (
        a.file_name(),
        a.to_toml(
            Some("team"),
            ".ai/config/keys/trusted/x.toml",
            "2026-11-27T00:00:00Z",
        ),
    )
}

#[test]
fn a_project_key_is_not_trusted_until_the_person_approves_it() {
    let k = test_key(1);
    let host = host(&self_vouching_project(&k, ""));
    let db = host.snapshot();
    let v = verify_chain(&db, "acme/hello", &[]).unwrap();
    let refusal = v.refusal(&Policy::resolve(&db, false)).unwrap();
    assert_eq!(
        refusal,
        format!(
            "Untrusted key {fp} for /fixture/project/.ai/tools/acme/hello.py. The project ships this key in /fixture/project/.ai/config/keys/trusted/{fp}.toml, but a key a project ships is trusted only after you approve it: review it with `ryechain keys trust --project /fixture/project`.",
            fp = k.fp
        )
    );
    // `--allow-unsigned` does not help: the items are signed, by a key nobody trusts.
    assert!(
        v.refusal(&Policy {
            allow_unsigned: true
        })
        .is_some()
    );
    let report = lint(&db, &LintOptions::default(), &|_| {});
    let rules = |id: &str| report.findings.iter().filter(|f| &*f.rule == id).count();
    assert_eq!(rules("untrusted-key"), 2);
    assert_eq!(rules("unapproved-project-key"), 1);
    let help = report
        .findings
        .iter()
        .find(|f| &*f.rule == "untrusted-key")
        .and_then(|f| f.help.clone())
        .unwrap_or_default();
    assert!(help.contains("ryechain keys trust --project"), "{help}");
}

#[test]
fn an_approval_trusts_that_key_for_that_project_only() {
    let k = test_key(1);
    let other = test_key(2);
    let run = |extra: &str| {
        let host = host(&self_vouching_project(&k, extra));
        let db = host.snapshot();
        let v = verify_chain(&db, "acme/hello", &[]).unwrap();
        let refusal = v.refusal(&Policy::resolve(&db, false)).map(str::to_owned);
        let report = lint(&db, &LintOptions::default(), &|_| {});
        let unapproved = report
            .findings
            .iter()
            .filter(|f| &*f.rule == "unapproved-project-key")
            .count();
        (refusal, unapproved)
    };
    let (name, doc) = approval(&k, "/fixture/project");
    let approved = format!("//- /user/.ai/config/keys/approved/{name}\n{doc}");
    assert_eq!(run(&approved), (None, 0));

    // Approved for another project: still waiting here.
    let (name, doc) = approval(&k, "/elsewhere/project");
    let (refusal, unapproved) = run(&format!("//- /user/.ai/config/keys/approved/{name}\n{doc}"));
    assert!(refusal.unwrap().starts_with("Untrusted key"));
    assert_eq!(unapproved, 1);

    // An approval of another key under this key's fingerprint: bound to the key itself.
    let (_, forged) = approval(&other, "/fixture/project");
    let forged = forged.replace(&other.fp, &k.fp);
    let (refusal, _) = run(&format!(
        "//- /user/.ai/config/keys/approved/forged.toml\n{forged}"
    ));
    assert!(refusal.unwrap().starts_with("Untrusted key"));

    // The project approving itself: approvals are read from the user space only.
    let (name, doc) = approval(&k, "/fixture/project");
    let (refusal, unapproved) = run(&format!(
        "//- /project/.ai/config/keys/approved/{name}\n{doc}"
    ));
    assert!(refusal.unwrap().starts_with("Untrusted key"));
    assert_eq!(unapproved, 1);
}

/// Keys of system bundles the person installed, and of the user space, stay trusted without
/// approval.
#[test]
fn user_and_system_keys_need_no_approval() {
    let k = test_key(1);
    let text = format!(
        "//- /system/.ai/config/keys/trusted/{fp}.toml\n{doc}//- /project/.ai/tools/acme/hello.py\n{tool}//- /project/.ai/tools/acme/rt/python.yaml\n{rt}",
        fp = k.fp,
        doc = trust::trust_doc_toml(&k.public_pem, "bundle"),
        tool = signed("tools/acme/hello.py", TOOL, &k),
        rt = signed("tools/acme/rt/python.yaml", RUNTIME, &k),
    );
    let host = host(&text);
    let db = host.snapshot();
    let v = verify_chain(&db, "acme/hello", &[]).unwrap();
    assert_eq!(v.refusal(&Policy::resolve(&db, false)), None);
}

#[test]
fn s62_a_tampered_element_is_refused_even_when_unsigned_is_allowed() {
    let k = test_key(1);
    let runtime = signed("tools/acme/rt/python.yaml", RUNTIME, &k).replace("1.0.0", "1.0.1");
    let text = fixture(&signed("tools/acme/hello.py", TOOL, &k), &runtime, &k, "");
    let host = host(&text);
    let v = verify_chain(&host.snapshot(), "acme/hello", &[]).unwrap();
    let refusal = v
        .refusal(&Policy {
            allow_unsigned: true,
        })
        .unwrap();
    assert!(
        refusal.starts_with(
            "Integrity failed: /fixture/project/.ai/tools/acme/rt/python.yaml (expected "
        ),
        "{refusal}"
    );
}

#[test]
fn s62_untrusted_and_extra_files_follow_the_reference_order() {
    let k = test_key(1);
    let stranger = test_key(2);
    let text = signed_fixture(&k);
    let host = host(&text);
    let db = host.snapshot();
    let good = ExtraFile {
        path: PathBuf::from("/anchor/lib/util.py"),
        kind: ItemKind::Tool,
        text: signed("tools/util.py", "X = 1\n", &k).into(),
    };
    let foreign = ExtraFile {
        path: PathBuf::from("/anchor/lib/other.py"),
        kind: ItemKind::Tool,
        text: signed("tools/other.py", "Y = 2\n", &stranger).into(),
    };
    let v = verify_chain(&db, "acme/hello", std::slice::from_ref(&good)).unwrap();
    assert_eq!(
        v.refusal(&Policy {
            allow_unsigned: false
        }),
        None
    );
    let v = verify_chain(&db, "acme/hello", &[good, foreign]).unwrap();
    assert_eq!(
        v.refusal(&Policy {
            allow_unsigned: true
        })
        .unwrap(),
        format!(
            "Untrusted key {} for /anchor/lib/other.py. Add the key to the trust store via the sign tool.",
            stranger.fp
        )
    );
    assert!(verify_chain(&db, "acme/missing", &[]).is_none());
}

/// The embedded bundle parses and lints clean, and every item of it is verified by construction.
#[test]
fn embedded_bundle_is_clean_and_trusted() {
    let host = host("//- /project/.ai/tools/.keep.txt\n");
    let db = host.snapshot();
    let report = lint(&db, &LintOptions::default(), &|_| {});
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let all = verify_all(&db);
    assert!(all.len() >= 15, "{} embedded items", all.len());
    for f in &all {
        assert!(
            matches!(f.verdict, Verdict::Embedded { .. }),
            "{}: {:?}",
            f.path.display(),
            f.verdict
        );
        assert_eq!(f.verdict.key_fp(), Some(EMBEDDED_KEY_FP));
    }
}

/// §10.3 through the lint's batch verification (`integrity::batch`): a one-shot lint settles a
/// chunk's signatures in one batch, an editor's memoized lint verifies each alone; on a tree of
/// hundreds of signed tools with bad signatures scattered among them (another message's
/// signature under the same key, a signature by a second trusted key claiming the first's
/// fingerprint, a signature under the second key), both find exactly the same, and exactly the
/// planted ones.
#[test]
fn s10_3_batch_verified_lint_equals_single_verification() {
    use ryechain::analysis::{Checks, lint_parts};
    use ryechain::integrity::keys::sign_hash;
    let k = test_key(1);
    let k2 = test_key(2);
    let mut text = format!(
        "//- /user/.ai/config/keys/trusted/{fp}.toml\n{doc}//- /user/.ai/config/keys/trusted/{fp2}.toml\n{doc2}//- /project/.ai/tools/acme/rt/python.yaml\n{rt}",
        fp = k.fp,
        doc = trust::trust_doc_toml(&k.public_pem, "test"),
        fp2 = k2.fp,
        doc2 = trust::trust_doc_toml(&k2.public_pem, "test"),
        rt = signed("tools/acme/rt/python.yaml", RUNTIME, &k),
    );
    let mut planted = Vec::new();
    for i in 0..600 {
        let rel = format!("tools/acme/t{i:03}.py");
        let tool = TOOL.replace("print('hi')", &format!("print({i})"));
        let key = if i % 7 == 0 { &k2 } else { &k };
        let fmt = default_format(ItemKind::Tool, ".py");
        let ts = "2026-11-22T00:00:00Z".to_owned();
        let (mut body, sig) = sign_text(ItemKind::Tool, &fmt, &tool, &key.sk, &key.fp, ts).unwrap();
        let forged = match i {
            // Another message's signature, same key.
            13 | 250 | 599 => Some(sign_hash(&k.sk, &"0".repeat(64))),
            // The second key's signature of the right hash under the first key's fingerprint.
            101 => Some(sign_hash(&k2.sk, &sig.content_hash)),
            // Under the second key: another message.
            140 => Some(sign_hash(&k2.sk, &"1".repeat(64))),
            _ => None,
        };
        if let Some(forged) = forged {
            body = body.replacen(&sig.signature, &forged, 1);
            planted.push(format!("acme/t{i:03}"));
        }
        text.push_str(&format!("//- /project/.ai/{rel}\n{body}"));
    }
    let host = host(&text);
    let db = host.snapshot();
    let bad = |checks| {
        let report = lint_parts(&db, &LintOptions::default(), &|_| {}, false, checks).into_report();
        let bad: Vec<String> = report
            .findings
            .iter()
            .filter(|f| &*f.rule == "bad-signature")
            .map(|f| f.item_id.clone().unwrap())
            .collect();
        (report.findings, bad)
    };
    let (batch_findings, batch_bad) = bad(Checks::OneShot);
    let (single_findings, single_bad) = bad(Checks::Memoized);
    assert_eq!(
        batch_bad, planted,
        "the signatures planted bad, and only those"
    );
    assert_eq!(single_bad, planted);
    assert_eq!(batch_findings, single_findings);
}

/// Issue 30 item 10: an item of an installed system bundle is not the person's to sign, so its
/// findings never advise `ryechain sign`; a project item's do.
#[test]
fn system_items_get_no_re_sign_advice() {
    let k = test_key(1);
    let extractor = ryechain::testing::embedded_text("extractors/tool/tool_extractor.yaml");
    let tampered = format!("{}# tampered\n", signed("tools/acme/sealed.py", TOOL, &k));
    let text = format!(
        "//- /system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml\n{extractor}\
         //- /system/.ai/tools/acme/bundled.py\n{TOOL}\
         //- /system/.ai/tools/acme/sealed.py\n{tampered}\
         //- /project/.ai/tools/acme/mine.py\n{TOOL}\
         //- /project/.ai/tools/acme/edited.py\n{tampered}"
    );
    let host = host(&text);
    let db = host.snapshot();
    let report = lint(&db, &LintOptions::default(), &|_| {});
    let help = |rule: &str, file: &str| {
        report
            .findings
            .iter()
            .find(|f| &*f.rule == rule && f.path.ends_with(file))
            .and_then(|f| f.help.clone())
            .unwrap_or_else(|| panic!("{rule} at {file}: {:#?}", report.findings))
    };
    for (rule, file) in [
        ("unsigned-item", "system/.ai/tools/acme/bundled.py"),
        ("content-hash-mismatch", "system/.ai/tools/acme/sealed.py"),
    ] {
        let h = help(rule, file);
        assert!(h.contains("installed system bundle"), "{h}");
        assert!(
            !h.contains("re-sign") && !h.contains("ryechain sign"),
            "{h}"
        );
    }
    assert!(help("unsigned-item", "project/.ai/tools/acme/mine.py").contains("ryechain sign"));
    assert!(help("content-hash-mismatch", "project/.ai/tools/acme/edited.py").contains("re-sign"));
}
