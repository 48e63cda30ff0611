//! L3 the fields `sign` validates of directives and knowledge entries (§12.9): a directive's name,
//! version, description and category, an entry's name, title, version, entry type and category,
//! read from their parses (`parse::directive`, `parse::knowledge`).

/// The fields an item's schema speaks about, as JSON values (`None`: absent).
pub type Fields = Vec<(&'static str, Option<serde_json::Value>)>;

/// Why an item's metadata cannot be read: the reference's error text and the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocError {
    pub error: &'static str,
    pub detail: String,
}

/// A directive's fields: the `<directive name version>` attributes and `description`/`category`
/// (§12.5), from the directive's parse.
pub fn directive_fields(text: &str) -> Result<Fields, DocError> {
    let d = super::directive::parse_directive(text).map_err(|e| DocError {
        error: "Invalid directive structure",
        detail: e.message,
    })?;
    let s = |v: Option<String>| v.map(serde_json::Value::String);
    Ok(vec![
        ("name", s(d.name.map(|a| a.value))),
        ("version", s(d.version.map(|a| a.value))),
        ("description", s(d.description)),
        ("category", s(d.category)),
    ])
}

/// A knowledge entry's fields from its ```` ```yaml ```` block or `---` frontmatter (§12.6), from
/// the entry's parse.
pub fn knowledge_fields(text: &str) -> Result<Fields, DocError> {
    let k = super::knowledge::parse_knowledge(text).map_err(|e| DocError {
        error: "Validation failed",
        detail: e.message,
    })?;
    let get = |key: &str| k.metadata.get(key).filter(|v| !v.is_null()).cloned();
    Ok(vec![
        // Seed-era entries name themselves with `name`, the reference's with `id`.
        ("name", get("name").or_else(|| get("id"))),
        ("title", get("title")),
        ("version", get("version")),
        ("entry_type", get("entry_type")),
        ("category", get("category")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directive_structure() {
        let ok = "# T\n\n```xml\n<directive name=\"wf\" version=\"1.0.0\">\n<metadata><description>D</description></metadata>\n</directive>\n```\n";
        let f = directive_fields(ok).unwrap_or_else(|r| panic!("{}", r.error));
        assert_eq!(f[0].1, Some(json!("wf")));
        assert_eq!(f[2].1, Some(json!("D")));
        let e = directive_fields("just text\n").err().unwrap();
        assert_eq!(e.error, "Invalid directive structure");
        assert!(directive_fields("```xml\n<directive name=x>\n</directive>\n```\n").is_err());
        assert!(directive_fields("```xml\n<directive name=\"x\">\n").is_err());
    }

    #[test]
    fn knowledge_metadata_blocks() {
        let fenced =
            "<!-- rye:signed:x -->\n```yaml\nname: e\ntitle: T\nversion: \"1.0.0\"\n```\nbody\n";
        let f = knowledge_fields(fenced).unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(f[0].1, Some(json!("e")));
        let dashes = "---\ntitle: Test Entry\nid: entry\n---\n\nContent here";
        let f = knowledge_fields(dashes).unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(f[0].1, Some(json!("entry")));
        assert!(knowledge_fields("plain text\n").is_err());
    }
}
