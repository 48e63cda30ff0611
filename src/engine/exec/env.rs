//! L5 the process environment of a chain (§5 ENV_CONFIG): `.env` parsing, interpreter
//! resolution for every interpreter type, static env values and the chain merge. Pure: the OS
//! environment, files and command outputs come from `facts::Ask`; an unanswered question makes
//! the result `EnvOutcome::Pending` and the planner asks the edge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::facts::{Ask, PathKind};
use super::template::{expand_env, fill_names, py_str};

pub use crate::rules::checks::INTERPRETER_TYPES;

/// One chain element as the env merge sees it.
#[derive(Clone, Copy, Debug)]
pub struct EnvElement<'a> {
    pub item_id: &'a str,
    /// The element's `env_config` (JSON view of the metadata value), if any.
    pub env_config: Option<&'a Value>,
}

/// The environment keys one element set (trace event `resolve_env`, §11.2): its interpreter var
/// and its static `env` keys, sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contribution {
    pub item_id: String,
    pub keys: Vec<String>,
}

/// The merged environment and who contributed what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainEnv {
    /// The complete process environment (OS env, project `.env`, then every element).
    pub env: BTreeMap<String, String>,
    /// One entry per element with an `env_config`, in merge order (primitive → tool).
    pub contributions: Vec<Contribution>,
}

/// An interpreter that could not be resolved and has no fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// The element that declares the interpreter.
    pub item_id: String,
    /// Its `var` (e.g. `RYE_PYTHON`).
    pub var: String,
    /// The whole refusal text, for the user.
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvOutcome {
    /// Some fact is not known yet; the caller returns `ask.needs()` and tries again.
    Pending,
    Ready(ChainEnv),
    Unresolved(Unresolved),
}

/// Variables the runner sets itself (`runner::execute::RYECHAIN_EXE`, the running ryechain that a
/// system runtime's `command: "${RYECHAIN_EXE}"` names): a project's `.env` cannot replace them.
pub const RUNNER_VARS: &[&str] = &["RYECHAIN_EXE"];

/// §5.1 with the seeds' semantics: the base is the OS environment (`ask.env()`) overlaid by
/// `<project_path>/.env`; then the elements are applied **primitive → runtime → tool** (`chain`
/// is given in chain order, tool first), each one's interpreter var and static keys overriding
/// what came before ("later elements override", fixing the reference's earliest-wins, §15.4).
///
/// `vars` are the `{name}` values usable in `search_roots` (the anchor context: `anchor_path`,
/// `tool_dir`, `project_path`…; §5.4, fixing the reference, which did not template them).
///
/// ryechain reads `.env` for every chain (the reference only when some element has an
/// `env_config`, §9.1.1), so a tool sees the same environment whatever its runtime declares.
pub fn resolve_chain_env(
    chain: &[EnvElement<'_>],
    project_path: &Path,
    vars: &[(&str, &str)],
    ask: &Ask<'_>,
) -> EnvOutcome {
    let os = ask.env();
    let mut env = os.clone();
    match ask.text(&project_path.join(".env")) {
        None => return EnvOutcome::Pending,
        Some(Some(text)) => {
            env.extend(parse_dotenv(text));
            // The runner's own variables are never the project's: a `.env` is verified by no one.
            for name in RUNNER_VARS {
                match os.get(*name) {
                    Some(v) => env.insert((*name).to_owned(), v.clone()),
                    None => env.remove(*name),
                };
            }
        }
        Some(None) => {}
    }
    let mut contributions = Vec::new();
    for element in chain.iter().rev() {
        let Some(Value::Object(cfg)) = element.env_config else {
            continue;
        };
        let mut keys = Vec::new();
        if let Some(Value::Object(interp)) = cfg.get("interpreter") {
            let r = Resolver {
                item_id: element.item_id,
                project_path,
                vars,
                os,
                ask,
            };
            match r.resolve(interp, &mut env) {
                Step::Pending => return EnvOutcome::Pending,
                Step::Failed(u) => return EnvOutcome::Unresolved(u),
                Step::Set(var) => keys.push(var),
                Step::NoVar => {}
            }
        }
        if let Some(Value::Object(statics)) = cfg.get("env") {
            apply_static_env(statics, &mut env);
            keys.extend(statics.keys().cloned());
        }
        keys.sort();
        keys.dedup();
        contributions.push(Contribution {
            item_id: element.item_id.to_owned(),
            keys,
        });
    }
    EnvOutcome::Ready(ChainEnv { env, contributions })
}

/// `.env` lines (§5.3): trimmed, blank and `#` lines skipped, split at the first `=`, key and
/// value trimmed, later lines win (the caller inserts in order). Quotes and inline `#` comments
/// are kept as the reference does. Departure (§15.36): a leading `export ` is stripped from the
/// key (the reference skipped such lines).
pub fn parse_dotenv(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let mut key = key.trim();
        if let Some(rest) = key.strip_prefix("export")
            && rest.starts_with(char::is_whitespace)
        {
            key = rest.trim_start();
        }
        if key.is_empty() {
            continue;
        }
        out.push((key.to_owned(), value.trim().to_owned()));
    }
    out
}

/// Static `env` values in mapping order (§5.5): strings expanded against the env built so far
/// (so later keys see earlier ones), other values stringified like Python's `str()`.
pub fn apply_static_env(statics: &Map<String, Value>, env: &mut BTreeMap<String, String>) {
    for (k, v) in statics {
        let value = match v {
            Value::String(s) => expand_env(s, env),
            other => py_str(other),
        };
        env.insert(k.clone(), value);
    }
}

enum Step {
    Pending,
    /// The interpreter has no `var`: nothing to do (§5.4).
    NoVar,
    Set(String),
    Failed(Unresolved),
}

/// How to look for an interpreter.
enum Probe {
    /// The first of these paths that is a regular file (and executable when asked) wins.
    Paths {
        paths: Vec<PathBuf>,
        executable: bool,
        looked: String,
    },
    /// The first non-empty stdout line of this command (exit 0); with `bin`, the interpreter
    /// is `<that line>/bin/<bin>` and must be a file.
    Command {
        argv: Vec<String>,
        bin: Option<String>,
    },
    /// The configuration lacks what this type needs: nothing can be found.
    Incomplete(String),
    Unknown(String),
}

struct Resolver<'a> {
    item_id: &'a str,
    project_path: &'a Path,
    vars: &'a [(&'a str, &'a str)],
    os: &'a BTreeMap<String, String>,
    ask: &'a Ask<'a>,
}

/// What `first_file` found.
enum Hit {
    Pending,
    None,
    At(usize),
}

impl Resolver<'_> {
    fn resolve(&self, interp: &Map<String, Value>, env: &mut BTreeMap<String, String>) -> Step {
        let Some(var) = interp
            .get("var")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        else {
            return Step::NoVar;
        };
        // [L]: a var already set (env being built, then OS env) to an existing file wins.
        let mut presets: Vec<PathBuf> = Vec::new();
        for value in [env.get(var), self.os.get(var)].into_iter().flatten() {
            let p = PathBuf::from(value);
            if p.is_absolute() && !presets.contains(&p) {
                presets.push(p);
            }
        }
        let probe = self.probe(interp, env);
        let found = match probe {
            Probe::Paths {
                ref paths,
                executable,
                ..
            } => {
                let all: Vec<PathBuf> = presets.iter().chain(paths).cloned().collect();
                let exec_from = presets.len();
                match self.first_file(&all, |i| executable && i >= exec_from) {
                    Hit::Pending => return Step::Pending,
                    Hit::At(i) => Some(all[i].display().to_string()),
                    Hit::None => None,
                }
            }
            _ => match self.first_file(&presets, |_| false) {
                Hit::Pending => return Step::Pending,
                Hit::At(i) => Some(presets[i].display().to_string()),
                Hit::None => match &probe {
                    Probe::Command { argv, bin } => match self.ask.command(argv) {
                        None => return Step::Pending,
                        Some(None) => None,
                        Some(Some(line)) => match bin {
                            None => Some(line.trim().to_owned()),
                            Some(b) => {
                                let p = Path::new(line.trim()).join("bin").join(b);
                                match self.ask.is_file(&p) {
                                    None => return Step::Pending,
                                    Some(true) => Some(p.display().to_string()),
                                    Some(false) => None,
                                }
                            }
                        },
                    },
                    _ => None,
                },
            },
        };
        if let Some(path) = found.filter(|p| !p.is_empty()) {
            env.insert(var.to_owned(), path);
            return Step::Set(var.to_owned());
        }
        let head = format!("Interpreter for {var} ({})", self.item_id);
        let looked = match probe {
            Probe::Unknown(t) => {
                // §5.4: an unknown type resolves nothing and the fallback is not applied.
                return Step::Failed(Unresolved {
                    item_id: self.item_id.to_owned(),
                    var: var.to_owned(),
                    message: format!(
                        "{head} has an unknown interpreter type {t}; known types: {}",
                        INTERPRETER_TYPES.join(", ")
                    ),
                });
            }
            Probe::Paths { looked, .. } | Probe::Incomplete(looked) => looked,
            Probe::Command { argv, bin: None } => {
                format!("`{}` failed or printed nothing", argv.join(" "))
            }
            Probe::Command { argv, bin: Some(b) } => {
                format!(
                    "`{}` failed, printed nothing or named a directory without bin/{b}",
                    argv.join(" ")
                )
            }
        };
        match interp.get("fallback") {
            Some(Value::Null) | None => Step::Failed(Unresolved {
                item_id: self.item_id.to_owned(),
                var: var.to_owned(),
                message: format!("{head} not found: {looked}; set {var} or add a fallback"),
            }),
            Some(fallback) => {
                env.insert(var.to_owned(), py_str(fallback));
                Step::Set(var.to_owned())
            }
        }
    }

    /// The first regular file of `paths` (executable too where `needs_exec(index)`), once every
    /// path before it is known. Asks for all unknown paths up to the first file found in one
    /// round, and for none after it (so a ready result leaves no question pending).
    fn first_file(&self, paths: &[PathBuf], needs_exec: impl Fn(usize) -> bool) -> Hit {
        let mut pending = false;
        for (i, p) in paths.iter().enumerate() {
            match self.ask.path(p) {
                None => pending = true,
                Some(f) if f.kind == PathKind::File && (!needs_exec(i) || f.executable) => {
                    return if pending { Hit::Pending } else { Hit::At(i) };
                }
                Some(_) => {}
            }
        }
        if pending { Hit::Pending } else { Hit::None }
    }

    fn probe(&self, interp: &Map<String, Value>, env: &BTreeMap<String, String>) -> Probe {
        let kind = interp.get("type").and_then(Value::as_str).unwrap_or("");
        let str_of = |k: &str| {
            interp
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let list_of = |k: &str| -> Option<Vec<String>> {
            match interp.get(k)? {
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect(),
                _ => None,
            }
        };
        let project = self.project_path;
        match kind {
            "local_binary" => {
                let (Some(binary), Some(dirs)) = (str_of("binary"), list_of("search_paths")) else {
                    return Probe::Incomplete(
                        "local_binary needs `binary` and `search_paths`".into(),
                    );
                };
                let mut names = vec![binary.to_owned()];
                for c in list_of("candidates").unwrap_or_default() {
                    if !names.contains(&c) {
                        names.push(c);
                    }
                }
                let mut roots: Vec<PathBuf> = list_of("search_roots")
                    .unwrap_or_default()
                    .iter()
                    .map(|r| project.join(fill_names(r, self.vars)))
                    .collect();
                roots.push(project.to_path_buf());
                let mut paths = Vec::new();
                for root in &roots {
                    for dir in &dirs {
                        for name in &names {
                            paths.push(root.join(dir).join(name));
                        }
                    }
                }
                let looked = format!(
                    "looked for {} in {} under {}",
                    names.join(", "),
                    dirs.join(", "),
                    roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Probe::Paths {
                    paths,
                    executable: false,
                    looked,
                }
            }
            // DESIGN decision: no `which` subprocess; the binary is looked up in the PATH of the
            // env being built, and must be an executable file (as `which` requires).
            "system_binary" => {
                let Some(binary) = str_of("binary") else {
                    return Probe::Incomplete("system_binary needs `binary`".into());
                };
                if binary.contains('/') {
                    return Probe::Paths {
                        paths: vec![project.join(binary)],
                        executable: true,
                        looked: format!("looked for the executable {binary}"),
                    };
                }
                let path_var = env.get("PATH").map(String::as_str).unwrap_or("");
                let dirs: Vec<&str> = path_var.split(':').filter(|d| !d.is_empty()).collect();
                let looked = if dirs.is_empty() {
                    format!("looked for {binary} on PATH, which is empty")
                } else {
                    format!("looked for {binary} on PATH ({})", dirs.join(":"))
                };
                Probe::Paths {
                    paths: dirs.iter().map(|d| Path::new(d).join(binary)).collect(),
                    executable: true,
                    looked,
                }
            }
            "command" => match list_of("resolve_cmd") {
                Some(argv) if !argv.is_empty() => Probe::Command { argv, bin: None },
                _ => Probe::Incomplete("command needs `resolve_cmd`, a list of strings".into()),
            },
            "venv_python" => {
                let venv = project.join(str_of("venv_path").unwrap_or(".venv"));
                let rels = ["bin/python", "Scripts/python.exe", "bin/python3"];
                Probe::Paths {
                    paths: rels.iter().map(|r| venv.join(r)).collect(),
                    executable: false,
                    looked: format!("looked for {} in {}", rels.join(", "), venv.display()),
                }
            }
            "node_modules" => {
                let dirs =
                    list_of("search_paths").unwrap_or_else(|| vec!["node_modules/.bin".to_owned()]);
                let names = ["node", "node.exe"];
                let mut paths = Vec::new();
                for dir in &dirs {
                    for name in names {
                        paths.push(project.join(dir).join(name));
                    }
                }
                Probe::Paths {
                    paths,
                    executable: false,
                    looked: format!(
                        "looked for {} in {} under {}",
                        names.join(", "),
                        dirs.join(", "),
                        project.display()
                    ),
                }
            }
            "version_manager" => {
                let (Some(manager), Some(version)) = (str_of("manager"), str_of("version")) else {
                    return Probe::Incomplete(
                        "version_manager needs `manager` and `version`".into(),
                    );
                };
                match manager {
                    // §15.31: the reference ran `asdf which asdf <version>`. asdf names the
                    // plugin (`tool`, default `python`): `asdf where <tool> <version>` prints the
                    // install directory; the interpreter is `<dir>/bin/<binary>` (`binary`
                    // defaults to the tool name).
                    "asdf" => {
                        let tool = str_of("tool").unwrap_or("python");
                        let bin = str_of("binary").unwrap_or(tool);
                        Probe::Command {
                            argv: vec!["asdf".into(), "where".into(), tool.into(), version.into()],
                            bin: Some(bin.to_owned()),
                        }
                    }
                    "pyenv" | "nvm" | "rbenv" => Probe::Command {
                        argv: vec![manager.into(), "which".into(), version.into()],
                        bin: None,
                    },
                    other => Probe::Incomplete(format!(
                        "unknown version manager {other} (known: pyenv, nvm, rbenv, asdf)"
                    )),
                }
            }
            other => Probe::Unknown(if other.is_empty() {
                "(none)".to_owned()
            } else {
                format!("'{other}'")
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::exec::facts::{Facts, Need, PathFact};

    fn os_env() -> BTreeMap<String, String> {
        [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("DEBUG", "os"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    }

    /// Facts with no `.env` and the given files (`(path, executable)`); every other path asked
    /// about is missing.
    fn facts(files: &[(&str, bool)], probed_missing: &[&str]) -> Facts {
        let mut f = Facts::complete(os_env());
        f.texts.insert(PathBuf::from("/p/.env"), None);
        for (p, exec) in files {
            f.paths.insert(
                PathBuf::from(p),
                PathFact {
                    kind: PathKind::File,
                    executable: *exec,
                    real: Some(PathBuf::from(p)),
                },
            );
        }
        for p in probed_missing {
            f.paths.insert(PathBuf::from(p), PathFact::missing());
        }
        f
    }

    /// Runs the merge, answering every path question "missing" until nothing is pending.
    fn run(chain: &[EnvElement<'_>], mut f: Facts) -> EnvOutcome {
        for _ in 0..10 {
            let ask = Ask::new(&f);
            let out = resolve_chain_env(
                chain,
                Path::new("/p"),
                &[("anchor_path", "/p/tools/x")],
                &ask,
            );
            if !ask.pending() {
                return out;
            }
            assert_eq!(out, EnvOutcome::Pending);
            for need in ask.needs() {
                match need {
                    Need::Path(p) => {
                        f.paths.insert(p, PathFact::missing());
                    }
                    Need::Text(p) => {
                        f.texts.insert(p, None);
                    }
                    Need::Command(argv) => {
                        f.commands.insert(argv, None);
                    }
                    other => panic!("unexpected need {other:?}"),
                }
            }
        }
        panic!("the merge never settled")
    }

    fn ready(out: EnvOutcome) -> ChainEnv {
        match out {
            EnvOutcome::Ready(c) => c,
            other => panic!("expected an environment, got {other:?}"),
        }
    }

    fn el<'a>(item_id: &'a str, cfg: &'a Value) -> EnvElement<'a> {
        EnvElement {
            item_id,
            env_config: Some(cfg),
        }
    }

    #[test]
    fn s14_21_base_is_the_os_env_and_asks_for_dotenv_first() {
        let f = Facts::complete(os_env());
        let ask = Ask::new(&f);
        assert_eq!(
            resolve_chain_env(&[], Path::new("/p"), &[], &ask),
            EnvOutcome::Pending
        );
        assert_eq!(ask.needs(), [Need::Text(PathBuf::from("/p/.env"))]);
        let c = ready(run(&[], f.clone()));
        assert_eq!(c.env["PATH"], "/usr/bin:/bin");
        assert!(c.contributions.is_empty());
    }

    #[test]
    fn s14_22_24_later_elements_override_and_report_their_keys() {
        let rt = json!({"env": {"DEBUG": "0", "LOG_LEVEL": "info", "VAR1": "from_config"}});
        let tool = json!({"env": {"DEBUG": "1", "VAR1": "from_tool", "CUSTOM_VAR": "value"}});
        let chain = [
            el("t", &tool),
            el("rt", &rt),
            EnvElement {
                item_id: "prim",
                env_config: None,
            },
        ];
        let c = ready(run(&chain, facts(&[], &[])));
        assert_eq!(c.env["DEBUG"], "1");
        assert_eq!(c.env["LOG_LEVEL"], "info");
        assert_eq!(c.env["VAR1"], "from_tool");
        assert_eq!(c.env["CUSTOM_VAR"], "value");
        assert_eq!(
            c.contributions,
            [
                Contribution {
                    item_id: "rt".into(),
                    keys: vec!["DEBUG".into(), "LOG_LEVEL".into(), "VAR1".into()]
                },
                Contribution {
                    item_id: "t".into(),
                    keys: vec!["CUSTOM_VAR".into(), "DEBUG".into(), "VAR1".into()]
                },
            ]
        );
    }

    #[test]
    fn s14_25_26_30_31_static_values_expand_in_order() {
        let cfg = json!({"env": {
            "HOME": "/home/user", "PROJECT": "${HOME}/projects", "DEBUG": "${UNDEFINED_VAR:-false}",
            "N": 42, "B": true, "F": 1.5, "Z": null,
            "A": "a", "BB": "${A}/b", "C": "${BB}/c",
        }});
        let c = ready(run(&[el("rt", &cfg)], facts(&[], &[])));
        assert_eq!(c.env["PROJECT"], "/home/user/projects");
        assert_eq!(c.env["DEBUG"], "false");
        assert_eq!(c.env["N"], "42");
        assert_eq!(c.env["B"], "True");
        assert_eq!(c.env["F"], "1.5");
        assert_eq!(c.env["Z"], "None");
        assert_eq!(c.env["C"], "a/b/c");
    }

    #[test]
    fn s14_27_dotenv_overrides_os_env_and_s15_36_export_is_stripped() {
        let mut f = facts(&[], &[]);
        let text = "# comment\nDATABASE_URL=postgres://x?a=b\n  DEBUG = 1 \nexport TOKEN=abc\nQUOTED=\"q\" # kept\nnoequals\n=nokey\nexporter=1\nDEBUG=2\n";
        f.texts
            .insert(PathBuf::from("/p/.env"), Some(Arc::from(text)));
        let c = ready(run(&[], f));
        assert_eq!(c.env["DATABASE_URL"], "postgres://x?a=b");
        assert_eq!(c.env["DEBUG"], "2");
        assert_eq!(c.env["TOKEN"], "abc");
        assert_eq!(c.env["QUOTED"], "\"q\" # kept");
        assert_eq!(c.env["exporter"], "1");
        assert!(!c.env.contains_key("export TOKEN") && !c.env.contains_key(""));
    }

    #[test]
    fn a_dotenv_never_replaces_the_runners_own_variables() {
        let mut f = facts(&[], &[]);
        f.env
            .insert("RYECHAIN_EXE".into(), "/usr/bin/ryechain".into());
        f.texts.insert(
            PathBuf::from("/p/.env"),
            Some(Arc::from("RYECHAIN_EXE=/tmp/evil\nOTHER=1\n")),
        );
        let c = ready(run(&[], f));
        assert_eq!(c.env["RYECHAIN_EXE"], "/usr/bin/ryechain");
        assert_eq!(c.env["OTHER"], "1");
        let mut f = facts(&[], &[]);
        f.texts.insert(
            PathBuf::from("/p/.env"),
            Some(Arc::from("RYECHAIN_EXE=/tmp/evil\n")),
        );
        assert!(!ready(run(&[], f)).env.contains_key("RYECHAIN_EXE"));
    }

    fn python_runtime() -> Value {
        json!({
            "interpreter": {
                "type": "local_binary", "binary": "python", "candidates": ["python3", "python"],
                "search_paths": [".venv/bin", ".venv/Scripts"], "var": "RYE_PYTHON",
            },
            "env": {"PROJECT_VENV_PYTHON": "${RYE_PYTHON}"},
        })
    }

    #[test]
    fn s5_4_local_binary_finds_the_first_candidate_in_order() {
        let cfg = python_runtime();
        let f = facts(
            &[
                ("/p/.venv/bin/python3", true),
                ("/p/.venv/Scripts/python", true),
            ],
            &[],
        );
        let c = ready(run(&[el("rye/core/runtimes/python/script", &cfg)], f));
        assert_eq!(c.env["RYE_PYTHON"], "/p/.venv/bin/python3");
        assert_eq!(c.env["PROJECT_VENV_PYTHON"], "/p/.venv/bin/python3");
        assert_eq!(
            c.contributions[0].keys,
            ["PROJECT_VENV_PYTHON", "RYE_PYTHON"]
        );
    }

    #[test]
    fn s5_4_local_binary_asks_all_candidates_in_one_round() {
        let cfg = python_runtime();
        let f = facts(&[], &[]);
        let ask = Ask::new(&f);
        let out = resolve_chain_env(&[el("rt", &cfg)], Path::new("/p"), &[], &ask);
        assert_eq!(out, EnvOutcome::Pending);
        assert_eq!(ask.needs().len(), 4);
    }

    #[test]
    fn s5_4_unresolved_interpreter_without_fallback_says_where_it_looked() {
        let cfg = python_runtime();
        let out = run(
            &[el("rye/core/runtimes/python/script", &cfg)],
            facts(&[], &[]),
        );
        assert_eq!(
            out,
            EnvOutcome::Unresolved(Unresolved {
                item_id: "rye/core/runtimes/python/script".into(),
                var: "RYE_PYTHON".into(),
                message: "Interpreter for RYE_PYTHON (rye/core/runtimes/python/script) not found: \
                          looked for python, python3 in .venv/bin, .venv/Scripts under /p; \
                          set RYE_PYTHON or add a fallback"
                    .into(),
            })
        );
    }

    #[test]
    fn s5_4_a_preset_var_naming_a_file_wins_else_it_is_replaced() {
        let cfg = python_runtime();
        let mut f = facts(&[("/opt/py", true), ("/p/.venv/bin/python", true)], &[]);
        f.env.insert("RYE_PYTHON".into(), "/opt/py".into());
        let c = ready(run(&[el("rt", &cfg)], f.clone()));
        assert_eq!(c.env["RYE_PYTHON"], "/opt/py");
        f.env.insert("RYE_PYTHON".into(), "/gone/py".into());
        let c = ready(run(&[el("rt", &cfg)], f));
        assert_eq!(c.env["RYE_PYTHON"], "/p/.venv/bin/python");
    }

    #[test]
    fn s5_4_search_roots_are_templated_and_searched_first() {
        let cfg = json!({"interpreter": {
            "type": "local_binary", "binary": "tsx", "search_paths": ["node_modules/.bin"],
            "search_roots": ["{anchor_path}"], "var": "RYE_NODE", "fallback": "node",
        }});
        let f = facts(
            &[
                ("/p/tools/x/node_modules/.bin/tsx", true),
                ("/p/node_modules/.bin/tsx", true),
            ],
            &[],
        );
        let c = ready(run(&[el("node", &cfg)], f));
        assert_eq!(c.env["RYE_NODE"], "/p/tools/x/node_modules/.bin/tsx");
        let c = ready(run(&[el("node", &cfg)], facts(&[], &[])));
        assert_eq!(c.env["RYE_NODE"], "node");
    }

    #[test]
    fn s14_28_venv_python_present_or_fallback() {
        let cfg = json!({"interpreter": {"type": "venv_python", "var": "RYE_PYTHON", "fallback": "/usr/bin/python3"}});
        let c = ready(run(
            &[el("rt", &cfg)],
            facts(&[("/p/.venv/bin/python", true)], &[]),
        ));
        assert!(c.env["RYE_PYTHON"].contains(".venv"));
        let c = ready(run(&[el("rt", &cfg)], facts(&[], &[])));
        assert_eq!(c.env["RYE_PYTHON"], "/usr/bin/python3");
    }

    #[test]
    fn s14_29_system_binary_uses_the_path_being_built_and_needs_an_executable() {
        let cfg = json!({
            "env": {"PATH": "/opt/bin:${PATH}"},
            "interpreter": {"type": "system_binary", "binary": "git", "var": "GIT"},
        });
        let prim = json!({"env": {"PATH": "/tools:${PATH}"}});
        let f = facts(
            &[
                ("/tools/git", false),
                ("/usr/bin/git", true),
                ("/opt/bin/git", true),
            ],
            &[],
        );
        // The runtime's interpreter is resolved before its own static env: /opt/bin is not on
        // PATH yet, the primitive's /tools is, but /tools/git is not executable.
        let c = ready(run(&[el("rt", &cfg), el("prim", &prim)], f));
        assert_eq!(c.env["GIT"], "/usr/bin/git");
        assert_eq!(c.env["PATH"], "/opt/bin:/tools:/usr/bin:/bin");
        let out = run(&[el("rt", &cfg)], facts(&[], &[]));
        let EnvOutcome::Unresolved(u) = out else {
            panic!("{out:?}")
        };
        assert!(
            u.message.contains("looked for git on PATH (/usr/bin:/bin)"),
            "{}",
            u.message
        );
        let with_fallback = json!({"interpreter": {"type": "system_binary", "binary": "git", "var": "GIT", "fallback": "git"}});
        let c = ready(run(&[el("rt", &with_fallback)], facts(&[], &[])));
        assert_eq!(c.env["GIT"], "git");
    }

    #[test]
    fn s5_4_command_and_version_managers_ask_for_commands() {
        let cmd = json!({"interpreter": {"type": "command", "resolve_cmd": ["which", "python3"], "var": "PY"}});
        let mut f = facts(&[], &[]);
        f.commands.insert(
            vec!["which".into(), "python3".into()],
            Some("/usr/bin/python3".into()),
        );
        assert_eq!(
            ready(run(&[el("rt", &cmd)], f)).env["PY"],
            "/usr/bin/python3"
        );

        let pyenv = json!({"interpreter": {"type": "version_manager", "manager": "pyenv", "version": "3.11", "var": "PY", "fallback": "python3"}});
        let mut f = facts(&[], &[]);
        f.commands
            .insert(vec!["pyenv".into(), "which".into(), "3.11".into()], None);
        assert_eq!(ready(run(&[el("rt", &pyenv)], f)).env["PY"], "python3");

        // §15.31: asdf gets the plugin name, and the version selects the install directory.
        let asdf = json!({"interpreter": {"type": "version_manager", "manager": "asdf", "tool": "nodejs", "binary": "node", "version": "20.1.0", "var": "NODE"}});
        let mut f = facts(&[("/a/installs/nodejs/20.1.0/bin/node", true)], &[]);
        f.commands.insert(
            ["asdf", "where", "nodejs", "20.1.0"]
                .map(String::from)
                .to_vec(),
            Some("/a/installs/nodejs/20.1.0".into()),
        );
        assert_eq!(
            ready(run(&[el("rt", &asdf)], f)).env["NODE"],
            "/a/installs/nodejs/20.1.0/bin/node"
        );
    }

    #[test]
    fn s5_4_unknown_type_is_unresolved_even_with_a_fallback() {
        let cfg = json!({"interpreter": {"type": "conda", "var": "PY", "fallback": "python3"}});
        let out = run(&[el("rt", &cfg)], facts(&[], &[]));
        let EnvOutcome::Unresolved(u) = out else {
            panic!("{out:?}")
        };
        assert_eq!(u.var, "PY");
        assert!(
            u.message.contains("unknown interpreter type 'conda'"),
            "{}",
            u.message
        );
        let no_var = json!({"interpreter": {"type": "conda"}, "env": {"X": "1"}});
        let c = ready(run(&[el("rt", &no_var)], facts(&[], &[])));
        assert_eq!(c.contributions[0].keys, ["X"]);
    }

    #[test]
    fn s5_4_node_modules_looks_under_the_project() {
        let cfg = json!({"interpreter": {"type": "node_modules", "var": "RYE_NODE"}});
        let c = ready(run(
            &[el("rt", &cfg)],
            facts(&[("/p/node_modules/.bin/node.exe", true)], &[]),
        ));
        assert_eq!(c.env["RYE_NODE"], "/p/node_modules/.bin/node.exe");
    }
}
