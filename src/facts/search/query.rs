//! L3 the search query language (§12.7), pure: a query string parsed into a tree (implicit AND,
//! `AND`/`OR`/`NOT` in capitals, parentheses, `"phrases"`, `*` wildcards matched per word with
//! fnmatch's rules, case-insensitive substring terms, Levenshtein fuzzy terms), a query that does
//! not parse refused with the column that breaks it, and the matching of a parsed query against a
//! lowercased text. Also the proximity check (every term within N words of the first).

use std::fmt;

use memchr::memmem::Finder;

/// Nesting deeper than this (parentheses, `NOT`s) is refused: the tree is walked recursively.
const MAX_DEPTH: usize = 64;

/// Why a query does not parse, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    /// The 1-based column (in characters) of what breaks the query.
    pub column: usize,
    /// What is wrong, in a few words (`unclosed "(" opened`).
    pub problem: String,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.problem, self.column)
    }
}

/// A parsed query, ready to match lowercased texts.
#[derive(Debug)]
pub struct Query {
    root: Node,
    /// Levenshtein distance a term may be off a word by (0: exact substrings only).
    fuzzy: usize,
}

#[derive(Debug)]
enum Node {
    /// An empty query: everything matches.
    All,
    Term(Term),
    Phrase(Phrase),
    Wild(Wild),
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
}

/// A word searched as a case-insensitive substring, or within `fuzzy` edits of a word.
#[derive(Debug)]
struct Term {
    word: String,
    finder: Finder<'static>,
    /// `fuzzy + 1` pieces of the word: a word within `fuzzy` edits holds one of them verbatim
    /// (each edit touches at most one piece), so a text holding none has no such word. Empty
    /// when the word is too short to split.
    pieces: Vec<Finder<'static>>,
    /// The same pieces' bytes, looked for in each word.
    piece_bytes: Vec<Vec<u8>>,
}

/// A quoted phrase, searched as a case-insensitive substring.
#[derive(Debug)]
struct Phrase {
    text: String,
    finder: Finder<'static>,
}

/// A pattern with `*`, matched against each word of the text with fnmatch's rules.
#[derive(Debug)]
struct Wild {
    /// As written, lowercased (proximity searches it without its stars).
    pattern: String,
    glob: Vec<GlobTok>,
    /// The runs of plain characters of the pattern: a word that matches holds each of them, so a
    /// text holding one not is passed over without splitting it into words.
    required: Vec<Finder<'static>>,
    /// A plain character no word holds (`-`, `/`): the pattern matches no word.
    impossible: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum GlobTok {
    Star,
    Any,
    Char(char),
    /// `[…]`: inclusive ranges, `!` negates.
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Query {
    /// Parse `text`; terms may be `fuzzy` edits off a word (0: exact).
    pub fn parse(text: &str, fuzzy: usize) -> Result<Query, QueryError> {
        let tokens = lex(text)?;
        let root = if tokens.is_empty() {
            Node::All
        } else {
            let mut p = Parser {
                tokens,
                at: 0,
                fuzzy,
            };
            let node = p.or(0)?;
            if let Some(t) = p.tokens.get(p.at) {
                return Err(err(t.column, "unexpected \")\"".to_owned()));
            }
            node
        };
        Ok(Query { root, fuzzy })
    }

    /// Whether the query matches `text`, which must be lowercased.
    pub fn matches(&self, text: &str) -> bool {
        self.root.matches(text, self.fuzzy)
    }

    /// The terms a proximity search looks for, as the reference collects them: each term, each
    /// word of each phrase, each wildcard without its stars; nothing under `NOT`.
    pub fn terms(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.root.terms(&mut out);
        out
    }
}

impl Node {
    fn matches(&self, text: &str, fuzzy: usize) -> bool {
        match self {
            Node::All => true,
            Node::Term(t) => t.matches(text, fuzzy),
            Node::Phrase(p) => p.finder.find(text.as_bytes()).is_some(),
            Node::Wild(w) => w.matches(text),
            Node::And(items) => items.iter().all(|n| n.matches(text, fuzzy)),
            Node::Or(items) => items.iter().any(|n| n.matches(text, fuzzy)),
            Node::Not(n) => !n.matches(text, fuzzy),
        }
    }

    fn terms(&self, out: &mut Vec<String>) {
        match self {
            Node::All | Node::Not(_) => {}
            Node::Term(t) => out.push(t.word.clone()),
            Node::Phrase(p) => out.extend(p.text.split_whitespace().map(str::to_owned)),
            Node::Wild(w) => out.push(w.pattern.replace('*', "")),
            Node::And(items) | Node::Or(items) => items.iter().for_each(|n| n.terms(out)),
        }
    }
}

impl Term {
    fn new(word: String, fuzzy: usize) -> Term {
        let chars: Vec<char> = word.chars().collect();
        let n = fuzzy.saturating_add(1);
        let pieces = if fuzzy == 0 || chars.len() < n {
            Vec::new()
        } else {
            (0..n)
                .map(|i| {
                    let piece: String = chars[i * chars.len() / n..(i + 1) * chars.len() / n]
                        .iter()
                        .collect();
                    Finder::new(piece.as_bytes()).into_owned()
                })
                .collect()
        };
        Term {
            finder: Finder::new(word.as_bytes()).into_owned(),
            piece_bytes: pieces.iter().map(|p| p.needle().to_vec()).collect(),
            word,
            pieces,
        }
    }

    fn matches(&self, text: &str, fuzzy: usize) -> bool {
        if self.finder.find(text.as_bytes()).is_some() {
            return true;
        }
        if fuzzy == 0 {
            return false;
        }
        if !self.pieces.is_empty()
            && !self
                .pieces
                .iter()
                .any(|p| p.find(text.as_bytes()).is_some())
        {
            return false;
        }
        let near =
            |w: &str| w.len().abs_diff(self.word.len()) <= fuzzy && within(&self.word, w, fuzzy);
        if !self.pieces.is_empty() && self.word.is_ascii() && text.is_ascii() {
            // Only the words around a piece can be near: found with a vector search each.
            return words_holding(text, &self.pieces, near);
        }
        // The same filters word by word: a length within the distance, one piece held verbatim.
        let ascii = self.word.is_ascii();
        words(text).any(|w| {
            if ascii && w.is_ascii() && w.len().abs_diff(self.word.len()) > fuzzy {
                return false;
            }
            if !self.piece_bytes.is_empty()
                && !self.piece_bytes.iter().any(|p| holds(w.as_bytes(), p))
            {
                return false;
            }
            within(&self.word, w, fuzzy)
        })
    }
}

impl Wild {
    fn new(pattern: String) -> Wild {
        let glob = compile_glob(&pattern);
        let mut required = Vec::new();
        let mut run = String::new();
        for tok in glob.iter().chain(std::iter::once(&GlobTok::Star)) {
            match tok {
                GlobTok::Char(c) => run.push(*c),
                _ if !run.is_empty() => {
                    required.push(Finder::new(run.as_bytes()).into_owned());
                    run.clear();
                }
                _ => {}
            }
        }
        // A plain run holding a character no word has: no word can match.
        let impossible = glob
            .iter()
            .any(|t| matches!(t, GlobTok::Char(c) if !(c.is_alphanumeric() || *c == '_')));
        Wild {
            pattern,
            glob,
            required,
            impossible,
        }
    }

    fn matches(&self, text: &str) -> bool {
        if self.glob.iter().all(|t| *t == GlobTok::Star) {
            // `*` matches any word: the text has one.
            return has_word(text);
        }
        if self.impossible
            || self
                .required
                .iter()
                .any(|f| f.find(text.as_bytes()).is_none())
        {
            return false;
        }
        match self.required.iter().max_by_key(|f| f.needle().len()) {
            // A matching word holds the longest plain run: only the words around it are tried.
            Some(anchor) if text.is_ascii() => {
                words_holding(text, std::slice::from_ref(anchor), |w| {
                    glob_match(&self.glob, w)
                })
            }
            _ => words(text).any(|w| glob_match(&self.glob, w)),
        }
    }
}

/// The words of a text as Python's `re.findall(r"\w+", text)` finds them (letters, digits and
/// `_`), ASCII read byte by byte.
pub fn words(text: &str) -> Words<'_> {
    Words { text, at: 0 }
}

/// The iterator of [`words`].
pub struct Words<'t> {
    text: &'t str,
    at: usize,
}

/// Whether an ASCII byte is a word character.
const fn ascii_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'t> Words<'t> {
    /// Whether the character at `at` is a word character, and its length.
    #[inline]
    fn word_char(&self, at: usize) -> (bool, usize) {
        let b = self.text.as_bytes()[at];
        if b.is_ascii() {
            return (ascii_word(b), 1);
        }
        match self.text[at..].chars().next() {
            Some(c) => (c.is_alphanumeric(), c.len_utf8()),
            None => (false, 1),
        }
    }

    /// Move over characters while they are (`word`) or are not word characters.
    #[inline]
    fn skip(&mut self, word: bool) {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.at) {
            if b.is_ascii() {
                if ascii_word(b) != word {
                    return;
                }
                self.at += 1;
            } else {
                let (w, n) = self.word_char(self.at);
                if w != word {
                    return;
                }
                self.at += n;
            }
        }
    }
}

impl<'t> Iterator for Words<'t> {
    type Item = &'t str;

    #[inline]
    fn next(&mut self) -> Option<&'t str> {
        self.skip(false);
        if self.at >= self.text.len() {
            return None;
        }
        let start = self.at;
        self.skip(true);
        Some(&self.text[start..self.at])
    }
}

/// Whether a word of the ASCII `text` holding one of `needles` passes `test`: each needle found
/// with a vector search and the word read around it, instead of splitting the text into words.
/// A needle holding a character no word has is in no word.
fn words_holding(text: &str, needles: &[Finder<'_>], test: impl Fn(&str) -> bool) -> bool {
    let bytes = text.as_bytes();
    for f in needles {
        let needle = f.needle();
        if !needle.iter().all(|&b| ascii_word(b)) {
            continue;
        }
        for at in f.find_iter(bytes) {
            let mut start = at;
            while start > 0 && ascii_word(bytes[start - 1]) {
                start -= 1;
            }
            let mut end = at + needle.len();
            while end < bytes.len() && ascii_word(bytes[end]) {
                end += 1;
            }
            if test(&text[start..end]) {
                return true;
            }
        }
    }
    false
}

/// Whether the text holds a word character (what `*` needs to match).
fn has_word(text: &str) -> bool {
    text.chars().any(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `needle` occurs in the short `hay` (a word): a plain window comparison, cheaper than
/// a vector search's set-up for a few bytes.
fn holds(hay: &[u8], needle: &[u8]) -> bool {
    needle.len() <= hay.len() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Whether `a` and `b` are at most `max` Levenshtein edits apart.
pub fn within(a: &str, b: &str, max: usize) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return within_slices(a.as_bytes(), b.as_bytes(), max);
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    within_slices(&a, &b, max)
}

/// The Levenshtein distance of two sequences, compared with `max`; one row at a time, given up
/// as soon as a whole row is over `max`.
fn within_slices<T: PartialEq>(a: &[T], b: &[T], max: usize) -> bool {
    if a.len().abs_diff(b.len()) > max {
        return false;
    }
    // Words are short: the row lives on the stack.
    let mut stack = [0usize; 64];
    let mut heap = Vec::new();
    let row: &mut [usize] = if b.len() < stack.len() {
        &mut stack[..=b.len()]
    } else {
        heap.resize(b.len() + 1, 0);
        &mut heap
    };
    for (j, cell) in row.iter_mut().enumerate() {
        *cell = j;
    }
    for (i, x) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        let mut best = row[0];
        for (j, y) in b.iter().enumerate() {
            let next = (diag + usize::from(x != y))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
            best = best.min(next);
        }
        if best > max {
            return false;
        }
    }
    row[b.len()] <= max
}

/// Whether every term occurs (as a substring of a word) within `max` words of an occurrence of
/// the first, as the reference's proximity search decides (each distinct term once; fewer than
/// two terms always pass).
pub fn proximity_match(text: &str, terms: &[String], max: usize) -> bool {
    if terms.len() < 2 {
        return true;
    }
    let words: Vec<&str> = words(text).collect();
    let mut distinct: Vec<&str> = Vec::new();
    for t in terms {
        if !distinct.contains(&t.as_str()) {
            distinct.push(t);
        }
    }
    let mut positions: Vec<Vec<usize>> = Vec::with_capacity(distinct.len());
    for t in &distinct {
        let at: Vec<usize> = (0..words.len()).filter(|&i| words[i].contains(t)).collect();
        if at.is_empty() {
            return false;
        }
        positions.push(at);
    }
    positions[0].iter().any(|&first| {
        positions[1..]
            .iter()
            .all(|list| list.iter().any(|&p| p.abs_diff(first) <= max))
    })
}

// ---- fnmatch ----------------------------------------------------------------------------------

/// A pattern as Python's `fnmatch` reads it: `*`, `?`, `[seq]`, `[!seq]` (a `[` without its `]`
/// is a plain character).
fn compile_glob(pattern: &str) -> Vec<GlobTok> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                if out.last() != Some(&GlobTok::Star) {
                    out.push(GlobTok::Star);
                }
            }
            '?' => out.push(GlobTok::Any),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push(GlobTok::Char('['));
                    continue;
                }
                let mut set = &chars[i..j];
                i = j + 1;
                let negated = set.first() == Some(&'!');
                if negated {
                    set = &set[1..];
                }
                let mut ranges = Vec::new();
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == '-' {
                        if set[k] <= set[k + 2] {
                            ranges.push((set[k], set[k + 2]));
                        }
                        k += 3;
                    } else {
                        ranges.push((set[k], set[k]));
                        k += 1;
                    }
                }
                out.push(GlobTok::Set { negated, ranges });
            }
            c => out.push(GlobTok::Char(c)),
        }
    }
    out
}

fn glob_char(tok: &GlobTok, c: char) -> bool {
    match tok {
        GlobTok::Star => true,
        GlobTok::Any => true,
        GlobTok::Char(x) => *x == c,
        GlobTok::Set { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
        }
    }
}

/// Whether all of `s` matches the compiled pattern (a star backtracks to its last position).
fn glob_match(glob: &[GlobTok], s: &str) -> bool {
    let next = |at: usize| s[at..].chars().next().map(|c| (c, c.len_utf8()));
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if let Some(tok) = glob.get(p) {
            if *tok == GlobTok::Star {
                star = Some((p + 1, i));
                p += 1;
                continue;
            }
            if let Some((c, len)) = next(i)
                && glob_char(tok, c)
            {
                p += 1;
                i += len;
                continue;
            }
        } else if i == s.len() {
            return true;
        }
        let Some((after, from)) = star else {
            return false;
        };
        let Some((_, len)) = next(from) else {
            return false;
        };
        star = Some((after, from + len));
        p = after;
        i = from + len;
    }
}

/// An id pattern with fnmatch's rules (`*` also crosses `/`), compiled for matching many ids.
#[derive(Clone, Debug)]
pub struct IdGlob {
    glob: Vec<GlobTok>,
    /// The plain characters the pattern starts with: an id without them is passed over at once.
    prefix: String,
}

impl IdGlob {
    pub fn new(pattern: &str) -> IdGlob {
        let glob = compile_glob(pattern);
        let prefix = glob
            .iter()
            .map_while(|t| match t {
                GlobTok::Char(c) => Some(*c),
                _ => None,
            })
            .collect();
        IdGlob { glob, prefix }
    }
    pub fn matches(&self, id: &str) -> bool {
        id.starts_with(&self.prefix) && glob_match(&self.glob, id)
    }
}

// ---- the parser -------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Open,
    Close,
    Phrase(String),
    Word(String),
    And,
    Or,
    Not,
}

#[derive(Clone, Debug)]
struct Lexed {
    tok: Tok,
    column: usize,
}

fn err(column: usize, problem: String) -> QueryError {
    QueryError { column, problem }
}

/// The tokens of a query: parentheses, phrases, words, and the words `AND`, `OR`, `NOT` written
/// in capitals (in any other case they are words).
fn lex(text: &str) -> Result<Vec<Lexed>, QueryError> {
    let mut out = Vec::new();
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        let column = i + 1;
        match c {
            c if c.is_whitespace() => {}
            '(' => out.push(Lexed {
                tok: Tok::Open,
                column,
            }),
            ')' => out.push(Lexed {
                tok: Tok::Close,
                column,
            }),
            '"' => {
                let mut phrase = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '"' {
                        closed = true;
                        break;
                    }
                    phrase.push(c);
                }
                if !closed {
                    return Err(err(column, "unclosed quote '\"' opened".to_owned()));
                }
                if phrase.trim().is_empty() {
                    return Err(err(column, "empty phrase '\"\"'".to_owned()));
                }
                out.push(Lexed {
                    tok: Tok::Phrase(phrase.to_lowercase()),
                    column,
                });
            }
            c => {
                let mut word = String::from(c);
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '(' | ')' | '"') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                let tok = match word.as_str() {
                    "AND" => Tok::And,
                    "OR" => Tok::Or,
                    "NOT" => Tok::Not,
                    _ => Tok::Word(word.to_lowercase()),
                };
                out.push(Lexed { tok, column });
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Lexed>,
    at: usize,
    fuzzy: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    /// Whether the next token can start an operand.
    fn operand_next(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Word(_) | Tok::Phrase(_) | Tok::Open | Tok::Not)
        )
    }

    /// Consume an operator at `column` and check an operand follows it.
    fn operator(&mut self, name: &str) -> Result<(), QueryError> {
        let column = self.tokens[self.at].column;
        self.at += 1;
        if self.operand_next() {
            Ok(())
        } else {
            Err(err(column, format!("{name} needs a term after it")))
        }
    }

    fn or(&mut self, depth: usize) -> Result<Node, QueryError> {
        let mut items = vec![self.and(depth)?];
        while self.peek() == Some(&Tok::Or) {
            self.operator("OR")?;
            items.push(self.and(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Node::Or(items)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Node, QueryError> {
        let mut items = vec![self.unary(depth)?];
        loop {
            if self.peek() == Some(&Tok::And) {
                self.operator("AND")?;
            } else if !self.operand_next() {
                break;
            }
            items.push(self.unary(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Node::And(items)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Node, QueryError> {
        if self.peek() != Some(&Tok::Not) {
            return self.primary(depth);
        }
        let column = self.tokens[self.at].column;
        if depth >= MAX_DEPTH {
            return Err(too_deep(column));
        }
        self.operator("NOT")?;
        Ok(Node::Not(Box::new(self.unary(depth + 1)?)))
    }

    fn primary(&mut self, depth: usize) -> Result<Node, QueryError> {
        let Some(Lexed { tok, column }) = self.tokens.get(self.at).cloned() else {
            // Operators check that an operand follows, so only an empty group ends here.
            let column = self.tokens.last().map_or(1, |t| t.column);
            return Err(err(column, "a term is missing".to_owned()));
        };
        self.at += 1;
        match tok {
            Tok::Word(w) if w.contains('*') => Ok(Node::Wild(Wild::new(w))),
            Tok::Word(w) => Ok(Node::Term(Term::new(w, self.fuzzy))),
            Tok::Phrase(p) => Ok(Node::Phrase(Phrase {
                finder: Finder::new(p.as_bytes()).into_owned(),
                text: p,
            })),
            Tok::Open => {
                match self.peek() {
                    Some(Tok::Close) => {
                        return Err(err(column, "empty parentheses \"()\"".to_owned()));
                    }
                    None => {
                        return Err(err(column, "unclosed parenthesis \"(\" opened".to_owned()));
                    }
                    Some(_) => {}
                }
                if depth >= MAX_DEPTH {
                    return Err(too_deep(column));
                }
                let node = self.or(depth + 1)?;
                if self.peek() != Some(&Tok::Close) {
                    return Err(err(column, "unclosed parenthesis \"(\" opened".to_owned()));
                }
                self.at += 1;
                Ok(node)
            }
            Tok::Close => Err(err(column, "unexpected \")\"".to_owned())),
            Tok::And => Err(err(column, "AND needs a term before it".to_owned())),
            Tok::Or => Err(err(column, "OR needs a term before it".to_owned())),
            Tok::Not => Err(err(column, "NOT needs a term after it".to_owned())),
        }
    }
}

fn too_deep(column: usize) -> QueryError {
    err(
        column,
        format!("the query nests more than {MAX_DEPTH} levels deep"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Query {
        Query::parse(text, 0).unwrap()
    }

    fn hit(query: &str, text: &str) -> bool {
        q(query).matches(&text.to_lowercase())
    }

    #[test]
    fn implicit_and_explicit_and_or_not_and_groups() {
        assert!(hit("file system", "a file system tool"));
        assert!(!hit("file system", "a file tool"));
        assert!(hit("file AND system", "system of files"));
        assert!(hit("file OR directory", "a directory"));
        assert!(!hit("file OR directory", "a folder"));
        assert!(hit("file NOT temporary", "a file"));
        assert!(!hit("file NOT temporary", "a temporary file"));
        assert!(hit("(file OR dir) AND read", "read a dir"));
        assert!(!hit("(file OR dir) AND read", "write a dir"));
        // OR binds looser than AND: `a b OR c` is `(a b) OR c`.
        assert!(hit("a1 b1 OR c1", "c1"));
        assert!(!hit("a1 (b1 OR c1)", "c1"));
        assert!(hit("NOT NOT file", "file"));
        assert!(q("").matches("") && q("  \t").matches("x"));
    }

    #[test]
    fn keywords_are_capitals_only() {
        // `or` in lower case is a term (searched as a substring), not an operator.
        assert!(!hit("file or directory", "a directory"));
        assert!(hit("file or directory", "file or directory"));
        assert!(hit("not", "nothing"));
    }

    #[test]
    fn terms_are_case_insensitive_substrings_and_phrases_are_exact() {
        assert!(hit("PUBLISH", "Publish tables"));
        assert!(hit("ubli", "publish"));
        assert!(hit("\"file system\"", "the File System"));
        assert!(!hit("\"file system\"", "system file"));
        assert!(hit("\"a  b\"", "a  b"));
    }

    #[test]
    fn wildcards_match_whole_words_with_fnmatch_rules() {
        assert!(hit("file*", "filesystem tools"));
        assert!(hit("file*", "the file"));
        assert!(!hit("file*", "profile"));
        assert!(hit("*search", "websearch"));
        assert!(hit("*thread*", "multithreading"));
        assert!(hit("*", "anything"));
        assert!(!hit("*", "  --  "));
        assert!(hit("**", "é"));
        assert!(!hit("**", "—"));
        assert!(hit("f?le*", "fole"));
        assert!(hit("[fp]ile*", "piles"));
        assert!(!hit("[!fp]ile*", "piles"));
        assert!(hit("[a-c]at*", "bat"));
        // Words hold no `/`, so a path pattern matches no word (as the reference's).
        assert!(!hit("rye/*", "rye/core"));
        // A `[` without `]` is a plain character (and no word holds one).
        assert!(!hit("a[*", "a[b"));
        assert!(IdGlob::new("a[*").matches("a[b"));
        assert!(!IdGlob::new("a[*").matches("ab"));
    }

    #[test]
    fn fuzzy_terms_are_within_the_distance_of_a_word() {
        let typo = Query::parse("direcive", 2).unwrap();
        assert!(typo.matches("make a directive"));
        assert!(!typo.matches("make a direction"));
        assert!(!Query::parse("direcive", 0).unwrap().matches("directive"));
        assert!(Query::parse("direcive", 1).unwrap().matches("directive"));
        // Short terms: any word within the distance.
        assert!(Query::parse("ab", 2).unwrap().matches("xy"));
        assert!(!Query::parse("ab", 1).unwrap().matches("xyz"));
        // Phrases and wildcards are never fuzzy.
        assert!(
            !Query::parse("\"direcive\"", 2)
                .unwrap()
                .matches("directive")
        );
        assert!(Query::parse("héllo", 1).unwrap().matches("hello"));
    }

    #[test]
    fn words_are_runs_of_letters_digits_and_underscores() {
        let all: Vec<&str> = words("Publish_tables, v2 — données! x").collect();
        assert_eq!(all, ["Publish_tables", "v2", "données", "x"]);
        assert_eq!(words("").count(), 0);
        assert_eq!(words(" -- ").count(), 0);
    }

    #[test]
    fn levenshtein_bounds_agree_with_strsim() {
        for (a, b) in [
            ("kitten", "sitting"),
            ("", "abc"),
            ("abc", ""),
            ("flaw", "lawn"),
            ("directive", "direcive"),
            ("données", "donnees"),
        ] {
            let d = strsim::levenshtein(a, b);
            for max in 0..5 {
                assert_eq!(within(a, b, max), d <= max, "{a} {b} {max}");
            }
        }
    }

    #[test]
    fn errors_name_the_column() {
        let e = |text: &str| Query::parse(text, 0).unwrap_err();
        assert_eq!(
            e("(file OR dir").to_string(),
            "unclosed parenthesis \"(\" opened at column 1"
        );
        assert_eq!(e("file)").to_string(), "unexpected \")\" at column 5");
        assert_eq!(
            e("a \"b c").to_string(),
            "unclosed quote '\"' opened at column 3"
        );
        assert_eq!(
            e("file AND").to_string(),
            "AND needs a term after it at column 6"
        );
        assert_eq!(
            e("OR file").to_string(),
            "OR needs a term before it at column 1"
        );
        assert_eq!(e("file OR OR x").column, 6);
        assert_eq!(e("NOT").column, 1);
        assert_eq!(
            e("a ()").to_string(),
            "empty parentheses \"()\" at column 3"
        );
        assert_eq!(e("a \"\"").column, 3);
        // Columns count characters, not bytes.
        assert_eq!(e("é )").column, 3);
        let deep = "(".repeat(100) + "x" + &")".repeat(100);
        assert!(e(&deep).problem.contains("nests"));
        assert!(e(&"NOT ".repeat(100)).problem.contains("nests"));
    }

    #[test]
    fn proximity_terms_and_distance() {
        assert_eq!(
            q("thread \"fast path\" NOT slow orch*").terms(),
            ["thread", "fast", "path", "orch"]
        );
        let text = "the thread runs in an orchestrator of threads";
        let terms = q("thread orchestrator").terms();
        assert!(proximity_match(text, &terms, 5));
        assert!(proximity_match(text, &terms, 3));
        assert!(!proximity_match(
            "thread a b c d e f g orchestrator",
            &terms,
            5
        ));
        assert!(proximity_match("thread", &["thread".to_owned()], 0));
        assert!(!proximity_match(
            "thread",
            &["thread".into(), "x".into()],
            5
        ));
    }

    fn id_matches(pattern: &str, id: &str) -> bool {
        IdGlob::new(pattern).matches(id)
    }

    #[test]
    fn id_globs_cross_folders() {
        assert!(id_matches("rye/core/*", "rye/core/runtimes/bash/bash"));
        assert!(!id_matches("rye/core/*", "rye/corex"));
        assert!(id_matches("rye/*/bash", "rye/x/y/bash"));
        assert!(id_matches("acme/greet", "acme/greet"));
    }

    proptest::proptest! {
        #[test]
        fn no_query_panics(text in "\\PC{0,40}", fuzzy in 0usize..4, hay in "\\PC{0,60}") {
            if let Ok(query) = Query::parse(&text, fuzzy) {
                let _ = query.matches(&hay.to_lowercase());
                let _ = proximity_match(&hay.to_lowercase(), &query.terms(), 3);
            }
        }

        #[test]
        fn no_operator_soup_panics(parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("AND"), proptest::strategy::Just("OR"),
                proptest::strategy::Just("NOT"), proptest::strategy::Just("("),
                proptest::strategy::Just(")"), proptest::strategy::Just("\""),
                proptest::strategy::Just("a*"), proptest::strategy::Just("[b"),
                proptest::strategy::Just("x"), proptest::strategy::Just(" "),
            ], 0..24)) {
            let text = parts.concat();
            match Query::parse(&text, 1) {
                Ok(query) => { let _ = query.matches("a x [b"); }
                Err(e) => proptest::prop_assert!(e.column >= 1 && e.column <= text.chars().count().max(1)),
            }
        }

        #[test]
        fn fuzzy_and_wildcard_shortcuts_agree_with_the_plain_definitions(
            text in "[a-e_ .é-]{0,40}",
            term in "[a-e]{1,7}",
            pattern in "[a-e*?]{1,6}",
            fuzzy in 0usize..4,
        ) {
            let text = text.to_lowercase();
            let plain_fuzzy = text.contains(&term)
                || (fuzzy > 0 && words(&text).any(|w| strsim::levenshtein(&term, w) <= fuzzy));
            proptest::prop_assert_eq!(Query::parse(&term, fuzzy).unwrap().matches(&text), plain_fuzzy);
            let wild = format!("{pattern}*");
            let glob = compile_glob(&wild);
            let plain_wild = words(&text).any(|w| glob_match(&glob, w));
            proptest::prop_assert_eq!(Query::parse(&wild, 0).unwrap().matches(&text), plain_wild);
        }

        #[test]
        fn a_word_of_the_text_always_matches(word in "[a-z]{1,10}", before in "[a-z ]{0,20}", after in "[a-z ]{0,20}") {
            let text = format!("{before} {word} {after}");
            let (phrase, wild, not) = (format!("\"{word}\""), format!("{word}*"), format!("NOT {word}"));
            let hit = |q: &str| Query::parse(q, 0).unwrap().matches(&text);
            proptest::prop_assert!(hit(&word));
            proptest::prop_assert!(hit(&phrase));
            proptest::prop_assert!(hit(&wild));
            proptest::prop_assert!(!hit(&not));
        }
    }
}
