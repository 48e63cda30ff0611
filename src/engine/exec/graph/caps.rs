//! L5 the state graph's capabilities, fail-closed (the upstream's `_check_permission`): an
//! action `execute` of a `tool` `a/b` needs `rye.execute.tool.a.b`, granted by a capability
//! that matches it as Python's `fnmatch` matches (`*`, `?`, `[seq]`, `[!seq]`); no capabilities
//! deny everything. Pure.

/// The capability an action needs.
pub fn required(primary: &str, item_type: &str, item_id: &str) -> String {
    if item_id.is_empty() {
        format!("rye.{primary}.{item_type}")
    } else {
        format!("rye.{primary}.{item_type}.{}", item_id.replace('/', "."))
    }
}

/// Python's `fnmatch.translate` as a regex (POSIX: case-sensitive).
fn translate(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::from("^(?s:");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                out.push_str(".*");
            }
            '?' => out.push('.'),
            '[' => {
                // A class runs to the next `]` (a `]` first, or after `!`, is literal).
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
                    out.push_str("\\[");
                } else {
                    let body: String = chars[i..j].iter().collect();
                    let (neg, body) = match body.strip_prefix('!') {
                        Some(rest) => (true, rest.to_owned()),
                        None => (false, body),
                    };
                    let body = body.replace('\\', "\\\\").replace('[', "\\[");
                    out.push('[');
                    if neg {
                        out.push('^');
                    } else if body.starts_with('^') {
                        out.push('\\');
                    }
                    out.push_str(&body);
                    out.push(']');
                    i = j + 1;
                }
            }
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push_str(")$");
    out
}

/// Whether `name` matches the `fnmatch` pattern.
pub fn fnmatch(name: &str, pattern: &str) -> bool {
    regex::Regex::new(&translate(pattern)).is_ok_and(|re| re.is_match(name))
}

/// `None` when one of `capabilities` grants what the action needs, else the refusal's text.
pub fn denied(
    capabilities: &[String],
    primary: &str,
    item_type: &str,
    item_id: &str,
) -> Option<String> {
    let need = required(primary, item_type, item_id);
    if capabilities.is_empty() {
        return Some(format!(
            "Permission denied: no capabilities. Cannot {primary} {item_type} '{item_id}' (a graph runs nothing it is not granted: pass `capabilities`, e.g. [\"{need}\"], or declare them in the graph's `permissions`)"
        ));
    }
    if capabilities.iter().any(|c| fnmatch(&need, c)) {
        return None;
    }
    Some(format!(
        "Permission denied: '{need}' not covered by capabilities"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_as_python() {
        assert!(fnmatch("rye.execute.tool.demo.x", "rye.execute.tool.*"));
        assert!(fnmatch("rye.execute.tool.demo.x", "*"));
        assert!(fnmatch(
            "rye.execute.tool.demo.x",
            "rye.execute.tool.demo.?"
        ));
        assert!(fnmatch(
            "rye.execute.tool.demo.x",
            "rye.execute.tool.demo.[a-x]"
        ));
        assert!(!fnmatch(
            "rye.execute.tool.demo.x",
            "rye.execute.tool.demo.[!x]"
        ));
        assert!(!fnmatch(
            "rye.execute.tool.demo.x",
            "rye.execute.tool.other.*"
        ));
        assert!(!fnmatch("rye.execute.tool.demo.x", "rye.execute.tool.demo"));
        assert!(!fnmatch("rye.executeXtool", "rye.execute.tool"));
        assert!(fnmatch("a[b", "a[b"));
        assert!(!fnmatch("RYE.x", "rye.*"));
    }

    #[test]
    fn fail_closed() {
        assert!(
            denied(&[], "execute", "tool", "demo/x")
                .unwrap()
                .contains("no capabilities")
        );
        let caps = vec!["rye.execute.tool.demo.*".to_owned()];
        assert_eq!(denied(&caps, "execute", "tool", "demo/x"), None);
        assert!(
            denied(&caps, "execute", "tool", "rye/bash")
                .unwrap()
                .contains("'rye.execute.tool.rye.bash'")
        );
        assert!(denied(&caps, "execute", "directive", "demo/x").is_some());
    }
}
