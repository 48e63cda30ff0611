//! L3 a directive parsed (§12.5): the markdown around one ```` ```xml ```` block, the block's
//! `<directive>` element read with a real XML parser (`roxmltree`), with the byte spans of what a
//! diagnostic points at. What lint, `sign`, `exec` and the MCP server read of a directive.

use std::ops::Range;

use crate::model::Span;

/// A directive's parts, its text interpolated or not (`exec::directive` fills the inputs in).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Directive {
    /// The `<directive` of the start tag.
    pub tag: Span,
    pub name: Option<Attr>,
    pub version: Option<Attr>,
    pub extends: Option<String>,
    pub description: Option<String>,
    /// `metadata/category` (an empty category is allowed).
    pub category: Option<String>,
    /// The other `metadata/*` elements that hold text, in order.
    pub metadata: Vec<(String, String)>,
    /// `metadata/model`'s attributes.
    pub model: Vec<(String, String)>,
    /// `metadata/limits`' attributes (numbers as written).
    pub limits: Vec<(String, String)>,
    /// Capabilities, `rye.<action>.<type>.<id>` (`*` shortcuts spelled out as wildcards).
    pub permissions: Vec<String>,
    pub inputs: Vec<Input>,
    pub outputs: Vec<Output>,
    /// Every `execute`, `search`, `load` and `sign` element outside `metadata`, in order.
    pub actions: Vec<Action>,
    /// `<template>`, `<example>` and `<raw>` bodies, kept as written (their text is not XML).
    pub templates: Vec<(String, String)>,
    /// The XML block.
    pub content: String,
    /// Markdown before the block.
    pub preamble: String,
    /// Markdown after the block.
    pub after: String,
}

/// An attribute's value and where it is in the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attr {
    pub value: String,
    pub span: Span,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    /// `string` unless declared.
    pub kind: String,
    pub required: bool,
    pub default: Option<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub name: String,
    pub kind: String,
    pub required: bool,
    pub description: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Action {
    /// `execute`, `search`, `load` or `sign`.
    pub kind: String,
    pub attributes: Vec<(String, String)>,
    /// `<param name value>` (or the param's text).
    pub params: Vec<(String, String)>,
}

/// Why a directive cannot be read: the reference's words and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectiveError {
    pub message: String,
    pub span: Option<Span>,
}

/// Elements whose bodies are text, not XML: masked before the XML is parsed (§12.5).
const VERBATIM: [&str; 3] = ["template", "example", "raw"];
/// Elements that are actions.
const ACTIONS: [&str; 4] = ["execute", "search", "load", "sign"];

/// A line's start, the start of the next, and the line without its newline.
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, at, l.trim_end_matches(['\n', '\r']))
    })
}

/// A fenced block: its opening line, its body, and the end of its closing line (byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    pub open: Range<usize>,
    pub body: Range<usize>,
    pub close_end: usize,
}

/// The first ```` ```<lang> ```` fence not inside a 4+-backtick fence (§12.5, §12.6). `Err` when
/// it is not closed: what is wrong, and the opening line's span.
pub fn fence(text: &str, lang: &str) -> Result<Option<Fence>, (String, Span)> {
    let mut outer = false;
    let mut open: Option<Range<usize>> = None;
    for (at, next, line) in lines_with_offsets(text) {
        if let Some(o) = &open {
            if line.trim_end() == "```" {
                return Ok(Some(Fence {
                    open: o.clone(),
                    body: o.end..at,
                    close_end: next,
                }));
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
            open = Some(at..next);
        }
    }
    match open {
        Some(o) => Err((
            format!("the ```{lang} block is not closed by a ``` line"),
            Span::new(o.start, o.start + 3 + lang.len()),
        )),
        None => Ok(None),
    }
}

/// `xml` with the bodies of verbatim elements replaced by spaces (offsets kept), and the bodies.
fn mask_verbatim(xml: &str) -> (String, Vec<(String, String)>) {
    let mut masked = xml.to_owned();
    let mut bodies = Vec::new();
    let mut from = 0;
    while from < xml.len() {
        let next = VERBATIM
            .iter()
            .filter_map(|tag| {
                let open = format!("<{tag}");
                let mut at = from;
                while let Some(i) = xml[at..].find(&open) {
                    let i = at + i;
                    // `<templates>` is not `<template>`.
                    if xml[i + open.len()..].starts_with(['>', ' ', '\t', '\n', '\r']) {
                        return Some((i, *tag));
                    }
                    at = i + open.len();
                }
                None
            })
            .min();
        let Some((start, tag)) = next else { break };
        let Some(gt) = xml[start..].find('>').map(|g| start + g + 1) else {
            break;
        };
        if xml[..gt].ends_with("/>") {
            from = gt;
            continue;
        }
        let close = format!("</{tag}>");
        let Some(end) = xml[gt..].find(&close).map(|e| gt + e) else {
            break;
        };
        bodies.push((tag.to_owned(), xml[gt..end].to_owned()));
        // Same length, so every offset the parser reports stays the file's.
        let blank: String = xml[gt..end]
            .chars()
            .flat_map(|c| match c {
                '\n' => std::iter::repeat_n('\n', 1),
                c => std::iter::repeat_n(' ', c.len_utf8()),
            })
            .collect();
        masked.replace_range(gt..end, &blank);
        from = end + close.len();
    }
    (masked, bodies)
}

fn bool_attr(v: Option<&str>) -> bool {
    matches!(
        v.map(str::trim).map(str::to_ascii_lowercase).as_deref(),
        Some("true" | "yes" | "1")
    )
}

/// The trimmed text of an element (its text children joined).
fn text_of(node: roxmltree::Node<'_, '_>) -> String {
    node.children()
        .filter(|c| c.is_text())
        .filter_map(|c| c.text())
        .collect::<String>()
        .trim()
        .to_owned()
}

fn attributes(node: roxmltree::Node<'_, '_>) -> Vec<(String, String)> {
    node.attributes()
        .map(|a| (a.name().to_owned(), a.value().to_owned()))
        .collect()
}

/// The capabilities a `<permissions>` element grants: `<cap>` texts as written, `<execute>
/// <tool>id</tool></execute>` as `rye.execute.tool.id`, and `*` for "everything below".
fn permissions(node: roxmltree::Node<'_, '_>) -> Vec<String> {
    let mut out = Vec::new();
    if text_of(node) == "*" {
        out.push("rye.*".to_owned());
    }
    for action in node.children().filter(|c| c.is_element()) {
        let a = action.tag_name().name();
        if a == "cap" {
            out.push(text_of(action));
            continue;
        }
        if text_of(action) == "*" {
            out.push(format!("rye.{a}.*"));
        }
        for kind in action.children().filter(|c| c.is_element()) {
            let id = text_of(kind);
            let id = if id.is_empty() { "*".to_owned() } else { id };
            out.push(format!("rye.{a}.{}.{id}", kind.tag_name().name()));
        }
    }
    out
}

/// Parse a directive's text (the whole file, signature line included or not).
pub fn parse_directive(text: &str) -> Result<Directive, DirectiveError> {
    let Fence {
        open,
        body,
        close_end,
    } = match fence(text, "xml") {
        Ok(Some(f)) => f,
        Ok(None) => {
            return Err(DirectiveError {
                message: "No XML code block found".to_owned(),
                span: None,
            });
        }
        Err((message, span)) => {
            return Err(DirectiveError {
                message,
                span: Some(span),
            });
        }
    };
    let xml = &text[body.clone()];
    let (masked, templates) = mask_verbatim(xml);
    let at = |r: Range<usize>| Span::new(body.start + r.start, body.start + r.end);
    let doc = roxmltree::Document::parse(&masked).map_err(|e| {
        let pos = e.pos();
        // The parser's row and column (1-based, columns in characters) back to a byte offset.
        let offset = masked
            .split_inclusive('\n')
            .take(pos.row.saturating_sub(1) as usize)
            .map(str::len)
            .sum::<usize>();
        let line = masked[offset..].lines().next().unwrap_or("");
        let col = line
            .char_indices()
            .nth(pos.col.saturating_sub(1) as usize)
            .map_or(line.len(), |(i, _)| i);
        // The parser's own text ends with its position in the block; the span says where.
        let text = e.to_string();
        let text = text.rsplit_once(" at ").map_or(text.as_str(), |(t, _)| t);
        DirectiveError {
            message: format!("Invalid XML: {text}"),
            span: Some(Span::new(
                body.start + offset + col,
                body.start + offset + col,
            )),
        }
    })?;
    let root = doc.root_element();
    let tag = at(root.range().start..root.range().start + 1 + root.tag_name().name().len());
    if root.tag_name().name() != "directive" {
        return Err(DirectiveError {
            message: format!(
                "the root element is <{}>, not <directive>",
                root.tag_name().name()
            ),
            span: Some(tag),
        });
    }
    let attr = |n: &str| {
        root.attribute_node(n).map(|a| Attr {
            value: a.value().to_owned(),
            span: at(a.range_value()),
        })
    };
    let mut d = Directive {
        tag,
        name: attr("name"),
        version: attr("version"),
        extends: root.attribute("extends").map(str::to_owned),
        description: root.attribute("description").map(str::to_owned),
        templates,
        content: xml.to_owned(),
        preamble: text[..open.start].to_owned(),
        after: text[close_end..].to_owned(),
        ..Directive::default()
    };
    for child in root.children().filter(|c| c.is_element()) {
        match child.tag_name().name() {
            "metadata" => {
                for m in child.children().filter(|c| c.is_element()) {
                    match m.tag_name().name() {
                        "description" => {
                            d.description.get_or_insert_with(|| text_of(m));
                        }
                        "category" => d.category = Some(text_of(m)),
                        "model" => d.model = attributes(m),
                        "limits" => d.limits = attributes(m),
                        "permissions" => d.permissions = permissions(m),
                        other => {
                            let t = text_of(m);
                            if !t.is_empty() {
                                d.metadata.push((other.to_owned(), t));
                            }
                        }
                    }
                }
            }
            "inputs" => {
                for i in child.children().filter(|c| c.has_tag_name("input")) {
                    let desc = text_of(i);
                    d.inputs.push(Input {
                        name: i.attribute("name").unwrap_or_default().to_owned(),
                        kind: i.attribute("type").unwrap_or("string").to_owned(),
                        required: bool_attr(i.attribute("required")),
                        default: i.attribute("default").map(str::to_owned),
                        description: i
                            .attribute("description")
                            .map(str::to_owned)
                            .or((!desc.is_empty()).then_some(desc)),
                    });
                }
            }
            "outputs" => {
                for o in child.children().filter(|c| c.has_tag_name("output")) {
                    let desc = text_of(o);
                    d.outputs.push(Output {
                        name: o.attribute("name").unwrap_or_default().to_owned(),
                        kind: o.attribute("type").unwrap_or("string").to_owned(),
                        required: bool_attr(o.attribute("required")),
                        description: o
                            .attribute("description")
                            .map(str::to_owned)
                            .or((!desc.is_empty()).then_some(desc)),
                    });
                }
            }
            _ => {}
        }
    }
    // Actions anywhere outside `metadata`, in document order.
    for node in root.descendants().filter(|n| n.is_element()) {
        if !ACTIONS.contains(&node.tag_name().name())
            || node.ancestors().any(|a| a.has_tag_name("metadata"))
        {
            continue;
        }
        let params = node
            .children()
            .filter(|c| c.has_tag_name("param"))
            .map(|p| {
                let value = p
                    .attribute("value")
                    .map_or_else(|| text_of(p), str::to_owned);
                (p.attribute("name").unwrap_or_default().to_owned(), value)
            })
            .collect();
        d.actions.push(Action {
            kind: node.tag_name().name().to_owned(),
            attributes: attributes(node),
            params,
        });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKFLOW: &str = r#"<!-- rye:signed:x -->
# Workflow

Intro.

```xml
<directive name="workflow" version="1.0.0">
  <metadata>
    <description>Run the flow</description>
    <category>demo</category>
    <model tier="fast"/>
    <limits turns="10" spend="0.5"/>
    <permissions>
      <execute><tool>rye.file-system.*</tool></execute>
      <cap>rye.search.*</cap>
    </permissions>
    <author>me</author>
  </metadata>
  <inputs>
    <input name="topic" type="string" required="true">What to research</input>
    <input name="mode" default="overview"/>
  </inputs>
  <process>
    <step name="one">
      <execute item_type="tool" item_id="rye/file-system/write">
        <param name="path" value="{input:out}"/>
        <param name="content">{input:data?}</param>
      </execute>
      <search query="{input:q}"/>
    </step>
    <template>if a < b then {input:topic} & more</template>
  </process>
  <outputs>
    <output name="result" type="string" required="true"/>
  </outputs>
</directive>
```

After.
"#;

    #[test]
    fn s12_5_fields_of_a_directive() {
        let d = parse_directive(WORKFLOW).unwrap();
        let name = d.name.as_ref().unwrap();
        assert_eq!(name.value, "workflow");
        assert_eq!(
            &WORKFLOW[name.span.start as usize..name.span.end as usize],
            "workflow"
        );
        assert_eq!(d.version.as_ref().unwrap().value, "1.0.0");
        assert_eq!(d.description.as_deref(), Some("Run the flow"));
        assert_eq!(d.category.as_deref(), Some("demo"));
        assert_eq!(d.model, vec![("tier".into(), "fast".into())]);
        assert_eq!(d.limits.len(), 2);
        assert_eq!(
            d.permissions,
            vec!["rye.execute.tool.rye.file-system.*", "rye.search.*"]
        );
        assert_eq!(d.metadata, vec![("author".into(), "me".into())]);
        assert_eq!(d.inputs.len(), 2);
        assert!(d.inputs[0].required);
        assert_eq!(d.inputs[0].description.as_deref(), Some("What to research"));
        assert_eq!(d.inputs[1].default.as_deref(), Some("overview"));
        assert_eq!(d.inputs[1].kind, "string");
        assert_eq!(d.actions.len(), 2);
        assert_eq!(d.actions[0].kind, "execute");
        assert_eq!(
            d.actions[0].params,
            vec![
                ("path".into(), "{input:out}".into()),
                ("content".into(), "{input:data?}".into())
            ]
        );
        assert_eq!(
            d.actions[1].attributes,
            vec![("query".into(), "{input:q}".into())]
        );
        // The template's body is not XML (`<`, `&`): masked, kept as written.
        assert_eq!(
            d.templates,
            vec![(
                "template".into(),
                "if a < b then {input:topic} & more".into()
            )]
        );
        assert_eq!(d.outputs[0].name, "result");
        assert!(d.preamble.contains("# Workflow"));
        assert_eq!(d.after.trim(), "After.");
    }

    #[test]
    fn s12_5_errors_say_what_is_wrong_and_where() {
        let e = parse_directive("# just text\n").unwrap_err();
        assert_eq!(e.message, "No XML code block found");
        let bad = "```xml\n<directive name=\"x\">\n  <a>\n</directive>\n```\n";
        let e = parse_directive(bad).unwrap_err();
        assert!(e.message.starts_with("Invalid XML: "), "{}", e.message);
        let at = e.span.unwrap().start as usize;
        assert!(bad[at..].starts_with("</directive>"), "{:?}", &bad[at..]);
        let e = parse_directive("```xml\n<tool name=\"x\"/>\n```\n").unwrap_err();
        assert!(e.message.contains("not <directive>"), "{}", e.message);
        assert!(parse_directive("```xml\n<directive name=\"x\">\n").is_err());
        // A fence inside a 4-backtick fence is an example, not the block.
        let quoted = "````\n```xml\n<directive/>\n```\n````\n";
        assert_eq!(
            parse_directive(quoted).unwrap_err().message,
            "No XML code block found"
        );
    }

    #[test]
    fn masking_keeps_offsets_with_multibyte_text() {
        let text = "```xml\n<directive name=\"x\"><raw>é < ü</raw><bad></directive>\n```\n";
        let e = parse_directive(text).unwrap_err();
        let at = e.span.unwrap().start as usize;
        assert!(text.is_char_boundary(at));
        assert!(text[at..].starts_with("</directive>"), "{:?}", &text[at..]);
    }
}
