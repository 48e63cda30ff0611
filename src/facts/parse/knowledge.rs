//! L3 a knowledge entry parsed (§12.6): its metadata from a ```` ```yaml ```` fence, `---`
//! frontmatter (accepted, as §12.6's compatibility decision says) or a whole YAML file, and its
//! body. What lint, `sign`, `exec` and the MCP server read of a knowledge entry.

use serde_json::{Map, Value as Json};

use crate::model::Span;

/// Where the metadata was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frontmatter {
    /// A ```` ```yaml ```` fence; the body is the text after it.
    Fenced,
    /// `---` lines around it; the body is the text after the closing one.
    Dashes,
    /// The whole file is YAML (after its signature line); there is no body.
    WholeYaml,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Knowledge {
    /// The metadata's keys, in the order written.
    pub metadata: Map<String, Json>,
    pub body: String,
    /// The file without its signature line.
    pub raw: String,
    pub frontmatter: Frontmatter,
}

/// Why an entry cannot be read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnowledgeError {
    pub message: String,
    pub span: Option<Span>,
}

/// The length of a leading signature comment line (`<!-- … -->` and its newline), or 0.
fn signature_line(text: &str) -> usize {
    if !text.starts_with("<!--") {
        return 0;
    }
    let line = text.find('\n').map_or(text.len(), |i| i + 1);
    if text[..line].trim_end().ends_with("-->") {
        line
    } else {
        0
    }
}

/// `key: value` lines, the reference's naive reader of `---` frontmatter (inline `[a, b]` lists
/// only): what is left when the frontmatter is not YAML.
fn naive_frontmatter(text: &str) -> Map<String, Json> {
    let mut out = Map::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || k.starts_with('#') {
            continue;
        }
        let value = match v.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            Some(items) => Json::Array(
                items
                    .split(',')
                    .map(|i| Json::from(i.trim().trim_matches(['"', '\''])))
                    .filter(|i| i.as_str().is_some_and(|s| !s.is_empty()))
                    .collect(),
            ),
            None => Json::from(v.trim_matches(['"', '\''])),
        };
        out.insert(k.to_owned(), value);
    }
    out
}

fn yaml_mapping(yaml: &str, at: usize) -> Result<Map<String, Json>, KnowledgeError> {
    use crate::parse::guard::YamlError;
    let doc: serde_yaml::Value = crate::parse::guard::yaml_from_str(yaml).map_err(|e| {
        // Where the YAML parser stopped, in the file; its text without the block's own position.
        let (message, span) = match &e {
            YamlError::Syntax(s) => {
                let text = s.to_string();
                let text = text
                    .split_once(" at line ")
                    .map_or(text.as_str(), |(t, _)| t);
                let stop = s.location().map_or(0, |l| l.index().min(yaml.len()));
                let stop = (0..=stop)
                    .rev()
                    .find(|i| yaml.is_char_boundary(*i))
                    .unwrap_or(0);
                (text.to_owned(), Span::new(at + stop, at + stop))
            }
            other => (other.to_string(), Span::new(at, at + yaml.len())),
        };
        KnowledgeError {
            message: format!("the metadata is not valid YAML: {message}"),
            span: Some(span),
        }
    })?;
    match doc {
        serde_yaml::Value::Mapping(_) => match serde_json::to_value(&doc) {
            Ok(Json::Object(m)) => Ok(m),
            _ => Err(KnowledgeError {
                message: "the metadata has keys that are not strings".to_owned(),
                span: Some(Span::new(at, at + yaml.len())),
            }),
        },
        serde_yaml::Value::Null => Ok(Map::new()),
        _ => Err(KnowledgeError {
            message: "the metadata is not a YAML mapping".to_owned(),
            span: Some(Span::new(at, at + yaml.len())),
        }),
    }
}

/// Parse an entry's text: a ```` ```yaml ```` fence, else `---` frontmatter, else the whole text as
/// a YAML mapping.
pub fn parse_knowledge(text: &str) -> Result<Knowledge, KnowledgeError> {
    let skip = signature_line(text);
    let rest = &text[skip..];
    let raw = rest.to_owned();
    {
        match super::directive::fence(rest, "yaml") {
            Ok(Some(super::directive::Fence {
                body, close_end, ..
            })) => {
                return Ok(Knowledge {
                    metadata: yaml_mapping(&rest[body.clone()], skip + body.start)?,
                    body: rest[close_end..].trim().to_owned(),
                    raw,
                    frontmatter: Frontmatter::Fenced,
                });
            }
            Ok(None) => {}
            Err((message, span)) => {
                return Err(KnowledgeError {
                    message,
                    span: Some(span.shifted(u32::try_from(skip).unwrap_or(u32::MAX))),
                });
            }
        }
        let lead = rest.len() - rest.trim_start().len();
        if let Some(after) = rest[lead..].strip_prefix("---") {
            let start = skip + lead + 3;
            let Some(close) = after.find("\n---") else {
                return Err(KnowledgeError {
                    message: "the --- frontmatter is not closed by a --- line".to_owned(),
                    span: Some(Span::new(skip + lead, start)),
                });
            };
            let yaml = &after[..close];
            let body_from = close + 4;
            let body = after[body_from..].split_once('\n').map_or("", |(_, b)| b);
            let metadata = yaml_mapping(yaml, start).unwrap_or_else(|_| naive_frontmatter(yaml));
            return Ok(Knowledge {
                metadata,
                body: body.trim().to_owned(),
                raw,
                frontmatter: Frontmatter::Dashes,
            });
        }
    }
    // Neither form: the whole text must be a YAML mapping.
    match yaml_mapping(rest, skip) {
        Ok(metadata) if !metadata.is_empty() => Ok(Knowledge {
            metadata,
            body: String::new(),
            raw,
            frontmatter: Frontmatter::WholeYaml,
        }),
        _ => Err(KnowledgeError {
            message: "no metadata: add a ```yaml block (or --- frontmatter) with name, title, version and entry_type".to_owned(),
            span: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn s12_6_fenced_yaml() {
        let text = "<!-- rye:signed:x -->\n# Title\n\n```yaml\nname: e\ntitle: T\nversion: \"1.0.0\"\n```\n\nThe body.\n";
        let k = parse_knowledge(text).unwrap();
        assert_eq!(k.frontmatter, Frontmatter::Fenced);
        assert_eq!(k.metadata["title"], json!("T"));
        assert_eq!(k.body, "The body.");
        assert!(!k.raw.contains("rye:signed"));
    }

    /// §14 #14: a signed `---` entry is read (the compatibility decision of §12.6).
    #[test]
    fn s14_14_dash_frontmatter_after_a_signature() {
        let text = "<!-- rye:signed:x -->\n---\ntitle: Test Entry\nid: entry\n---\n\nContent here";
        let k = parse_knowledge(text).unwrap();
        assert_eq!(k.frontmatter, Frontmatter::Dashes);
        assert_eq!(k.metadata["title"], json!("Test Entry"));
        assert_eq!(k.metadata["id"], json!("entry"));
        assert_eq!(k.body, "Content here");
    }

    #[test]
    fn dash_frontmatter_that_is_not_yaml_falls_back_to_lines() {
        let text = "---\ntitle: a: b\ntags: [x, y]\n---\nbody";
        let k = parse_knowledge(text).unwrap();
        assert_eq!(k.metadata["tags"], json!(["x", "y"]));
        assert_eq!(k.metadata["title"], json!("a: b"));
    }

    #[test]
    fn whole_yaml_entries_and_errors() {
        let k = parse_knowledge("<!-- sig -->\nname: e\ntitle: T\n").unwrap();
        assert_eq!(k.frontmatter, Frontmatter::WholeYaml);
        assert_eq!(k.metadata["name"], json!("e"));
        let e = parse_knowledge("plain text\n").unwrap_err();
        assert!(e.message.starts_with("no metadata"), "{}", e.message);
        let e = parse_knowledge("```yaml\nname: [\n```\n").unwrap_err();
        assert!(e.message.contains("not valid YAML"), "{}", e.message);
        assert!(e.span.is_some());
        assert!(parse_knowledge("---\ntitle: x\n").is_err());
        assert!(parse_knowledge("```yaml\n- a\n```\n").is_err());
    }
}
