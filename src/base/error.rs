//! L0 the execution error vocabulary (§14.53): the reference's `ToolExecutionError` family —
//! integrity, lockfile, configuration and validation errors — as one enum whose variants carry
//! the `path` / `field` the reference attaches, with the reference's texts.

use std::path::PathBuf;

/// An error that stops a tool's execution (`ToolExecutionError` and its subclasses).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecutionError {
    /// `IntegrityError`: a chain element or verify_deps file failed verification (§10.5).
    #[error("{message}")]
    Integrity { path: PathBuf, message: String },
    /// `LockfileError`: a lockfile could not be read, or no longer matches (§10.7).
    #[error("{message}")]
    Lockfile {
        path: Option<PathBuf>,
        message: String,
    },
    /// `ConfigurationError`: a setting is missing or wrong.
    #[error("{message}")]
    Configuration { field: String, message: String },
    /// `ValidationError`: `ValidationError: <field> - <error> (got <repr>)`.
    #[error("ValidationError: {field} - {error} (got {got})")]
    Validation {
        field: String,
        error: String,
        /// The offending value as Python's `repr` shows it.
        got: String,
    },
}

impl ExecutionError {
    /// The reference's class name.
    pub fn class(&self) -> &'static str {
        match self {
            ExecutionError::Integrity { .. } => "IntegrityError",
            ExecutionError::Lockfile { .. } => "LockfileError",
            ExecutionError::Configuration { .. } => "ConfigurationError",
            ExecutionError::Validation { .. } => "ValidationError",
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pyrepr::py_repr;

    /// §14.53: the error classes carry `path` / `field`; ValidationError's text format.
    #[test]
    fn s53_error_classes_and_texts() {
        let e = ExecutionError::Validation {
            field: "timeout".into(),
            error: "must be positive".into(),
            got: py_repr(&json!(-1)),
        };
        assert_eq!(
            e.to_string(),
            "ValidationError: timeout - must be positive (got -1)"
        );
        assert_eq!(e.class(), "ValidationError");
        let e = ExecutionError::Integrity {
            path: PathBuf::from("/p/.ai/tools/x.py"),
            message: "Unsigned item: /p/.ai/tools/x.py".into(),
        };
        assert_eq!(e.to_string(), "Unsigned item: /p/.ai/tools/x.py");
        assert!(matches!(&e, ExecutionError::Integrity { path, .. } if path.ends_with("x.py")));
        let e = ExecutionError::Configuration {
            field: "RYE_PYTHON".into(),
            message: "no interpreter".into(),
        };
        assert_eq!(e.class(), "ConfigurationError");
        let e = ExecutionError::Lockfile {
            path: None,
            message: "Missing required field: root".into(),
        };
        assert_eq!(e.class(), "LockfileError");
    }
}
