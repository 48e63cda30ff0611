//! One classification of files (issue 31 item 4): `place::Place` from the path, refined by the
//! query `resolve::file_kind` from the extension and header. Lint, `sign`, `verify` and the kept
//! lint's "does this change reach everything" all read it, so they agree on every file,
//! including the ones they used to disagree on (a non-`.md` file under `directives/`).

use std::path::PathBuf;

use ryechain::analysis::live::{is_global, lintable};
use ryechain::integrity::ItemKind;
use ryechain::model::SpaceKind;
use ryechain::place::Place;
use ryechain::resolve::FileKind;
use ryechain::testing::{FIXTURE_ROOT, host};

const TREE: &str = r#"//- /project/.ai/tools/t/run.py
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
//- /project/.ai/tools/t/lib/helpers.py
def helper():
    return 1
//- /project/.ai/tools/t/data.csv
a,b
//- /project/.ai/tools/t/rt.yaml
version: "1.0.0"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
//- /project/.ai/directives/d/plan.md
# Plan
//- /project/.ai/directives/d/notes.txt
notes beside the directive
//- /project/.ai/knowledge/k/entry.md
# Entry
//- /project/.ai/knowledge/k/raw.yaml
a: 1
//- /project/.ai/config/ryechain.yaml
lint: {}
//- /project/.ai/lockfiles/t/run@1.0.0.lock.json
{}
//- /project/.ai/lockfiles/README.txt
what these are
"#;

#[test]
fn every_reader_agrees_with_the_one_classification() {
    let host = host(TREE);
    let a = host.analysis();
    let at = |rel: &str| {
        a.file_at(&PathBuf::from(format!("{FIXTURE_ROOT}/project/.ai/{rel}")))
            .unwrap_or_else(|| panic!("{rel} is loaded"))
    };
    let cases = [
        ("tools/t/run.py", FileKind::Tool),
        ("tools/t/lib/helpers.py", FileKind::Library),
        ("tools/t/data.csv", FileKind::Data),
        ("tools/t/rt.yaml", FileKind::Runtime),
        ("directives/d/plan.md", FileKind::At(Place::Directive)),
        ("directives/d/notes.txt", FileKind::At(Place::Other)),
        ("knowledge/k/entry.md", FileKind::At(Place::Knowledge)),
        ("knowledge/k/raw.yaml", FileKind::At(Place::Other)),
        ("config/ryechain.yaml", FileKind::At(Place::Config)),
        (
            "lockfiles/t/run@1.0.0.lock.json",
            FileKind::At(Place::Lockfile),
        ),
        ("lockfiles/README.txt", FileKind::At(Place::Other)),
    ];
    let linted = a.lint_files();
    let verified: Vec<PathBuf> = a.verify_all().into_iter().map(|v| v.path).collect();
    let signable: Vec<_> = [ItemKind::Tool, ItemKind::Directive, ItemKind::Knowledge]
        .into_iter()
        .flat_map(|k| a.items(SpaceKind::Project, k))
        .map(|(_, f)| f)
        .collect();
    for (rel, kind) in cases {
        let file = at(rel);
        assert_eq!(a.file_kind(file), kind, "{rel}");
        let item = kind.is_item();
        assert_eq!(
            ItemKind::of_rel(rel).is_some() && kind != FileKind::Data,
            item,
            "{rel}: an item by its path"
        );
        assert_eq!(signable.contains(&file), item, "{rel}: sign lists it");
        assert_eq!(
            verified.contains(&a.path(file).to_path_buf()),
            item,
            "{rel}: verify checks it"
        );
        let checked = matches!(
            kind,
            FileKind::Tool
                | FileKind::Runtime
                | FileKind::Library
                | FileKind::At(Place::Directive)
                | FileKind::At(Place::Knowledge)
                | FileKind::At(Place::Config)
                | FileKind::At(Place::Lockfile)
        );
        assert_eq!(linted.contains(&file), checked, "{rel}: lint checks it");
        // A change to an item (or to a file beside it that nothing reads) re-checks what it
        // reaches; a change to config, a lockfile or the trust store reaches everything.
        let reaches_everything = matches!(
            kind,
            FileKind::At(Place::Config) | FileKind::At(Place::Lockfile)
        ) || (kind == FileKind::At(Place::Other)
            && rel.starts_with("lockfiles/"));
        assert_eq!(is_global(rel), reaches_everything, "{rel}: global");
        if Place::of(rel) != Place::Config && kind != FileKind::At(Place::Other) {
            assert_eq!(
                lintable(host.db(), rel),
                checked,
                "{rel}: a change re-checks it"
            );
        }
    }
}
