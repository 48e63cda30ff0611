//! Test support: multi-file string fixtures (`//- /project/.ai/tools/x.py` headers, as in
//! rust-analyzer's test-utils) turned into a `Change`, with no file system involved.

use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::Host;
use crate::db::change::{FileSpec, RootSpec};
use crate::db::{Change, FileContents, Settings};
use crate::model::Space;

/// The virtual directory fixtures live under.
pub const FIXTURE_ROOT: &str = "/fixture";

/// One `//- /<space>/.ai/<rel>` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixtureFile {
    pub space: Space,
    pub rel: String,
    pub text: String,
}

fn space_of(name: &str) -> Option<Space> {
    match name {
        "project" => Some(Space::Project),
        "user" => Some(Space::User),
        "system" => Some(Space::System {
            order: 0,
            bundle: Arc::from("fixture"),
        }),
        _ => None,
    }
}

/// Split a fixture into files. Panics on a malformed header: fixtures are test code.
pub fn parse_fixture(text: &str) -> Vec<FixtureFile> {
    let mut files: Vec<FixtureFile> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("//- ") {
            let header = header.trim();
            let rest = header
                .strip_prefix('/')
                .expect("fixture path starts with /");
            let (space, rest) = rest.split_once('/').expect("fixture path has a space");
            let rel = rest
                .strip_prefix(".ai/")
                .expect("fixture path continues with .ai/");
            let space = space_of(space).expect("space is project, user or system");
            files.push(FixtureFile {
                space,
                rel: rel.to_owned(),
                text: String::new(),
            });
        } else if let Some(last) = files.last_mut() {
            last.text.push_str(line);
        }
    }
    files
}

/// The text of the embedded bundle's file whose path ends with `suffix` (a fixture's own system
/// space that needs, say, the bundle's tool extractor).
pub fn embedded_text(suffix: &str) -> String {
    crate::rules::embedded_system_files()
        .iter()
        .find(|(p, _)| p.ends_with(suffix))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_else(|| panic!("the embedded bundle has no `{suffix}`"))
}

/// The `.ai` directory of a space in fixtures.
pub fn ai_dir(space: &Space) -> PathBuf {
    let name = match space {
        Space::Project => "project",
        Space::User => "user",
        Space::System { .. } => "system",
    };
    PathBuf::from(FIXTURE_ROOT).join(name).join(".ai")
}

/// The file spec for a fixture file (also used to write files in incremental tests).
pub fn file_spec(f: &FixtureFile) -> FileSpec {
    FileSpec {
        space: f.space.clone(),
        path: ai_dir(&f.space).join(&f.rel),
        rel: f.rel.clone(),
        contents: FileContents::Text(f.text.as_str().into()),
        link_origin: None,
    }
}

/// A full load of the fixture: project and user spaces always exist; the system space is the
/// fixture's `/system/` files when there are any, else ryechain's embedded bundle.
pub fn change_for(files: &[FixtureFile], settings: Settings) -> Change {
    let mut roots = vec![
        RootSpec {
            space: Space::Project,
            root: ai_dir(&Space::Project),
            files: Vec::new(),
        },
        RootSpec {
            space: Space::User,
            root: ai_dir(&Space::User),
            files: Vec::new(),
        },
    ];
    let has_system = files
        .iter()
        .any(|f| matches!(f.space, Space::System { .. }));
    if has_system {
        let space = space_of("system").expect("system is a space");
        roots.push(RootSpec {
            root: ai_dir(&space),
            space,
            files: Vec::new(),
        });
    } else {
        let space = Space::System {
            order: 0,
            bundle: Arc::from("ryechain"),
        };
        let spec = crate::load::SpaceSpec {
            space,
            source: crate::load::SpaceSource::Embedded,
        };
        let outcome = crate::load::load(&NoSystem, std::slice::from_ref(&spec));
        roots.extend(outcome.change.roots.into_iter().flatten());
    }
    for f in files {
        let root = roots
            .iter_mut()
            .find(|r| r.space == f.space)
            .expect("root for every space");
        root.files.push(file_spec(f));
    }
    Change {
        roots: Some(roots),
        files: Vec::new(),
        settings: Some(settings),
    }
}

/// A host loaded with the fixture.
/// Whether the query `query` (a tracked function, named by its own type as `ruff_db::testing`
/// does: renaming it renames what is looked for) executed on `input` among `executed`
/// (`RootDb::take_executed_keys`).
pub fn query_ran<Q, I: salsa::plumbing::AsId>(
    db: &crate::db::RootDb,
    executed: &[(salsa::DatabaseKeyIndex, String)],
    _query: Q,
    input: I,
) -> bool {
    use salsa::Database as _;
    let full = std::any::type_name::<Q>();
    let name = full.rsplit("::").next().unwrap_or(full);
    let id = input.as_id();
    executed.iter().any(|(key, _)| {
        db.ingredient_debug_name(key.ingredient_index()) == name && key.key_index() == id
    })
}

/// Whether any execution of the query `query` is among `executed` (for queries without input).
pub fn query_ran_at_all<Q>(
    db: &crate::db::RootDb,
    executed: &[(salsa::DatabaseKeyIndex, String)],
    _query: Q,
) -> bool {
    use salsa::Database as _;
    let full = std::any::type_name::<Q>();
    let name = full.rsplit("::").next().unwrap_or(full);
    executed
        .iter()
        .any(|(key, _)| db.ingredient_debug_name(key.ingredient_index()) == name)
}

/// An exec request for `item` of the fixture project (`/fixture/project`, user space
/// `/fixture/user`): unsigned items allowed, lockfiles used, no trace.
pub fn exec_request(
    item: &str,
    params: serde_json::Map<String, serde_json::Value>,
) -> crate::exec::plan::ExecRequest {
    crate::exec::plan::ExecRequest {
        item_id: item.to_owned(),
        project_path: PathBuf::from(FIXTURE_ROOT).join("project"),
        user_space: Some(PathBuf::from(FIXTURE_ROOT).join("user")),
        system_space: None,
        params,
        dry_run: false,
        trace: false,
        timeout: None,
        output_cap: crate::exec::DEFAULT_OUTPUT_CAP,
        policy: crate::analysis::verify::Policy {
            allow_unsigned: true,
        },
        use_lockfile: true,
    }
}

/// Answer the planner's questions as an empty machine would: no file exists, no command prints
/// anything, a walk finds nothing. A fully loaded workspace never asks for items.
pub fn answer_as_empty_machine(
    needs: &[crate::exec::facts::Need],
    facts: &mut crate::exec::facts::Facts,
) {
    use crate::exec::facts::{DepListing, Need, PathFact};
    for n in needs {
        match n {
            Need::Path(p) => {
                facts.paths.insert(p.clone(), PathFact::missing());
            }
            Need::Text(p) => {
                facts.texts.insert(p.clone(), None);
            }
            Need::Command(argv) => {
                facts.commands.insert(argv.clone(), None);
            }
            Need::Walk(w) => {
                facts.walks.insert(
                    w.clone(),
                    DepListing {
                        real_base: None,
                        files: Vec::new(),
                        errors: Vec::new(),
                    },
                );
            }
            Need::Item(_) | Need::SpaceFile(_) => panic!("a full load never needs {n:?}"),
        }
    }
}

pub fn host(text: &str) -> Host {
    host_with(text, Settings::default())
}

/// A host loaded with the fixture, whose database can record the queries it runs.
pub fn host_with(text: &str, settings: Settings) -> Host {
    let mut host = Host::with_event_log();
    host.apply(change_for(&parse_fixture(text), settings));
    host
}

/// A `System` with nothing in it: the embedded bundle needs no file system.
struct NoSystem;

impl crate::system::System for NoSystem {
    fn walk(&self, _: &std::path::Path) -> Vec<crate::system::WalkEntry> {
        Vec::new()
    }
    fn read(&self, _: &std::path::Path, _: u64) -> crate::system::ReadResult {
        crate::system::ReadResult::Error("no file system in tests".to_owned())
    }
    fn canonicalize(&self, p: &std::path::Path) -> std::io::Result<PathBuf> {
        Ok(p.to_path_buf())
    }
    fn is_dir(&self, _: &std::path::Path) -> bool {
        false
    }
    fn is_file(&self, _: &std::path::Path) -> bool {
        false
    }
    fn env_var(&self, _: &str) -> Option<String> {
        None
    }
    fn current_dir(&self) -> std::io::Result<PathBuf> {
        Ok(PathBuf::from(FIXTURE_ROOT))
    }
}

/// The repository's files (outside `target/` and `.git/`) whose names end in one of
/// `extensions` (`"py"`, `"yaml"`), in the order the directories list them.
#[allow(
    clippy::disallowed_methods,
    reason = "test support lists the repository's own files"
)]
pub fn repository_files(extensions: &[&str]) -> Vec<PathBuf> {
    fn visit(dir: &std::path::Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            if path.is_dir() {
                visit(&path, extensions, out);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| extensions.contains(&e))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    visit(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        extensions,
        &mut out,
    );
    out
}

/// The bundled example tree as loader specs: `examples/project`, `examples/user` (canonical
/// paths) and ryechain's embedded bundle.
#[allow(
    clippy::disallowed_methods,
    reason = "test support resolves the repository's example directory"
)]
pub fn example_spaces() -> Vec<crate::load::SpaceSpec> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    three_spaces(
        root.join("project"),
        root.join("user"),
        crate::load::SpaceSource::Embedded,
        "ryechain",
    )
}

/// Project, user and one system bundle as loader specs (project and user from directories).
pub fn three_spaces(
    project: PathBuf,
    user: PathBuf,
    system: crate::load::SpaceSource,
    bundle: &str,
) -> Vec<crate::load::SpaceSpec> {
    use crate::load::{SpaceSource, SpaceSpec};
    vec![
        SpaceSpec {
            space: Space::Project,
            source: SpaceSource::Dir(project),
        },
        SpaceSpec {
            space: Space::User,
            source: SpaceSource::Dir(user),
        },
        SpaceSpec {
            space: Space::System {
                order: 0,
                bundle: Arc::from(bundle),
            },
            source: system,
        },
    ]
}

/// The three spaces of a generated tree written at `dir` (its system bundle replaces the embedded one).
pub fn generated_spaces(dir: &std::path::Path) -> Vec<crate::load::SpaceSpec> {
    three_spaces(
        dir.join("project"),
        dir.join("user"),
        crate::load::SpaceSource::Dir(dir.join("system")),
        "gen",
    )
}

/// The spaces of a rule fixture at `dir` (`tests/fixtures/<rule>/`): `project/`, `user/` when
/// present, and `system/` as the bundle `fixture` when present, else the embedded bundle.
#[allow(
    clippy::disallowed_methods,
    reason = "test support looks at which fixture spaces exist"
)]
pub fn fixture_spaces(dir: &std::path::Path) -> Vec<crate::load::SpaceSpec> {
    use crate::load::{SpaceSource, SpaceSpec};
    let mut spaces = vec![SpaceSpec {
        space: Space::Project,
        source: SpaceSource::Dir(dir.join("project")),
    }];
    if dir.join("user").is_dir() {
        spaces.push(SpaceSpec {
            space: Space::User,
            source: SpaceSource::Dir(dir.join("user")),
        });
    }
    let (bundle, source) = if dir.join("system").is_dir() {
        ("fixture", SpaceSource::Dir(dir.join("system")))
    } else {
        ("ryechain", SpaceSource::Embedded)
    };
    spaces.push(SpaceSpec {
        space: Space::System {
            order: 0,
            bundle: Arc::from(bundle),
        },
        source,
    });
    spaces
}

/// A throwaway Ed25519 key derived from a seed byte, for tests that sign (never stored).
pub struct TestKey {
    pub sk: ed25519_dalek::SigningKey,
    pub public_pem: String,
    pub fp: String,
}

/// The test key of `seed` (the same seed gives the same key and fingerprint).
pub fn test_key(seed: u8) -> TestKey {
    use crate::integrity::keys::{fingerprint, key_pair_from_seed, signing_key_from_pem};
    let pair = key_pair_from_seed(&[seed; 32]).expect("a seed makes a key pair");
    TestKey {
        sk: signing_key_from_pem(&pair.private_pem).expect("its own PEM parses"),
        fp: fingerprint(pair.public_pem.as_bytes()),
        public_pem: pair.public_pem,
    }
}

/// The client side of an in-process language server (`lsp_server::Connection::memory()`), for
/// the LSP tests and the latency harness: sends requests and notifications and keeps every
/// message it has not consumed yet.
pub struct LspClient {
    pub conn: lsp_server::Connection,
    pub inbox: std::collections::VecDeque<lsp_server::Message>,
    next: i32,
}

/// How long an LSP test waits for an answer before it fails.
pub const LSP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl LspClient {
    pub fn new(conn: lsp_server::Connection) -> Self {
        LspClient {
            conn,
            inbox: std::collections::VecDeque::new(),
            next: 0,
        }
    }

    /// The next message (queued first), waiting at most `wait`.
    pub fn next_message(&mut self, wait: std::time::Duration) -> Option<lsp_server::Message> {
        self.inbox
            .pop_front()
            .or_else(|| self.conn.receiver.recv_timeout(wait).ok())
    }

    pub fn notify(&self, method: &str, params: serde_json::Value) {
        let n = lsp_server::Notification::new(method.to_owned(), params);
        self.conn
            .sender
            .send(n.into())
            .expect("the server is running");
    }

    pub fn send_request(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> lsp_server::RequestId {
        self.next += 1;
        let id = lsp_server::RequestId::from(self.next);
        let r = lsp_server::Request::new(id.clone(), method.to_owned(), params);
        self.conn
            .sender
            .send(r.into())
            .expect("the server is running");
        id
    }

    /// The response to `id` (other messages are kept); panics after `LSP_WAIT`.
    pub fn response(&mut self, id: &lsp_server::RequestId) -> lsp_server::Response {
        let deadline = std::time::Instant::now() + LSP_WAIT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.conn.receiver.recv_timeout(left) {
                Ok(lsp_server::Message::Response(r)) if &r.id == id => return r,
                Ok(other) => self.inbox.push_back(other),
                Err(_) => panic!("no response to {id:?}"),
            }
        }
    }

    /// Send a request and return its result; panics on an error response. A `ContentModified`
    /// answer (the workspace changed while it was computed) is asked again, as editors do.
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        for _ in 0..100 {
            let id = self.send_request(method, params.clone());
            match self.response(&id).response_result {
                Ok(v) => return v,
                Err(e) if e.code == lsp_server::ErrorCode::ContentModified as i32 => continue,
                Err(e) => panic!("{method} failed: {e:?}"),
            }
        }
        panic!("{method}: the workspace kept changing")
    }

    /// The next diagnostics published for `uri` that satisfy `ok` (earlier ones for `uri` are
    /// skipped; messages about other files are kept for later calls); panics after `LSP_WAIT`.
    pub fn diagnostics_until(
        &mut self,
        uri: &str,
        ok: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        let deadline = std::time::Instant::now() + LSP_WAIT;
        let mut seen = Vec::new();
        let mut kept = std::collections::VecDeque::new();
        let found = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Some(msg) = self.next_message(left) else {
                break None;
            };
            match published(&msg) {
                Some((u, diags)) if u == uri => {
                    if ok(&diags) {
                        break Some(diags);
                    }
                    seen.push(diags);
                }
                _ => kept.push_back(msg),
            }
        };
        kept.append(&mut self.inbox);
        self.inbox = kept;
        found.unwrap_or_else(|| panic!("no matching diagnostics for {uri}; saw {seen:#?}"))
    }

    /// Drain messages until none arrives for `quiet`.
    pub fn settle(&mut self, quiet: std::time::Duration) {
        self.inbox.clear();
        while self.conn.receiver.recv_timeout(quiet).is_ok() {}
    }
}

/// The URI and diagnostics of a `publishDiagnostics` notification.
pub fn published(msg: &lsp_server::Message) -> Option<(String, Vec<serde_json::Value>)> {
    match msg {
        lsp_server::Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
            Some((
                n.params["uri"].as_str()?.to_owned(),
                n.params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            ))
        }
        _ => None,
    }
}
