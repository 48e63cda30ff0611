//! L6 the markdown of an editor hover: the chain from the hovered file on, each element's space,
//! file, integrity and shadowed candidates, and how the chain breaks.

use std::path::Path;

use crate::analysis::ide::Hover;
use crate::integrity::Verdict;

/// An integrity verdict in a few words.
pub fn verdict_words(v: &Verdict) -> String {
    match v {
        Verdict::Verified { key_fp, .. } => format!("signed, verified (key `{key_fp}`)"),
        Verdict::Embedded { .. } => "part of ryechain's embedded bundle (trusted)".to_owned(),
        Verdict::Unsigned { legacy: true, .. } => "unsigned (a legacy placeholder line)".to_owned(),
        Verdict::Unsigned { .. } => "unsigned".to_owned(),
        Verdict::Malformed { reason, .. } => format!("malformed signature line: {reason}"),
        Verdict::HashMismatch { .. } => {
            "content changed since it was signed (hash mismatch)".to_owned()
        }
        Verdict::UntrustedKey {
            key_fp,
            unapproved: Some(_),
            ..
        } => format!(
            "signed by `{key_fp}`, a key the project ships that you have not approved (`ryechain keys trust --project`)"
        ),
        Verdict::UntrustedKey { key_fp, .. } => format!("signed by an untrusted key `{key_fp}`"),
        Verdict::BadSignature { key_fp, .. } => format!("bad signature (key `{key_fp}`)"),
        Verdict::Unhashable { reason } => format!("cannot be verified: {reason}"),
    }
}

/// The hover as markdown; `show` spells a path (the editor's copy of an embedded file).
pub fn markdown(h: &Hover, show: &dyn Fn(&Path) -> String) -> String {
    let mut md = format!("**`{}`**\n\n", h.id);
    if h.elements.len() <= 1 {
        md.push_str("does not resolve from this file's space\n");
    } else {
        md.push_str("Chain from this tool:\n\n");
    }
    for (i, e) in h.elements.iter().enumerate() {
        let place = match &e.path {
            Some(p) => format!("`{}`", show(p)),
            None => "no file".to_owned(),
        };
        let kind = if e.primitive { " · primitive" } else { "" };
        md.push_str(&format!(
            "{}. `{}` — {}{kind} — {place}\n",
            i + 1,
            e.item_id,
            e.space
        ));
        if let Some(v) = &e.integrity {
            md.push_str(&format!("   - integrity: {}\n", verdict_words(v)));
        }
        for (path, space) in &e.shadowed {
            md.push_str(&format!("   - shadows `{}` ({space})\n", show(path)));
        }
    }
    if let Some(error) = &h.error {
        md.push_str(&format!("\n**The chain breaks:** {error}\n"));
    }
    md
}
