//! What is hashed for each item kind (§10.2) and the SHA-256 content hash (lowercase hex).
//!
//! - Tool: drop a leading `#!…\n` shebang, then the first signature or legacy line if it is now at
//!   the start (`<prefix> (rye|kiwi-mcp):(validated|signed):…\n`); hash the rest.
//! - Directive: from the first `<directive` to the end of the last `</directive>`, stripped.
//! - Knowledge: drop a leading `<!-- (rye|kiwi-mcp):(validated|signed):…-->\n`; if the rest starts
//!   with `---`, hash what follows the next `---` (searched from index 3), stripped; otherwise the
//!   rest unchanged (seed vectors 000 and 003).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use super::ItemKind;

/// The reference's error when a directive has no XML block (a plain error, not an integrity one).
pub const NO_DIRECTIVE_XML: &str = "No XML directive found in content";

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

/// The content hash of an item (§10.2). `prefix` is the tool's signature comment prefix.
pub fn content_hash(kind: ItemKind, text: &str, prefix: &str) -> Result<String, &'static str> {
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
