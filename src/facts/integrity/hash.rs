//! What is hashed for each item kind (§10.2) and the SHA-256 content hash (lowercase hex).
//!
//! - Tool: drop a leading `#!…\n` shebang, then the first signature or legacy line if it is now at
//!   the start (`<prefix> (rye|kiwi-mcp):(validated|signed):…\n`); hash the rest.
//! - Directive: from the first `<directive` to the end of the last `</directive>`, stripped.
//! - Knowledge: drop a leading `<!-- (rye|kiwi-mcp):(validated|signed):…-->\n`; if the rest starts
//!   with `---`, hash what follows the next `---` (searched from index 3), stripped; otherwise the
//!   rest unchanged (seed vectors 000 and 003).
//!
//! All of it over the text as the reference reads it: Python's text mode (universal newlines)
//! turns `\r\n` and a lone `\r` into `\n` before anything is matched or hashed, and keeps a BOM
//! (`universal_newlines`). So a file checked out with CRLF line endings hashes as its LF form.

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use super::ItemKind;

/// The reference's error when a directive has no XML block (a plain error, not an integrity one).
pub const NO_DIRECTIVE_XML: &str = "No XML directive found in content";

/// The text as Python's text mode reads it (universal newlines): each `\r\n` and each lone `\r`
/// becomes `\n`; nothing else changes (a UTF-8 BOM stays, as `open(…, encoding="utf-8")` keeps
/// U+FEFF). Borrowed when there is no `\r`, the common case (a lint hashes every file).
pub fn universal_newlines(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if memchr::memchr(b'\r', bytes).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    for cr in memchr::memchr_iter(b'\r', bytes) {
        // `\r` and `\n` are ASCII: every cut is on a character boundary.
        out.push_str(&text[start..cr]);
        out.push('\n');
        start = if bytes.get(cr + 1) == Some(&b'\n') {
            cr + 2
        } else {
            cr + 1
        };
    }
    out.push_str(&text[start..]);
    Cow::Owned(out)
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        s.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('0'));
    }
    s
}

/// Python's `str.strip()`: Rust's whitespace plus the ASCII separators `\x1c`–`\x1f`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

fn strip_line_with(text: &str, starts: impl Fn(&str) -> bool) -> &str {
    if starts(text)
        && let Some(nl) = text.find('\n')
    {
        return &text[nl + 1..];
    }
    text
}

fn is_marker(body: &str) -> bool {
    [
        "rye:validated:",
        "rye:signed:",
        "kiwi-mcp:validated:",
        "kiwi-mcp:signed:",
    ]
    .iter()
    .any(|m| body.starts_with(m))
}

/// The text a tool's hash covers; `prefix` is its signature format's comment prefix.
pub fn tool_content<'a>(text: &'a str, prefix: &str) -> &'a str {
    let text = if text.starts_with("#!") {
        match text.find('\n') {
            Some(i) => &text[i + 1..],
            None => "",
        }
    } else {
        text
    };
    strip_line_with(text, |t| {
        t.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix(' '))
            .is_some_and(is_marker)
    })
}

/// The text a knowledge entry's hash covers.
pub fn knowledge_content(text: &str) -> Cow<'_, str> {
    let mut rest = text;
    if let Some(body) = text.strip_prefix("<!-- ")
        && is_marker(body)
        && let Some(close) = text.find("-->")
        && text[close + 3..].starts_with('\n')
    {
        rest = &text[close + 4..];
    }
    if rest.starts_with("---")
        && let Some(i) = rest[3..].find("---")
    {
        return Cow::Borrowed(py_strip(&rest[3 + i + 3..]));
    }
    Cow::Borrowed(rest)
}

/// The text a directive's hash covers, or [`NO_DIRECTIVE_XML`].
pub fn directive_content(text: &str) -> Result<&str, &'static str> {
    const CLOSE: &str = "</directive>";
    let start = text.find("<directive").ok_or(NO_DIRECTIVE_XML)?;
    let end = text.rfind(CLOSE).ok_or(NO_DIRECTIVE_XML)?;
    if end < start {
        return Err(NO_DIRECTIVE_XML);
    }
    Ok(py_strip(&text[start..end + CLOSE.len()]))
}

/// The content hash of an item (§10.2) over its text with universal newlines (as the reference
/// reads it). `prefix` is the tool's signature comment prefix.
pub fn content_hash(kind: ItemKind, text: &str, prefix: &str) -> Result<String, &'static str> {
    let text = universal_newlines(text);
    let text = text.as_ref();
    Ok(match kind {
        ItemKind::Tool => sha256_hex(tool_content(text, prefix).as_bytes()),
        ItemKind::Knowledge => sha256_hex(knowledge_content(text).as_bytes()),
        ItemKind::Directive => sha256_hex(directive_content(text)?.as_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn tool_content_drops_shebang_and_signature() {
        assert_eq!(
            tool_content("#!/bin/sh\n# rye:signed:x\nbody\n", "#"),
            "body\n"
        );
        assert_eq!(tool_content("# rye:validated:x\nbody\n", "#"), "body\n");
        assert_eq!(tool_content("// rye:signed:x\nbody\n", "//"), "body\n");
        assert_eq!(tool_content("# other\nbody\n", "#"), "# other\nbody\n");
        assert_eq!(tool_content("#!/bin/sh\nbody\n", "#"), "body\n");
        // Only the first line after the shebang is a candidate.
        assert_eq!(
            tool_content("x\n# rye:signed:x\n", "#"),
            "x\n# rye:signed:x\n"
        );
    }

    #[test]
    fn knowledge_frontmatter_and_plain() {
        assert_eq!(
            knowledge_content("<!-- rye:signed:abc -->\n---\nname: x\n---\n\nBody\n"),
            "Body"
        );
        assert_eq!(
            knowledge_content("<!-- rye:signed:abc -->\n```yaml\nx\n```\n"),
            "```yaml\nx\n```\n"
        );
        assert_eq!(knowledge_content("no line\n"), "no line\n");
    }

    #[test]
    fn universal_newlines_makes_crlf_and_lone_cr_lf() {
        assert_eq!(universal_newlines("a\r\n\r\nb\r"), "a\n\nb\n");
        assert_eq!(universal_newlines("a\rb\n\r\r\n"), "a\nb\n\n\n");
        assert_eq!(universal_newlines("\r"), "\n");
        assert_eq!(universal_newlines("\u{feff}é\r\n"), "\u{feff}é\n");
        // The common case borrows: no allocation when there is no `\r`.
        assert!(matches!(
            universal_newlines("a\nb\n"),
            Cow::Borrowed("a\nb\n")
        ));
        assert!(matches!(universal_newlines(""), Cow::Borrowed("")));
    }

    /// §10.2 over the text as the reference reads it (Python text mode): the hash of a CRLF or
    /// CR-only file is the SHA-256 of its LF form. Vectors computed with `printf … | sha256sum`.
    #[test]
    fn s10_2_crlf_and_cr_text_hash_as_their_lf_form() {
        // sha256("echo hi\nexit 0\n"): the shebang and the signature line are not hashed.
        const TOOL: &str = "95c135b2e88612563002574dc08b837efdf65ae4ab320cf7c1fbf139e605d548";
        for text in [
            "#!/bin/sh\n# rye:signed:x\necho hi\nexit 0\n",
            "#!/bin/sh\r\n# rye:signed:x\r\necho hi\r\nexit 0\r\n",
            "#!/bin/sh\r# rye:signed:x\recho hi\rexit 0\r",
            "#!/bin/sh\r\n# rye:signed:x\recho hi\nexit 0\r\n",
        ] {
            assert_eq!(
                content_hash(ItemKind::Tool, text, "#"),
                Ok(TOOL.into()),
                "{text:?}"
            );
        }
        // sha256("body\n\nmore\n"): knowledge without frontmatter hashes the rest unchanged.
        const KNOWLEDGE: &str = "9c4fb6dd184909106f4b9b98bb10569badea6bd88e9651fe45e533d2af262877";
        for text in [
            "<!-- rye:signed:abc -->\r\nbody\r\n\r\nmore\r\n",
            "<!-- rye:signed:abc -->\rbody\r\rmore\r",
        ] {
            assert_eq!(
                content_hash(ItemKind::Knowledge, text, "<!--"),
                Ok(KNOWLEDGE.into())
            );
        }
        // sha256("<directive name=\"d\">\nhi\n\n</directive>")
        assert_eq!(
            content_hash(
                ItemKind::Directive,
                "# D\r\n<directive name=\"d\">\r\nhi\r\n\r</directive>\r\n",
                "<!--"
            ),
            Ok("df3d344fecc115419d34c7cf48150fa4bb8fec686c2e176e92c534f52b2ab139".into())
        );
        // A BOM is kept, as Python's utf-8 codec keeps U+FEFF: sha256("\xef\xbb\xbfx\n").
        assert_eq!(
            content_hash(ItemKind::Tool, "\u{feff}x\r\n", "#"),
            Ok("dc79faf9efbee8e42b42346da7a977c74a27581ae8f3465f431176f43e521415".into())
        );
    }

    #[test]
    fn directive_xml_block() {
        assert_eq!(
            directive_content(
                "# T\n\n```xml\n<directive name=\"a\">\n</directive>\n```\n<directive/></directive>  \n"
            ),
            Ok("<directive name=\"a\">\n</directive>\n```\n<directive/></directive>")
        );
        assert_eq!(directive_content("no xml"), Err(NO_DIRECTIVE_XML));
    }
}
