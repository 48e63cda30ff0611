//! Trusted-key documents (§10.4): the three layouts, parsed from text the loader pushed in.
//!
//! - `.ai/config/keys/trusted/<fp>.toml` (seed era, written by ryechain),
//! - `.ai/trusted_keys/<fp>.toml` ([L] Feb),
//! - `.ai/trusted_keys/<fp>.pem` and a TOFU `registry.pem` ([R], raw PEM).
//!
//! TOML fields: `fingerprint`, `owner`, `attestation`, `[public_key] pem = """…"""` (the PEM is
//! trimmed, then one `\n` appended, before the fingerprint is computed). A `# rye:signed:` first
//! line is a TOML comment. A key is trusted only when the fingerprint recomputed from its PEM
//! matches the file name (registry.pem: matched by its computed fingerprint) — never because a
//! field says so.
//!
//! Keys a project ships are trusted only once the person approves them (DESIGN.md "Trust"): an
//! approval is a document in the *user* space, `.ai/config/keys/approved/<fp>@<project>.toml`,
//! bound to the key (its fingerprint and the SHA-256 of its PEM) and to the project's directory.

use super::hash::universal_newlines;
use super::keys::{fingerprint, public_key_from_pem};

pub use crate::place::{APPROVED_DIR, TRUST_DIRS, is_approval_doc, trust_doc_rank};

/// A key a trust document vouches for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TrustedKey {
    pub fingerprint: String,
    /// The PEM the fingerprint is computed from (normalised for TOML documents).
    pub pem: String,
    pub owner: Option<String>,
}

/// Parse one trust document. `Err` says what is wrong, for a diagnostic naming the file.
pub fn parse_trust_doc(rel: &str, text: &str) -> Result<TrustedKey, String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let (stem, is_toml) = match (name.strip_suffix(".toml"), name.strip_suffix(".pem")) {
        (Some(s), _) => (s, true),
        (_, Some(s)) => (s, false),
        _ => return Err("not a `.toml` or `.pem` trust document".to_owned()),
    };
    // A TOML document is read as text, as the reference reads it (universal newlines: a CR-only
    // file is valid TOML to it); a `.pem` is hashed as the bytes stored (§10.3).
    let normalised = if is_toml {
        universal_newlines(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let text = normalised.as_ref();
    let (pem, owner) = if is_toml {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("invalid TOML: {}", e.message()))?;
        let pem = doc
            .get("public_key")
            .and_then(|v| v.get("pem"))
            .and_then(|v| v.as_str())
            .ok_or("missing `[public_key] pem`")?;
        let owner = doc.get("owner").and_then(|v| v.as_str()).map(str::to_owned);
        (format!("{}\n", pem.trim()), owner)
    } else {
        (
            text.to_owned(),
            (stem == "registry").then(|| "rye-registry".to_owned()),
        )
    };
    public_key_from_pem(&pem).map_err(|e| e.to_string())?;
    let fp = fingerprint(pem.as_bytes());
    if stem != "registry" && stem != fp {
        return Err(format!(
            "the file is named `{stem}` but its key's fingerprint is `{fp}`; the key is not trusted"
        ));
    }
    if is_toml
        && let Ok(doc) = text.parse::<toml::Table>()
        && let Some(claimed) = doc.get("fingerprint").and_then(|v| v.as_str())
        && claimed != fp
    {
        return Err(format!(
            "`fingerprint = \"{claimed}\"` does not match the key's fingerprint `{fp}`"
        ));
    }
    Ok(TrustedKey {
        fingerprint: fp,
        pem,
        owner,
    })
}

/// The person's approval of one key a project ships, for that project only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Approval {
    /// The project directory (the folder holding `.ai/`), as the loader names it.
    pub project: String,
    pub fingerprint: String,
    /// SHA-256 of the key's PEM (as normalised for its fingerprint): the approval names this key,
    /// not only its 64-bit fingerprint.
    pub pem_sha256: String,
}

impl Approval {
    /// The approval of `key` for the project at `project`.
    pub fn of(key: &TrustedKey, project: &str) -> Approval {
        Approval {
            project: project.to_owned(),
            fingerprint: key.fingerprint.clone(),
            pem_sha256: super::hash::sha256_hex(key.pem.as_bytes()),
        }
    }

    /// The document's file name under [`APPROVED_DIR`]: one per (key, project).
    pub fn file_name(&self) -> String {
        let project = super::hash::sha256_hex(self.project.as_bytes());
        format!("{}@{}.toml", self.fingerprint, &project[..16])
    }

    /// The document recording this approval (`owner` and `document` are for the reader).
    pub fn to_toml(&self, owner: Option<&str>, document: &str, approved_at: &str) -> String {
        let mut doc = toml::Table::new();
        doc.insert("project".into(), self.project.clone().into());
        doc.insert("fingerprint".into(), self.fingerprint.clone().into());
        doc.insert("pem_sha256".into(), self.pem_sha256.clone().into());
        doc.insert("owner".into(), owner.unwrap_or("").into());
        doc.insert("document".into(), document.into());
        doc.insert("approved_at".into(), approved_at.into());
        format!(
            "# Approved with `ryechain keys trust --project`: this key is trusted for this project only.\n{doc}"
        )
    }
}

/// Parse an approval document. `Err` says what is wrong, for a diagnostic naming the file.
pub fn parse_approval(text: &str) -> Result<Approval, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("invalid TOML: {}", e.message()))?;
    let field = |name: &str| {
        doc.get(name)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("missing `{name}`"))
    };
    let approval = Approval {
        project: field("project")?,
        fingerprint: field("fingerprint")?,
        pem_sha256: field("pem_sha256")?,
    };
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(&approval.fingerprint, 16) || !hex(&approval.pem_sha256, 64) {
        return Err("`fingerprint` must be 16 and `pem_sha256` 64 hex digits".to_owned());
    }
    Ok(approval)
}

/// The seed-era TOML trust document ryechain writes for a public key.
pub fn trust_doc_toml(public_pem: &str, owner: &str) -> String {
    let pem = format!("{}\n", public_pem.trim());
    format!(
        "fingerprint = \"{}\"\nowner = \"{}\"\nattestation = \"\"\n\n[public_key]\npem = \"\"\"\n{}\"\"\"\n",
        fingerprint(pem.as_bytes()),
        owner.replace(['"', '\\'], ""),
        pem
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAgc0X8VKJuKzFh/aSw/XeYEdp3keIqncwu9ySd81Y69g=\n-----END PUBLIC KEY-----\n";

    #[test]
    fn all_layouts() {
        assert_eq!(
            trust_doc_rank("config/keys/trusted/4b987fd4e40303ac.toml"),
            Some(0)
        );
        assert_eq!(
            trust_doc_rank("trusted_keys/4b987fd4e40303ac.toml"),
            Some(2)
        );
        assert_eq!(trust_doc_rank("trusted_keys/registry.pem"), Some(3));
        assert_eq!(trust_doc_rank("trusted_keys/sub/x.pem"), None);
        assert_eq!(trust_doc_rank("tools/x.toml"), None);

        let toml = trust_doc_toml(PEM, "local");
        let k = parse_trust_doc("config/keys/trusted/4b987fd4e40303ac.toml", &toml).unwrap();
        assert_eq!(k.fingerprint, "4b987fd4e40303ac");
        assert_eq!(k.owner.as_deref(), Some("local"));
        let signed = format!("# rye:signed:whatever\n{toml}");
        assert!(parse_trust_doc("trusted_keys/4b987fd4e40303ac.toml", &signed).is_ok());
        assert!(parse_trust_doc("trusted_keys/4b987fd4e40303ac.pem", PEM).is_ok());
        assert!(parse_trust_doc("trusted_keys/registry.pem", PEM).is_ok());
    }

    #[test]
    fn approvals_round_trip_and_name_key_and_project() {
        let key = parse_trust_doc("trusted_keys/4b987fd4e40303ac.pem", PEM).unwrap();
        let a = Approval::of(&key, "/home/me/proj");
        let text = a.to_toml(Some("team"), ".ai/config/keys/trusted/x.toml", "now");
        assert_eq!(parse_approval(&text), Ok(a.clone()));
        assert!(is_approval_doc(&format!("{APPROVED_DIR}{}", a.file_name())));
        assert!(a.file_name().starts_with("4b987fd4e40303ac@"));
        assert_ne!(
            a.file_name(),
            Approval::of(&key, "/home/me/other").file_name()
        );
        assert!(!is_approval_doc("config/keys/approved/sub/x.toml"));
        assert!(parse_approval("project = \"/p\"").is_err());
        assert!(
            parse_approval(&text.replace(&a.pem_sha256, "zz"))
                .unwrap_err()
                .contains("hex")
        );
    }

    #[test]
    fn a_name_or_field_never_makes_a_key_trusted() {
        let e = parse_trust_doc("trusted_keys/0000000000000000.pem", PEM).unwrap_err();
        assert!(e.contains("fingerprint is `4b987fd4e40303ac`"), "{e}");
        let lying = trust_doc_toml(PEM, "x").replace("4b987fd4e40303ac", "1111111111111111");
        assert!(parse_trust_doc("config/keys/trusted/4b987fd4e40303ac.toml", &lying).is_err());
        assert!(
            parse_trust_doc("trusted_keys/x.pem", "-----BEGIN PUBLIC KEY-----\ntrunc").is_err()
        );
        assert!(parse_trust_doc("trusted_keys/x.toml", "pem = [").is_err());
    }

    /// A TOML trust document checked out with CRLF or CR-only line breaks vouches for the same
    /// key: it is read as text with universal newlines, as the reference reads it (§10.4).
    #[test]
    fn s10_4_toml_documents_with_crlf_or_cr_line_breaks() {
        let toml = trust_doc_toml(PEM, "local");
        for eol in ["\r\n", "\r"] {
            let k = parse_trust_doc(
                "config/keys/trusted/4b987fd4e40303ac.toml",
                &toml.replace('\n', eol),
            )
            .unwrap_or_else(|e| panic!("{eol:?}: {e}"));
            assert_eq!(
                (k.fingerprint.as_str(), k.pem.as_str()),
                ("4b987fd4e40303ac", PEM)
            );
        }
    }
}
