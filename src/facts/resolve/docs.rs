//! L3 the parses of directives and knowledge entries as queries (§12.5, §12.6): what lint's
//! `invalid-directive` and `invalid-knowledge`, `exec` and the MCP server read, computed once per
//! text.

use crate::db::{Db, FileContents, SourceFile};
use crate::parse::directive::{Directive, DirectiveError, parse_directive};
use crate::parse::knowledge::{Knowledge, KnowledgeError, parse_knowledge};

/// The directive in `file`; `None` when the file has no text (unreadable, binary, too large).
#[salsa::tracked(returns(ref))]
pub fn directive_doc(db: &dyn Db, file: SourceFile) -> Option<Result<Directive, DirectiveError>> {
    let FileContents::Text(text) = file.contents(db) else {
        return None;
    };
    Some(parse_directive(&text.as_str()))
}

/// The knowledge entry in `file`; `None` when the file has no text.
#[salsa::tracked(returns(ref))]
pub fn knowledge_doc(db: &dyn Db, file: SourceFile) -> Option<Result<Knowledge, KnowledgeError>> {
    let FileContents::Text(text) = file.contents(db) else {
        return None;
    };
    Some(parse_knowledge(&text.as_str()))
}
