//! L0 what the build compiled into the binary: the rule files (and their JSON), the system bundle
//! (and the JSON of its YAML extractors). Data only; `build.rs` writes it.

pub mod data {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The rule files compiled into the binary: (`<family>/<id>.yaml`, text).
pub fn embedded_rule_files() -> &'static [(&'static str, &'static str)] {
    data::RULE_FILES
}

/// The system bundle compiled into the binary: (path relative to the repo, bytes).
pub fn embedded_system_files() -> &'static [(&'static str, &'static [u8])] {
    data::SYSTEM_FILES
}

/// The document of an embedded YAML file of the bundle converted at build time (JSON that reads
/// back as the same `serde_yaml::Value`), when `text` is exactly that file's text.
pub fn prebuilt_yaml_json(text: &str) -> Option<&'static str> {
    data::SYSTEM_YAML_JSON.iter().find_map(|(rel, json)| {
        let (_, bytes) = data::SYSTEM_FILES.iter().find(|(r, _)| r == rel)?;
        (!json.is_empty() && text.as_bytes() == *bytes).then_some(*json)
    })
}
