//! Byte offsets ⇄ LSP positions (line, character in the negotiated encoding: UTF-16 by default,
//! UTF-8 when the client offers it), and incremental text edits applied to a buffer.

use lsp_types::{Position, Range};

/// How the client counts characters in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of one text.
pub struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(crate::diagnostic::line_ends(text));
        Lines { text, starts }
    }

    /// The position of byte `offset` (clamped to the text, moved back to a char boundary).
    pub fn position(&self, offset: usize, enc: Encoding) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let prefix = &self.text[self.starts[line]..offset];
        let character = match enc {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        Position::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(character).unwrap_or(u32::MAX),
        )
    }

    pub fn range(&self, start: usize, end: usize, enc: Encoding) -> Range {
        Range::new(self.position(start, enc), self.position(end, enc))
    }

    /// The byte offset of `pos`; a line past the end is the end of the text, a character past
    /// the end of its line is the end of that line (as the protocol asks), and a position inside
    /// a UTF-16 surrogate pair or a UTF-8 sequence is the start of that character.
    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |&e| e);
        let line = &self.text[start..end];
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let want = pos.character as usize;
        let mut count = 0;
        for (i, c) in line.char_indices() {
            let w = match enc {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
            if count + w > want {
                return start + i;
            }
            count += w;
        }
        start + line.len()
    }
}

/// Apply one content change of `textDocument/didChange` (a range edit, or the whole text).
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str, enc: Encoding) {
    match range {
        None => new_text.clone_into(text),
        Some(r) => {
            let lines = Lines::new(text);
            let start = lines.offset(r.start, enc);
            let end = lines.offset(r.end, enc).max(start);
            text.replace_range(start..end, new_text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn utf16_and_utf8_columns() {
        let text = "a😀b\nçd\r\nx";
        let l = Lines::new(text);
        assert_eq!(l.position(5, Encoding::Utf16), Position::new(0, 3));
        assert_eq!(l.position(5, Encoding::Utf8), Position::new(0, 5));
        assert_eq!(l.position(3, Encoding::Utf16), Position::new(0, 1)); // inside the emoji
        assert_eq!(l.offset(Position::new(0, 3), Encoding::Utf16), 5);
        assert_eq!(l.offset(Position::new(0, 2), Encoding::Utf16), 1); // inside the pair
        assert_eq!(l.offset(Position::new(1, 99), Encoding::Utf16), 10); // before \r\n
        assert_eq!(l.offset(Position::new(9, 0), Encoding::Utf16), text.len());
        let mut s = text.to_owned();
        apply_change(
            &mut s,
            Some(Range::new(Position::new(1, 0), Position::new(2, 0))),
            "",
            Encoding::Utf16,
        );
        assert_eq!(s, "a😀b\nx");
    }

    proptest! {
        /// Every char boundary survives offset → position → offset in both encodings.
        #[test]
        fn round_trip(text in "(a|ü|😀|\n|\r\n|\r|x){0,40}") {
            let lines = Lines::new(&text);
            for (i, _) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
                if text[..i].ends_with('\r') && text[i..].starts_with('\n') {
                    continue; // between \r and \n is the end of the line, by the protocol
                }
                for enc in [Encoding::Utf8, Encoding::Utf16] {
                    prop_assert_eq!(lines.offset(lines.position(i, enc), enc), i);
                }
            }
        }

        /// A range edit equals splicing the same bytes.
        #[test]
        fn edits_splice(text in "(a|ü|😀|\n){0,30}", a in 0usize..40, b in 0usize..40, new in "(z|é|\n){0,5}") {
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let (s, e) = (bounds[a % bounds.len()], bounds[b % bounds.len()]);
            let (s, e) = (s.min(e), s.max(e));
            let lines = Lines::new(&text);
            let range = lines.range(s, e, Encoding::Utf16);
            let mut edited = text.clone();
            apply_change(&mut edited, Some(range), &new, Encoding::Utf16);
            let mut want = text.clone();
            want.replace_range(s..e, &new);
            prop_assert_eq!(edited, want);
        }
    }
}
