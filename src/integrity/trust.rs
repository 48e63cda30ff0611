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

use super::hash::universal_newlines;
use super::keys::{fingerprint, public_key_from_pem};

/// Trust-store directories relative to a space's `.ai/`, in lookup order.
pub const TRUST_DIRS: [&str; 2] = ["config/keys/trusted/", "trusted_keys/"];

/// A key a trust document vouches for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TrustedKey {
    pub fingerprint: String,
    /// The PEM the fingerprint is computed from (normalised for TOML documents).
    pub pem: String,
    pub owner: Option<String>,
}

/// Whether `rel` (relative to `.ai/`) is a trust-store document, and its layout rank (`.toml`
/// before `.pem`, seed-era dir first).
pub fn trust_doc_rank(rel: &str) -> Option<u8> {
    for (i, dir) in TRUST_DIRS.iter().enumerate() {
        if let Some(name) = rel.strip_prefix(dir)
            && !name.contains('/')
        {
            let i = i as u8;
            if name.ends_with(".toml") {
                return Some(i * 2);
            }
            if name.ends_with(".pem") {
                return Some(i * 2 + 1);
            }
        }
    }
    None
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
