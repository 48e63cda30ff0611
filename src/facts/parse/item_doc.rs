//! L3 the metadata of directives and knowledge entries (§12.5, §12.6), read from their markdown:
//! the ```` ```xml ```` block of a directive (`<directive name version>` and its description and
//! category), the ```` ```yaml ```` block or `---` frontmatter of a knowledge entry. What `sign`
//! validates, and what executing them will read.

/// The fields an item's schema speaks about, as JSON values (`None`: absent).
pub type Fields = Vec<(&'static str, Option<serde_json::Value>)>;

/// Why an item's metadata cannot be read: the reference's error text and the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocError {
    pub error: &'static str,
    pub detail: String,
}

/// Lines of `text`: (start offset, offset after the line's newline, the line without it).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, at, l.trim_end_matches(['\n', '\r']))
    })
}

/// The body of the first ```` ```<lang> ```` fence not inside a 4+-backtick fence (§12.5, §12.6).
pub fn fenced_block<'t>(text: &'t str, lang: &str) -> Result<Option<&'t str>, String> {
    let mut outer = false;
    let mut start = None;
    for (at, next, line) in lines_with_offsets(text) {
        if let Some(s) = start {
            if line.trim_end() == "```" {
                return Ok(Some(&text[s..at]));
            }
            continue;
        }
        if line.starts_with("````") {
            outer = !outer;
            continue;
        }
        if !outer
            && line
                .strip_prefix("```")
                .and_then(|r| r.strip_prefix(lang))
                .is_some_and(|r| r.trim().is_empty())
        {
            start = Some(next);
        }
    }
    match start {
        Some(_) => Err(format!("the ```{lang} block is not closed by a ``` line")),
        None => Ok(None),
    }
}

/// Attributes of an XML start tag's text (after the element name, before `>`).
fn xml_attributes(tag: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = tag.trim_start();
    while !rest.is_empty() && rest != "/" {
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("Invalid XML: attribute without a value near `{rest}`"))?;
        let name = rest[..eq].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("Invalid XML: bad attribute near `{rest}`"));
        }
        let after = rest[eq + 1..].trim_start();
        let quote = after
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| format!("Invalid XML: the value of `{name}` is not quoted"))?;
        let close = after[1..]
            .find(quote)
            .ok_or_else(|| format!("Invalid XML: the value of `{name}` is not closed"))?;
        out.push((name.to_owned(), unescape(&after[1..1 + close])));
        rest = after[close + 2..].trim_start();
    }
    Ok(out)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The text of the first `<tag>…</tag>` element in `xml`.
fn element_text(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&close)? + start;
    Some(unescape(xml[start..end].trim()))
}

/// A directive's fields: the `<directive name version>` attributes and `description`/`category`
/// elements of the ```` ```xml ```` block (§12.5).
pub fn directive_fields(text: &str) -> Result<Fields, DocError> {
    let invalid = |detail: String| DocError {
        error: "Invalid directive structure",
        detail,
    };
    let xml = fenced_block(text, "xml")
        .map_err(invalid)?
        .ok_or_else(|| invalid("No XML code block found".to_owned()))?
        .trim();
    let Some(tag) = xml.strip_prefix("<directive") else {
        return Err(invalid(
            "the ```xml block does not start with a <directive> element".to_owned(),
        ));
    };
    if !tag.starts_with([' ', '\t', '\n', '\r', '>', '/']) {
        return Err(invalid(
            "the ```xml block does not start with a <directive> element".to_owned(),
        ));
    }
    let end = tag
        .find('>')
        .ok_or_else(|| invalid("Invalid XML: the <directive> tag is not closed".to_owned()))?;
    let attrs = xml_attributes(&tag[..end]).map_err(invalid)?;
    if !xml.ends_with("</directive>") {
        return Err(invalid(
            "Invalid XML: the block does not end with </directive>".to_owned(),
        ));
    }
    let attr = |n: &str| {
        attrs
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| serde_json::Value::String(v.clone()))
    };
    Ok(vec![
        ("name", attr("name")),
        ("version", attr("version")),
        (
            "description",
            attr("description")
                .or_else(|| element_text(xml, "description").map(serde_json::Value::String)),
        ),
        (
            "category",
            attr("category")
                .or_else(|| element_text(xml, "category").map(serde_json::Value::String)),
        ),
    ])
}

/// A knowledge entry's fields from its ```` ```yaml ```` block or `---` frontmatter (§12.6).
pub fn knowledge_fields(text: &str) -> Result<Fields, DocError> {
    let invalid = |detail: String| DocError {
        error: "Validation failed",
        detail,
    };
    // Skip a leading signature comment line.
    let body = match text.strip_prefix("<!--") {
        Some(_) => text.find('\n').map_or("", |i| &text[i + 1..]),
        None => text,
    };
    let yaml = match fenced_block(body, "yaml").map_err(invalid)? {
        Some(block) => block.to_owned(),
        None => {
            let trimmed = body.trim_start();
            let Some(rest) = trimmed.strip_prefix("---") else {
                return Err(invalid(
                    "no metadata: add a ```yaml block (or --- frontmatter) with name, title, version and entry_type".to_owned(),
                ));
            };
            let close = rest
                .find("\n---")
                .ok_or_else(|| invalid("the --- frontmatter is not closed".to_owned()))?;
            rest[..close].to_owned()
        }
    };
    let doc: serde_yaml::Value = crate::parse::guard::yaml_from_str(&yaml)
        .map_err(|e| invalid(format!("the metadata is not valid YAML: {e}")))?;
    let Some(map) = doc.as_mapping() else {
        return Err(invalid("the metadata is not a YAML mapping".to_owned()));
    };
    let get = |k: &str| {
        map.get(k)
            .and_then(|v| serde_json::to_value(v).ok())
            .filter(|v| !v.is_null())
    };
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
