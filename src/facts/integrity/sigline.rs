//! Signature lines (§10.1): finding, parsing and writing `rye:signed:` lines in every wrapper.
//!
//! A line is `<prefix> rye:signed:<TIMESTAMP>:<HASH>:<SIG>:<FP>[|provider@user]<suffix>`:
//! `# …` for Python/YAML/shell/TOML/JSON, `// …` for JS/TS, `<!-- … -->` for markdown. For tools
//! whose format allows it the line may follow a `#!` shebang. Parsing never panics and keeps the
//! span of the line, so diagnostics point at it.

use crate::model::Span;

/// How an extension's signature line is wrapped (extractor `signature_format(s)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SignatureFormat {
    /// `#`, `//` or `<!--`.
    pub prefix: String,
    /// Text closing the line (`-->` for markdown), written after exactly one space.
    pub suffix: Option<String>,
    /// The line may come second, after a `#!` shebang.
    pub after_shebang: bool,
}

impl SignatureFormat {
    pub fn hash_comment() -> SignatureFormat {
        SignatureFormat {
            prefix: "#".to_owned(),
            suffix: None,
            after_shebang: true,
        }
    }
    pub fn slash_comment() -> SignatureFormat {
        SignatureFormat {
            prefix: "//".to_owned(),
            suffix: None,
            after_shebang: true,
        }
    }
    pub fn html_comment() -> SignatureFormat {
        SignatureFormat {
            prefix: "<!--".to_owned(),
            suffix: Some("-->".to_owned()),
            after_shebang: false,
        }
    }
}

/// The fields of a well-formed `rye:signed:` line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub timestamp: String,
    /// 64 lowercase hex: the content hash the signer saw.
    pub content_hash: String,
    /// base64url, 0–2 `=` of padding (Python pads, seed 000 does not).
    pub signature: String,
    /// 16 lowercase hex: fingerprint of the signer's public key.
    pub key_fp: String,
    /// Optional registry provenance `provider@username`.
    pub provenance: Option<String>,
}

impl Signature {
    /// The line (without its newline) in a format.
    pub fn line(&self, fmt: &SignatureFormat) -> String {
        let mut s = format!(
            "{} rye:signed:{}:{}:{}:{}",
            fmt.prefix, self.timestamp, self.content_hash, self.signature, self.key_fp
        );
        if let Some(p) = &self.provenance {
            s.push('|');
            s.push_str(p);
        }
        if let Some(suffix) = &fmt.suffix {
            s.push(' ');
            s.push_str(suffix);
        }
        s
    }
}

/// What the signature position of a file holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SigLine {
    /// No signature line at all.
    Absent,
    /// A legacy `rye:validated:` / `kiwi-mcp:` line: unsigned to the reference (§10.1).
    Legacy {
        span: Span,
    },
    /// Starts like a `rye:signed:` line but its fields are not well formed.
    Malformed {
        span: Span,
        reason: String,
    },
    Signed {
        span: Span,
        signature: Signature,
    },
}

impl SigLine {
    pub fn span(&self) -> Option<Span> {
        match self {
            SigLine::Absent => None,
            SigLine::Legacy { span }
            | SigLine::Malformed { span, .. }
            | SigLine::Signed { span, .. } => Some(*span),
        }
    }
}

/// The end of the first line of `text` (its first `\r` or `\n`) and the length of its line
/// break (`\r\n` counts as one), or `None` for a single unterminated line. Lines end where
/// Python's universal newlines end them: the reference matches its regexes on the text with
/// every `\r\n` and lone `\r` made `\n` (§10.1), so a CRLF or CR line is one line here too.
fn first_break(text: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let at = memchr::memchr2(b'\r', b'\n', b)?;
    let len = if b[at] == b'\r' && b.get(at + 1) == Some(&b'\n') {
        2
    } else {
        1
    };
    Some((at, len))
}

/// The line break `text` uses: that of its first line (`\r\n`, `\r` or `\n`), `\n` when it has
/// none. Signing writes the signature line with it, so a CRLF file stays CRLF.
pub fn line_break_of(text: &str) -> &'static str {
    match first_break(text) {
        Some((_, 2)) => "\r\n",
        Some((at, _)) if text.as_bytes()[at] == b'\r' => "\r",
        _ => "\n",
    }
}

/// Byte offset where the signature line starts: after a `#!…` shebang line (and its line break)
/// when the format allows.
pub fn signature_offset(text: &str, fmt: &SignatureFormat) -> usize {
    if fmt.after_shebang && text.starts_with("#!") {
        match first_break(text) {
            Some((at, len)) => at + len,
            None => text.len(),
        }
    } else {
        0
    }
}

/// The line starting at `at`, without its line break (`\n`, `\r\n` or a lone `\r`).
fn line_at(text: &str, at: usize) -> &str {
    let rest = &text[at..];
    match first_break(rest) {
        Some((end, _)) => &rest[..end],
        None => rest,
    }
}

/// Find and parse the signature line of a file.
pub fn parse_signature(text: &str, fmt: &SignatureFormat) -> SigLine {
    let at = signature_offset(text, fmt);
    let line = line_at(text, at);
    let span = Span::new(at, at + line.len());
    let Some(body) = line
        .strip_prefix(fmt.prefix.as_str())
        .and_then(|r| r.strip_prefix(' '))
    else {
        return SigLine::Absent;
    };
    if body.starts_with("rye:validated:")
        || body.starts_with("kiwi-mcp:validated:")
        || body.starts_with("kiwi-mcp:signed:")
    {
        return SigLine::Legacy { span };
    }
    let Some(fields) = body.strip_prefix("rye:signed:") else {
        return SigLine::Absent;
    };
    let fields = match &fmt.suffix {
        Some(suffix) => match fields.strip_suffix(suffix.as_str()) {
            Some(f) => match f.strip_suffix(' ') {
                Some(f) if f.ends_with(' ') => {
                    return SigLine::Malformed {
                        span,
                        reason: format!(
                            "exactly one space must come before `{suffix}`, found more"
                        ),
                    };
                }
                Some(f) => f,
                None => {
                    return SigLine::Malformed {
                        span,
                        reason: format!("exactly one space must come before `{suffix}`"),
                    };
                }
            },
            None => {
                return SigLine::Malformed {
                    span,
                    reason: format!("the line does not end with ` {suffix}`"),
                };
            }
        },
        None => fields,
    };
    match parse_fields(fields, fmt.suffix.is_none()) {
        Ok(signature) => SigLine::Signed { span, signature },
        Err(reason) => SigLine::Malformed { span, reason },
    }
}

fn is_b64url(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `TIMESTAMP:HASH:SIG:FP[|p@u]`; `trailing_ok` tolerates text after the fingerprint (tools, [R]).
fn parse_fields(fields: &str, trailing_ok: bool) -> Result<Signature, String> {
    // The timestamp holds two `:` itself: `YYYY-MM-DDTHH:MM:SSZ` is 20 bytes.
    let ts = fields.get(..20).unwrap_or(fields);
    if !is_timestamp(ts) {
        return Err(format!(
            "the timestamp `{}` is not YYYY-MM-DDTHH:MM:SSZ",
            ts.split(':').next().unwrap_or(ts)
        ));
    }
    let rest = fields[20..]
        .strip_prefix(':')
        .ok_or("a `:` must follow the timestamp")?;
    let (hash, rest) = rest
        .split_once(':')
        .ok_or("the line ends after the content hash")?;
    if !is_lower_hex(hash, 64) {
        return Err(format!(
            "the content hash must be 64 lowercase hex characters, found {} characters",
            hash.chars().count()
        ));
    }
    let (sig, rest) = rest
        .split_once(':')
        .ok_or("the line ends after the signature")?;
    let body = sig.trim_end_matches('=');
    if body.is_empty() || !body.chars().all(is_b64url) || sig.len() - body.len() > 2 {
        return Err(
            "the signature must be base64url (`A-Z a-z 0-9 - _`) with at most two `=`".to_owned(),
        );
    }
    let fp = rest.get(..16).unwrap_or(rest);
    if !is_lower_hex(fp, 16) {
        return Err("the key fingerprint must be 16 lowercase hex characters".to_owned());
    }
    let mut tail = &rest[16..];
    let mut provenance = None;
    if let Some(p) = tail.strip_prefix('|') {
        let end = p
            .find(|c: char| !(is_b64url(c) || c == '@'))
            .unwrap_or(p.len());
        let (who, after) = p.split_at(end);
        match who.split_once('@') {
            Some((a, b))
                if !a.is_empty()
                    && !b.is_empty()
                    && a.chars().all(is_b64url)
                    && b.chars().all(is_b64url) =>
            {
                provenance = Some(who.to_owned());
                tail = after;
            }
            _ => return Err("the provenance suffix must be `|provider@username`".to_owned()),
        }
    }
    if !tail.is_empty() && !trailing_ok {
        return Err(format!("unexpected text after the fingerprint: `{tail}`"));
    }
    Ok(Signature {
        timestamp: ts.to_owned(),
        content_hash: hash.to_owned(),
        signature: sig.to_owned(),
        key_fp: fp.to_owned(),
        provenance,
    })
}

fn is_timestamp(ts: &str) -> bool {
    let b = ts.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Replace (or insert) the signature line of `text`: the new line goes where the signature
/// belongs (after a shebang when allowed); an existing signed, legacy or malformed line there is
/// removed first. Nothing else of the text changes.
pub fn with_signature_line(text: &str, fmt: &SignatureFormat, line: &str) -> String {
    let at = signature_offset(text, fmt);
    let existing = parse_signature(text, fmt);
    // The new line ends as the one it replaces did, else as the file's first line does.
    let (rest_start, eol) = match existing.span() {
        Some(span) => {
            let end = span.end as usize;
            match first_break(&text[end..]) {
                Some((0, len)) => (end + len, &text[end..end + len]),
                _ => (end, line_break_of(text)),
            }
        }
        None => (at, line_break_of(text)),
    };
    let mut out = String::with_capacity(text.len() + line.len() + 2);
    out.push_str(&text[..at]);
    if at > 0 && !text[..at].ends_with(['\n', '\r']) {
        out.push_str(eol);
    }
    out.push_str(line);
    out.push_str(eol);
    out.push_str(&text[rest_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED3_LINE: &str = "<!-- rye:signed:2026-02-26T06:42:50Z:055b049709664ff5c85c8d5bc20c6b8ff00615529fdd78af4c436c3176f386b9:c67apy3VwDuCGNPs3uXUq8q2kvZJDjiD3YC_PtII6HvrXSpaeBjMipQenW8vTgbKH3sqzuuAAqn-ymsEUfinAg==:4b987fd4e40303ac -->";

    #[test]
    fn parses_padded_markdown_line() {
        let text = format!("{SEED3_LINE}\nbody\n");
        let SigLine::Signed { span, signature } =
            parse_signature(&text, &SignatureFormat::html_comment())
        else {
            panic!("not signed");
        };
        assert_eq!(span, Span::new(0, SEED3_LINE.len()));
        assert_eq!(signature.key_fp, "4b987fd4e40303ac");
        assert!(signature.signature.ends_with("=="));
        assert_eq!(signature.line(&SignatureFormat::html_comment()), SEED3_LINE);
    }

    #[test]
    fn tool_line_after_shebang_with_provenance() {
        let line = "# rye:signed:2026-01-02T03:04:05Z:0000000000000000000000000000000000000000000000000000000000000000:AbC-_x:0123456789abcdef|github@alice";
        let text = format!("#!/usr/bin/env python3\n{line}\nprint(1)\n");
        let SigLine::Signed { span, signature } =
            parse_signature(&text, &SignatureFormat::hash_comment())
        else {
            panic!("not signed");
        };
        assert_eq!(&text[span.start as usize..span.end as usize], line);
        assert_eq!(signature.provenance.as_deref(), Some("github@alice"));
        assert_eq!(signature.line(&SignatureFormat::hash_comment()), line);
        // Not after a shebang when the format forbids it.
        let fmt = SignatureFormat {
            after_shebang: false,
            ..SignatureFormat::hash_comment()
        };
        assert_eq!(parse_signature(&text, &fmt), SigLine::Absent);
    }

    #[test]
    fn legacy_and_malformed() {
        let fmt = SignatureFormat::hash_comment();
        assert!(matches!(
            parse_signature("# rye:validated:2025:abc\nx", &fmt),
            SigLine::Legacy { .. }
        ));
        let bad = parse_signature(
            "# rye:signed:2025-01-01T00:00:00Z:abc:sig:0123456789abcdef\n",
            &fmt,
        );
        let SigLine::Malformed { reason, .. } = bad else {
            panic!("{bad:?}")
        };
        assert!(reason.contains("64 lowercase hex"), "{reason}");
        assert!(matches!(
            parse_signature("# rye:signed:placeholder\n", &fmt),
            SigLine::Malformed { .. }
        ));
        assert_eq!(parse_signature("# a comment\n", &fmt), SigLine::Absent);
        assert_eq!(parse_signature("", &fmt), SigLine::Absent);
        let md = SignatureFormat::html_comment();
        let two_spaces = SEED3_LINE.replace(" -->", "  -->");
        assert!(matches!(
            parse_signature(&two_spaces, &md),
            SigLine::Malformed { .. }
        ));
    }

    #[test]
    fn replacing_a_line_keeps_the_shebang_and_body() {
        let fmt = SignatureFormat::hash_comment();
        let t = "#!/bin/sh\n# rye:validated:x\necho hi\n";
        assert_eq!(
            with_signature_line(t, &fmt, "# NEW"),
            "#!/bin/sh\n# NEW\necho hi\n"
        );
        assert_eq!(with_signature_line("a\n", &fmt, "# NEW"), "# NEW\na\n");
        assert_eq!(
            with_signature_line("#!/bin/sh", &fmt, "# NEW"),
            "#!/bin/sh\n# NEW\n"
        );
    }

    /// §10.1 on a CRLF or CR-only checkout: the reference matches its regexes on the text with
    /// universal newlines, so the shebang and the signature line end at `\r\n` or a lone `\r`
    /// too. The span still covers the line's bytes in the raw text, without its line break.
    #[test]
    fn s10_1_lines_ending_in_crlf_or_cr_are_found() {
        let line = "# rye:signed:2026-01-02T03:04:05Z:0000000000000000000000000000000000000000000000000000000000000000:AbC-_x:0123456789abcdef";
        let fmt = SignatureFormat::hash_comment();
        for eol in ["\n", "\r\n", "\r"] {
            for shebang in ["", "#!/usr/bin/env python3"] {
                let head = if shebang.is_empty() {
                    String::new()
                } else {
                    format!("{shebang}{eol}")
                };
                let text = format!("{head}{line}{eol}print(1){eol}");
                let SigLine::Signed { span, signature } = parse_signature(&text, &fmt) else {
                    panic!("not signed: {text:?}");
                };
                assert_eq!(&text[span.start as usize..span.end as usize], line);
                assert_eq!(signature.key_fp, "0123456789abcdef");
            }
        }
        let md = SignatureFormat::html_comment();
        for eol in ["\r\n", "\r"] {
            let text = format!("{SEED3_LINE}{eol}body{eol}");
            assert!(
                matches!(parse_signature(&text, &md), SigLine::Signed { span, .. } if span == Span::new(0, SEED3_LINE.len())),
                "{eol:?}"
            );
        }
    }

    /// Signing keeps the file's own line breaks: the signature line ends as the line it
    /// replaces did, else as the file's first line does; nothing else changes.
    #[test]
    fn signature_line_keeps_the_files_line_breaks() {
        let fmt = SignatureFormat::hash_comment();
        assert_eq!(
            with_signature_line("#!/bin/sh\r\necho hi\r\n", &fmt, "# NEW"),
            "#!/bin/sh\r\n# NEW\r\necho hi\r\n"
        );
        assert_eq!(
            with_signature_line(
                "#!/bin/sh\r\n# rye:validated:x\r\necho hi\r\n",
                &fmt,
                "# NEW"
            ),
            "#!/bin/sh\r\n# NEW\r\necho hi\r\n"
        );
        assert_eq!(
            with_signature_line("a\rb\r", &fmt, "# NEW"),
            "# NEW\ra\rb\r"
        );
        assert_eq!(
            with_signature_line("#!/bin/sh\r# rye:validated:x\recho\r", &fmt, "# NEW"),
            "#!/bin/sh\r# NEW\recho\r"
        );
        // The replaced line's own break wins over the first line's.
        assert_eq!(
            with_signature_line("# rye:validated:x\r\na\nb\n", &fmt, "# NEW"),
            "# NEW\r\na\nb\n"
        );
        // No line break at all: `\n`.
        assert_eq!(with_signature_line("a", &fmt, "# NEW"), "# NEW\na");
        let md = SignatureFormat::html_comment();
        assert_eq!(
            with_signature_line("<!-- rye:validated:x -->\r\nbody\r\n", &md, "<!-- NEW -->"),
            "<!-- NEW -->\r\nbody\r\n"
        );
    }
}
