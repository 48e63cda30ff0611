//! The YAML nesting guard: a linear pre-scan that refuses deeply nested YAML before `serde_yaml`
//! (libyaml) sees it. Every place that hands untrusted text to `serde_yaml` goes through
//! [`yaml_from_str`] or calls [`check_yaml_nesting`] first.
//!
//! Why: libyaml re-checks the pending "simple key" of every open flow level on each token, so
//! deep flow nesting (`[[[[…`) costs time quadratic in the depth — a 200 KB file of brackets took
//! over 20 s — and `serde_yaml` loads every event before its own recursion limit refuses the
//! document. The scan follows libyaml's tokenizer closely enough to know where quoted scalars,
//! plain scalars, block scalars and comments start and end (so brackets inside them do not
//! count), keeps libyaml's block indentation stack, and stops at the first point where block
//! depth plus flow depth exceeds [`MAX_NESTING`]. Where it could disagree with libyaml it errs on
//! the side of counting more, and where libyaml reports an error it does not matter: parsing
//! stops there. Each byte is visited a bounded number of times; memory is bounded by the limit.

use std::fmt;

use serde::de::DeserializeOwned;

use super::MAX_NESTING;

/// Where and how deep a YAML text nests beyond the limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// Byte offset of the bracket or token that went one level too deep.
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    pub limit: usize,
}

impl fmt::Display for TooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "YAML nested deeper than {} levels at line {}; not read (nesting this deep makes YAML parsing slow)",
            self.limit, self.line
        )
    }
}

/// Why [`yaml_from_str`] refused or failed.
#[derive(Debug)]
pub enum YamlError {
    TooDeep(TooDeep),
    Syntax(serde_yaml::Error),
}

impl YamlError {
    /// Byte offset of the problem, when known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            YamlError::TooDeep(t) => Some(t.offset),
            YamlError::Syntax(e) => e.location().map(|l| l.index()),
        }
    }
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            YamlError::TooDeep(t) => t.fmt(f),
            YamlError::Syntax(e) => e.fmt(f),
        }
    }
}

/// `serde_yaml::from_str` behind the nesting guard.
pub fn yaml_from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    check_yaml_nesting(text).map_err(YamlError::TooDeep)?;
    serde_yaml::from_str(text).map_err(YamlError::Syntax)
}

/// `Ok` when no point of `text` nests deeper than [`MAX_NESTING`] levels (block plus flow).
pub fn check_yaml_nesting(text: &str) -> Result<(), TooDeep> {
    check_nesting_limit(text, MAX_NESTING)
}

/// [`check_yaml_nesting`] with an explicit limit.
pub fn check_nesting_limit(text: &str, limit: usize) -> Result<(), TooDeep> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
        col: 0,
        line: 1,
        indents: Vec::new(),
        keys: vec![None],
        key_allowed: true,
        limit,
    };
    if text.starts_with('\u{feff}') {
        s.i = 3;
    }
    s.run()
}

struct Scanner<'t> {
    b: &'t [u8],
    i: usize,
    /// Character column of `i` (libyaml counts characters).
    col: usize,
    line: usize,
    /// libyaml's block indentation stack.
    indents: Vec<usize>,
    /// The possible simple key of each flow level (`keys.len() - 1` is the flow depth):
    /// its (column, line).
    keys: Vec<Option<(usize, usize)>>,
    key_allowed: bool,
    limit: usize,
}

impl Scanner<'_> {
    fn flow(&self) -> usize {
        self.keys.len() - 1
    }

    fn at(&self, j: usize) -> Option<u8> {
        self.b.get(j).copied()
    }

    /// Length of the line break at `j` (libyaml's breaks: CR LF, CR, LF, NEL, LS, PS), or 0.
    fn break_len(&self, j: usize) -> usize {
        match (self.at(j), self.at(j + 1), self.at(j + 2)) {
            (Some(b'\r'), Some(b'\n'), _) => 2,
            (Some(b'\r' | b'\n'), _, _) => 1,
            (Some(0xC2), Some(0x85), _) => 2,
            (Some(0xE2), Some(0x80), Some(0xA8 | 0xA9)) => 3,
            _ => 0,
        }
    }

    fn is_blank(&self, j: usize) -> bool {
        matches!(self.at(j), Some(b' ' | b'\t'))
    }

    /// Blank, line break or end of text.
    fn is_blankz(&self, j: usize) -> bool {
        j >= self.b.len() || self.is_blank(j) || self.break_len(j) > 0
    }

    /// Step over one character or line break.
    fn bump(&mut self) {
        let n = self.break_len(self.i);
        if n > 0 {
            self.i += n;
            self.line += 1;
            self.col = 0;
            return;
        }
        self.i += 1;
        self.col += 1;
        while self.i < self.b.len() && self.b[self.i] & 0xC0 == 0x80 {
            self.i += 1;
        }
    }

    fn skip_to_line_end(&mut self) {
        while self.i < self.b.len() && self.break_len(self.i) == 0 {
            self.bump();
        }
    }

    fn indent(&self) -> isize {
        self.indents.last().map_or(-1, |&c| c as isize)
    }

    fn check(&self) -> Result<(), TooDeep> {
        if self.indents.len() + self.flow() > self.limit {
            return Err(TooDeep {
                offset: self.i,
                line: self.line,
                limit: self.limit,
            });
        }
        Ok(())
    }

    fn roll(&mut self, col: usize) -> Result<(), TooDeep> {
        if self.flow() == 0 && self.indent() < col as isize {
            self.indents.push(col);
            return self.check();
        }
        Ok(())
    }

    fn save_key(&mut self) {
        if self.key_allowed {
            let (col, line) = (self.col, self.line);
            if let Some(k) = self.keys.last_mut() {
                *k = Some((col, line));
            }
        }
    }

    fn take_key(&mut self) -> Option<usize> {
        let line = self.line;
        self.keys
            .last_mut()
            .and_then(Option::take)
            .filter(|&(_, l)| l == line)
            .map(|(c, _)| c)
    }

    fn is_doc_marker(&self) -> bool {
        self.col == 0
            && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
            && self.is_blankz(self.i + 3)
    }

    fn run(&mut self) -> Result<(), TooDeep> {
        loop {
            // Whitespace, comments and line breaks between tokens.
            loop {
                while self.is_blank(self.i) {
                    self.bump();
                }
                if self.at(self.i) == Some(b'#') {
                    self.skip_to_line_end();
                }
                if self.break_len(self.i) > 0 {
                    self.bump();
                    if self.flow() == 0 {
                        self.key_allowed = true;
                    }
                    continue;
                }
                break;
            }
            let Some(c) = self.at(self.i) else {
                return Ok(());
            };
            if self.flow() == 0 {
                while self.indent() > self.col as isize {
                    self.indents.pop();
                }
            }
            if self.col == 0 && c == b'%' {
                self.skip_to_line_end();
                continue;
            }
            if self.is_doc_marker() {
                self.indents.clear();
                if let Some(k) = self.keys.last_mut() {
                    *k = None;
                }
                self.key_allowed = false;
                for _ in 0..3 {
                    self.bump();
                }
                continue;
            }
            let next_blankz = self.is_blankz(self.i + 1);
            match c {
                b'[' | b'{' => {
                    self.save_key();
                    self.keys.push(None);
                    self.check()?;
                    self.key_allowed = true;
                    self.bump();
                }
                b']' | b'}' => {
                    if self.keys.len() > 1 {
                        self.keys.pop();
                    }
                    self.key_allowed = false;
                    self.bump();
                }
                b',' => {
                    if let Some(k) = self.keys.last_mut() {
                        *k = None;
                    }
                    self.key_allowed = true;
                    self.bump();
                }
                b'-' if next_blankz => {
                    let col = self.col;
                    self.roll(col)?;
                    if let Some(k) = self.keys.last_mut() {
                        *k = None;
                    }
                    self.key_allowed = true;
                    self.bump();
                }
                b'?' if self.flow() > 0 || next_blankz => {
                    let col = self.col;
                    self.roll(col)?;
                    self.key_allowed = self.flow() == 0;
                    self.bump();
                }
                b':' if self.flow() > 0 || next_blankz => {
                    let col = self.take_key().unwrap_or(self.col);
                    self.roll(col)?;
                    self.key_allowed = self.flow() == 0;
                    self.bump();
                }
                b'*' | b'&' | b'!' => {
                    self.save_key();
                    self.key_allowed = false;
                    // Anchors, aliases and tags run to the next blank (a tag may hold `[`).
                    while !self.is_blankz(self.i) {
                        self.bump();
                    }
                }
                b'|' | b'>' if self.flow() == 0 => self.block_scalar(),
                b'\'' | b'"' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.quoted(c);
                }
                _ => {
                    self.save_key();
                    self.key_allowed = self.plain();
                }
            }
        }
    }

    /// A single- or double-quoted scalar, from its opening quote past its closing one.
    fn quoted(&mut self, quote: u8) {
        self.bump();
        while let Some(c) = self.at(self.i) {
            // Fast path: printable ASCII other than quotes and backslashes, past column 0 (where
            // a document marker could start), is content.
            if self.col > 0 {
                let run = self.b[self.i..]
                    .iter()
                    .take_while(|&&c| {
                        (c == b' ' || c.is_ascii_graphic()) && !matches!(c, b'\\' | b'\'' | b'"')
                    })
                    .count();
                if run > 0 {
                    self.i += run;
                    self.col += run;
                    continue;
                }
            }
            if self.is_doc_marker() {
                return; // libyaml refuses a document marker inside a quoted scalar
            }
            match c {
                b'\\' if quote == b'"' => {
                    self.bump();
                    if self.i < self.b.len() {
                        self.bump();
                    }
                }
                b'\'' if quote == b'\'' && self.at(self.i + 1) == Some(b'\'') => {
                    self.bump();
                    self.bump();
                }
                _ if c == quote => {
                    self.bump();
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// A plain scalar (libyaml `scan_plain_scalar`); returns whether it ran over a line break.
    fn plain(&mut self) -> bool {
        let indent = self.indent() + 1;
        let flow = self.flow() > 0;
        let mut leading_blanks = false;
        loop {
            if self.i >= self.b.len() || self.is_doc_marker() || self.at(self.i) == Some(b'#') {
                break;
            }
            while !self.is_blankz(self.i) {
                // Fast path: a run of printable ASCII that is neither blank nor an indicator
                // cannot end the scalar; step over it at once (one column per byte).
                let run = self.b[self.i..]
                    .iter()
                    .take_while(|&&c| {
                        c.is_ascii_graphic()
                            && !matches!(c, b':' | b',' | b'[' | b']' | b'{' | b'}')
                    })
                    .count();
                if run > 0 {
                    self.i += run;
                    self.col += run;
                    continue;
                }
                let c = self.b[self.i];
                let next = self.at(self.i + 1);
                if c == b':'
                    && (self.is_blankz(self.i + 1)
                        || (flow && matches!(next, Some(b',' | b'?' | b'[' | b']' | b'{' | b'}'))))
                {
                    break;
                }
                if flow && matches!(c, b',' | b'[' | b']' | b'{' | b'}') {
                    break;
                }
                self.bump();
            }
            if !(self.is_blank(self.i) || self.break_len(self.i) > 0) {
                break;
            }
            while self.is_blank(self.i) || self.break_len(self.i) > 0 {
                if self.break_len(self.i) > 0 {
                    leading_blanks = true;
                }
                self.bump();
            }
            if !flow && (self.col as isize) < indent {
                break;
            }
        }
        leading_blanks
    }

    /// A literal or folded block scalar (libyaml `scan_block_scalar`), header to last content line.
    fn block_scalar(&mut self) {
        if let Some(k) = self.keys.last_mut() {
            *k = None;
        }
        self.key_allowed = true;
        self.bump();
        let mut increment = None;
        for _ in 0..2 {
            match self.at(self.i) {
                Some(d @ b'1'..=b'9') => {
                    increment = Some(isize::from(d - b'0'));
                    self.bump();
                }
                Some(b'+' | b'-') => self.bump(),
                _ => break,
            }
        }
        // The rest of the header line is blanks and a comment (anything else is libyaml's error).
        self.skip_to_line_end();
        if self.i >= self.b.len() {
            return;
        }
        self.bump();
        let parent = self.indent();
        let mut indent = increment.map_or(0, |n| if parent >= 0 { parent + n } else { n });
        if indent == 0 {
            // Auto-detect: the widest leading all-space line or the first content line.
            let mut max_indent = 0isize;
            loop {
                while self.at(self.i) == Some(b' ') {
                    self.bump();
                }
                max_indent = max_indent.max(self.col as isize);
                if self.break_len(self.i) == 0 {
                    break;
                }
                self.bump();
            }
            indent = max_indent.max(parent + 1).max(1);
        } else {
            self.block_breaks(indent);
        }
        while self.col as isize == indent && self.i < self.b.len() {
            self.skip_to_line_end();
            if self.i >= self.b.len() {
                return;
            }
            self.bump();
            self.block_breaks(indent);
        }
    }

    /// Leading spaces up to `indent` and empty lines, as inside a block scalar.
    fn block_breaks(&mut self, indent: isize) {
        loop {
            while (self.col as isize) < indent && self.at(self.i) == Some(b' ') {
                self.bump();
            }
            if self.break_len(self.i) == 0 {
                return;
            }
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str, limit: usize) -> bool {
        check_nesting_limit(text, limit).is_ok()
    }

    #[test]
    fn flow_nesting_is_counted_with_the_block_level() {
        // One block level (the key) plus three flow levels.
        assert!(depth_ok("a: [[[1]]]\n", 4));
        assert!(!depth_ok("a: [[[1]]]\n", 3));
        assert!(depth_ok("a: [1, [2], {b: [3]}, []]\n", 4));
        assert!(!depth_ok("a: [1, [2], {b: [3]}, []]\n", 3));
        let err = check_nesting_limit("a: [[[1]]]\n", 3).unwrap_err();
        assert_eq!((err.offset, err.line), (5, 1));
    }

    #[test]
    fn block_nesting_is_counted() {
        let text = "a:\n  b:\n    c:\n      - - d: 1\n";
        assert!(depth_ok(text, 6));
        assert!(!depth_ok(text, 5));
        // Siblings do not add depth.
        assert!(depth_ok("a: 1\nb: 2\nc:\n  - x\n  - y\nd: [1]\n", 2));
    }

    #[test]
    fn brackets_in_scalars_and_comments_do_not_count() {
        let cases = [
            "a: '[[[['\n",
            "a: \"[[[[\\\"[[\"\n",
            "a: 'it''s [[[['\n",
            "a: x[[[[\n",
            "a: x [[[[ y\n",
            "# [[[[\na: 1 # [[[[\n",
            "a: |\n  [[[[\n  {{{{\nb: 1\n",
            "a: >-\n\n   [[[[\n   [[[[\nb: 1\n",
            "a: \"multi\n  line [[[[\"\n",
            "- |2\n   [[[[\n",
            "a: [x, 'y[[[[', \"]]]\", z]\n",
            "a: !tag [1]\n",
        ];
        for text in cases {
            assert!(depth_ok(text, 3), "{text:?}");
        }
    }

    #[test]
    fn a_quote_inside_a_plain_scalar_hides_nothing() {
        // `'` continuing a plain scalar is text, not a quote: the brackets after it count.
        let text = format!("a: x\n '\nb: {}\n", "[".repeat(10));
        assert!(!depth_ok(&text, 5));
        let text = format!("a: it's\nb: {}\n", "[".repeat(10));
        assert!(!depth_ok(&text, 5));
        // A block scalar ends at the first line indented no deeper than its parent.
        let text = format!("- k: |\n    text '\n  x: {}\n", "[".repeat(10));
        assert!(!depth_ok(&text, 5));
        // A NEL ends a comment as libyaml reads it.
        let text = format!("# c\u{85}a: {}\n", "[".repeat(10));
        assert!(!depth_ok(&text, 5));
    }

    #[test]
    fn closers_in_quotes_do_not_hide_openers() {
        let text = "a: [\"]\", [\"]\", [\"]\", [\"]\", [1]]]]]]\n";
        assert!(!depth_ok(text, 4));
        assert!(depth_ok(text, 6));
    }

    #[test]
    fn yaml_from_str_refuses_before_parsing() {
        let deep = format!("executor_id: {}{}\n", "[".repeat(200), "]".repeat(200));
        let err = yaml_from_str::<serde_yaml::Value>(&deep).unwrap_err();
        assert!(matches!(err, YamlError::TooDeep(_)));
        assert_eq!(err.offset(), Some(13 + MAX_NESTING - 1));
        assert!(
            err.to_string()
                .contains("nested deeper than 128 levels at line 1")
        );
        let v: serde_yaml::Value = yaml_from_str("a: [1]\n").unwrap();
        assert_eq!(v["a"][0], serde_yaml::Value::from(1));
    }
}

/// The Python counterpart of [`check_yaml_nesting`]: the deepest bracket nesting (`(`, `[`, `{`)
/// outside strings and comments, refused past `limit` before ruff's parser sees the text (its
/// recursive descent with error recovery took seconds on 1 MB of `[[[[…`). Linear; string
/// prefixes, triple quotes and backslash escapes are followed, f-string contents count as string
/// text. Returns the offset of the first bracket too deep.
pub fn python_too_deep(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    // The depth can pass `limit` only if the text holds more opening brackets than that: its
    // length settles most files, a SIMD count almost every other one (no bracket number
    // `limit + 1`: `None`, not too deep) before the byte-by-byte scan below.
    if b.len() <= limit {
        return None;
    }
    memchr::memchr3_iter(b'(', b'[', b'{', b).nth(limit)?;
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'\'' | b'"') => {
                // A raw prefix (`r`, `rb`, `Rb`…) right before the quote disables escapes.
                let raw = b[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .any(|c| matches!(c, b'r' | b'R'));
                let triple = b.get(i..i + 3) == Some(&[q, q, q][..]);
                i += if triple { 3 } else { 1 };
                while i < b.len() {
                    if b[i] == b'\\' && !raw {
                        i += 2;
                        continue;
                    }
                    if triple {
                        if b.get(i..i + 3) == Some(&[q, q, q][..]) {
                            i += 2;
                            break;
                        }
                    } else if b[i] == q || b[i] == b'\n' {
                        break;
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod python_tests {
    use super::python_too_deep;

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        let deep = "[".repeat(200);
        assert_eq!(python_too_deep(&format!("x = {deep}"), 128), Some(4 + 128));
        for hidden in [
            format!("x = '{deep}'"),
            format!("x = \"\"\"\n{deep}\n\"\"\""),
            format!("# {deep}\nx = 1"),
            format!("x = r'\\' + '{deep}'"),
            format!("x = f'{{{deep}'"),
        ] {
            assert_eq!(python_too_deep(&hidden, 128), None, "{hidden:?}");
        }
        assert_eq!(python_too_deep("x = [[1], [2], ([3],)]", 2), Some(16));
    }

    #[test]
    fn few_brackets_settle_without_the_scan() {
        // Exactly `limit` openings can never nest deeper than `limit`; one more can.
        assert_eq!(python_too_deep(&"(".repeat(5), 5), None);
        assert_eq!(python_too_deep(&"(".repeat(6), 5), Some(5));
        assert_eq!(python_too_deep("(((x)))(((y)))", 5), None);
    }
}
