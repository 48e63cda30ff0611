//! `file://` URIs ⇄ paths (RFC 8089 for local files): percent-encoding of everything but the
//! unreserved characters and `/`, decoding of any escape, `localhost` as the empty host.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The `file://` URI of an absolute path; `None` for a relative or non-UTF-8 path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let s = path.to_str()?;
    if !s.starts_with('/') {
        return None;
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str("file://");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&out).ok()
}

/// The path of a `file:` URI (empty or `localhost` host); `None` for other schemes, other hosts,
/// bad escapes or a path that does not decode to UTF-8.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s
        .strip_prefix("file://")
        .or_else(|| s.strip_prefix("FILE://"))?;
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        _ => return None,
    };
    // A query or fragment is not part of a file path.
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = path.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let decoded = String::from_utf8(out).ok()?;
    // No NUL in a path, and nothing that escapes upwards lexically.
    if decoded.contains('\0') {
        return None;
    }
    Some(PathBuf::from(decoded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_and_escaped_paths() {
        let uri = from_path(Path::new("/home/me/a b/ü#x.py")).unwrap();
        assert_eq!(uri.as_str(), "file:///home/me/a%20b/%C3%BC%23x.py");
        assert_eq!(to_path(&uri).unwrap(), PathBuf::from("/home/me/a b/ü#x.py"));
        let local = Uri::from_str("file://localhost/tmp/x%2Dy.yaml").unwrap();
        assert_eq!(to_path(&local).unwrap(), PathBuf::from("/tmp/x-y.yaml"));
        assert!(from_path(Path::new("relative/x")).is_none());
        for bad in [
            "https://example.com/x",
            "file://otherhost/x",
            "file:///bad%zz",
            "file:///nul%00",
            "untitled:Untitled-1",
        ] {
            let parsed = Uri::from_str(bad).ok();
            assert!(parsed.and_then(|u| to_path(&u)).is_none(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn round_trip(parts in proptest::collection::vec("[^/\\x00]{1,12}", 1..5)) {
            let path = PathBuf::from(format!("/{}", parts.join("/")));
            let uri = from_path(&path).expect("an absolute UTF-8 path has a URI");
            prop_assert_eq!(to_path(&uri), Some(path));
        }
    }
}
