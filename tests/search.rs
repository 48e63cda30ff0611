//! Search (§12.7) through `Analysis::search` on string fixtures: which items a kind has, what
//! each result carries (fields from the tool header, the directive and the knowledge parses),
//! scores and their ties, the query language end to end, paging, spaces, the seed-era scope's id
//! pattern, `fields`, `filters`, the orders, proximity, refused queries, signatures that do not
//! hide an item, and that an edit recomputes one file's search document. Also `ryechain search`
//! (the real binary): its list, its JSON and its exit statuses.
#![allow(
    clippy::disallowed_methods,
    reason = "the command-line tests write a temporary project and spawn the binary"
)]

use std::process::{Command, Stdio};

use ryechain::analysis::Host;
use ryechain::db::{Change, FileChange};
use ryechain::facts::search::{SearchAnswer, SearchError, SearchRequest, SortBy, Source};
use ryechain::integrity::ItemKind;
use ryechain::model::{Space, SpaceKind};
use ryechain::testing::{FixtureFile, file_spec, host};
use serde_json::{Value as Json, json};

const TREE: &str = r#"
//- /project/.ai/tools/acme/publish_tables.py
__version__ = "1.2.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme/data"
__tool_description__ = "Publish tables to the warehouse"
print("publish")
//- /project/.ai/tools/acme/sync_logs.py
__version__ = "2.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme/ops"
__tool_description__ = "Sync logs from the gateway to the archive"
print("sync")
//- /project/.ai/tools/acme/rotate_keys.yaml
version: "0.3.0"
tool_type: python
executor_id: rye/core/runtimes/python/script
category: acme/ops
description: "Rotate signing keys of the gateway"
//- /project/.ai/tools/acme/__init__.py
__version__ = "1.0.0"
//- /project/.ai/tools/acme/notes.txt
not a tool: no extractor lists .txt
//- /user/.ai/tools/acme/publish_tables.py
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "acme/data"
__tool_description__ = "Publish tables to the warehouse (user copy)"
//- /project/.ai/directives/acme/deploy.md
# Deploy

Ship the service to production.

```xml
<directive name="deploy" version="1.0.0">
  <metadata><description>Deploy the service</description><category>acme</category><author>ada</author></metadata>
</directive>
```
//- /project/.ai/knowledge/acme/notes.md
```yaml
name: notes
title: Deploy notes
version: "1.0.0"
entry_type: reference
category: acme
created_at: 2026-02-18T00:00:00Z
tags: [deploy, friday]
```

Ship on Fridays, never on Mondays.
//- /project/.ai/knowledge/acme/older.md
```yaml
name: older
title: Older deploy notes
version: "0.9.0"
entry_type: reference
category: acme
created_at: 2025-01-01T00:00:00Z
```

We shipped on Mondays.
"#;

fn tree() -> Host {
    host(TREE)
}

fn tool(query: &str) -> SearchRequest {
    SearchRequest::new(ItemKind::Tool, query)
}

fn search(host: &Host, req: &SearchRequest) -> SearchAnswer {
    host.analysis().search(req).expect("the query parses")
}

/// `(id, space, score)` of each result.
fn ranked(host: &Host, req: &SearchRequest) -> Vec<(String, &'static str, f64)> {
    search(host, req)
        .hits
        .into_iter()
        .map(|h| (h.id, h.space.name(), h.score))
        .collect()
}

fn ids(host: &Host, req: &SearchRequest) -> Vec<String> {
    search(host, req).hits.into_iter().map(|h| h.id).collect()
}

#[test]
fn a_tools_result_carries_its_header_and_a_preview_without_the_signature() {
    let h = host(
        "//- /project/.ai/tools/acme/greet.sh\n# rye:signed:2026-01-01T00:00:00Z:abc:def:0123456789abcdef\n__version__=\"0.1.0\"\n__tool_type__=\"bash\"\n__executor_id__=\"rye/core/runtimes/bash/bash\"\n__category__=\"acme\"\n__tool_description__=\"Greet someone\"\necho hi\n",
    );
    let answer = search(&h, &tool("greet"));
    assert_eq!(answer.total, 1);
    let hit = &answer.hits[0];
    assert_eq!(hit.id, "acme/greet");
    assert_eq!(hit.kind, ItemKind::Tool);
    assert_eq!(hit.space, SpaceKind::Project);
    assert!(
        hit.path.ends_with(".ai/tools/acme/greet.sh"),
        "{:?}",
        hit.path
    );
    let f = &hit.fields;
    assert_eq!((f.name.as_str(), f.title.as_str()), ("greet", "greet"));
    assert_eq!(f.description, "Greet someone");
    assert_eq!(f.category, "acme");
    assert!(
        f.preview.starts_with("__version__=\"0.1.0\""),
        "{}",
        f.preview
    );
    assert!(!f.preview.contains("rye:signed"));
    assert_eq!(
        Json::Object(f.metadata.clone()),
        json!({"version": "0.1.0", "category": "acme", "tool_type": "bash", "executor_id": "rye/core/runtimes/bash/bash"})
    );
    // A signature that does not verify does not hide the item; its verdict says why.
    let verdict = h.analysis().verify_file(hit.file, &hit.id);
    assert!(!verdict.verdict.passed());
    assert!(verdict.error.is_some());
}

#[test]
fn the_items_of_a_kind_are_tool_files_directives_and_knowledge_entries() {
    let h = tree();
    let all = |kind| {
        let mut ids = ids(
            &h,
            &SearchRequest {
                limit: 100,
                ..SearchRequest::new(kind, "")
            },
        );
        ids.sort();
        ids
    };
    // `__init__.py` (a name starting with `_`) and `notes.txt` (no tool extension) are no items.
    assert_eq!(
        all(ItemKind::Tool),
        ["acme/publish_tables", "acme/rotate_keys", "acme/sync_logs"]
    );
    assert_eq!(all(ItemKind::Directive), ["acme/deploy"]);
    assert_eq!(all(ItemKind::Knowledge), ["acme/notes", "acme/older"]);
}

#[test]
fn directives_and_knowledge_are_read_from_their_parses() {
    let h = tree();
    let d = &search(&h, &SearchRequest::new(ItemKind::Directive, "deploy")).hits[0];
    assert_eq!(d.id, "acme/deploy");
    assert_eq!(d.fields.name, "deploy");
    assert_eq!(d.fields.description, "Deploy the service");
    assert_eq!(d.fields.category, "acme");
    assert_eq!(d.fields.metadata["version"], "1.0.0");
    assert_eq!(d.fields.metadata["author"], "ada");
    assert!(
        d.fields.preview.starts_with("# Deploy"),
        "{}",
        d.fields.preview
    );
    let k = search(&h, &SearchRequest::new(ItemKind::Knowledge, "fridays"));
    assert_eq!(k.total, 1);
    let k = &k.hits[0];
    assert_eq!(
        (k.fields.name.as_str(), k.fields.title.as_str()),
        ("notes", "Deploy notes")
    );
    assert_eq!(k.fields.preview, "Ship on Fridays, never on Mondays.");
    assert_eq!(k.fields.metadata["tags"], json!(["deploy", "friday"]));
    assert_eq!(k.fields.metadata["entry_type"], "reference");
}

#[test]
fn the_score_is_the_matched_weights_over_all_weights_and_ties_go_project_user_system_then_id() {
    let h = tree();
    // "tables": title 3, name 3, description 2, content 1 of 10.5 (the category is acme/data).
    assert_eq!(
        ranked(
            &h,
            &SearchRequest {
                source: Source::All,
                ..tool("tables")
            }
        ),
        [
            ("acme/publish_tables".to_owned(), "project", 0.8571),
            ("acme/publish_tables".to_owned(), "user", 0.8571),
        ]
    );
    // "gateway": description 2 and content 1 of 10.5, for both; the id breaks the tie.
    assert_eq!(
        ranked(&h, &tool("gateway")),
        [
            ("acme/rotate_keys".to_owned(), "project", 0.2857),
            ("acme/sync_logs".to_owned(), "project", 0.2857),
        ]
    );
    // "ops" is in the category only (1.5) and the preview (1): 0.2381.
    assert_eq!(ranked(&h, &tool("ops"))[0].2, 0.2381);
    // An empty query scores every item 1.
    assert!(ranked(&h, &tool("")).iter().all(|r| r.2 == 1.0));
}

#[test]
fn the_query_language_end_to_end() {
    let h = tree();
    let found = |q: &str| {
        let mut ids = ids(&h, &tool(q));
        ids.sort();
        ids
    };
    assert_eq!(found("gateway logs"), ["acme/sync_logs"]);
    assert_eq!(found("gateway AND logs"), ["acme/sync_logs"]);
    assert_eq!(
        found("tables OR keys"),
        ["acme/publish_tables", "acme/rotate_keys"]
    );
    assert_eq!(found("gateway NOT logs"), ["acme/rotate_keys"]);
    assert_eq!(
        found("(tables OR keys) NOT rotate"),
        ["acme/publish_tables"]
    );
    assert_eq!(found("\"signing keys\""), ["acme/rotate_keys"]);
    assert!(found("\"keys signing\"").is_empty());
    assert_eq!(found("rot*"), ["acme/rotate_keys"]);
    assert_eq!(
        found("*"),
        ["acme/publish_tables", "acme/rotate_keys", "acme/sync_logs"]
    );
    assert!(found("warehuose").is_empty());
    let fuzzy = SearchRequest {
        fuzzy: 2,
        ..tool("warehuose")
    };
    assert_eq!(ids(&h, &fuzzy), ["acme/publish_tables"]);
}

#[test]
fn paging_gives_the_total_and_one_page() {
    let h = tree();
    let req = |offset, limit| SearchRequest {
        source: Source::All,
        offset,
        limit,
        ..tool("acme")
    };
    let all = ranked(&h, &req(0, 10));
    assert_eq!(all.len(), 4);
    let page = search(&h, &req(1, 2));
    assert_eq!(page.total, 4);
    assert_eq!(
        page.hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
        [all[1].0.clone(), all[2].0.clone()]
    );
    let past = search(&h, &req(9, 2));
    assert_eq!((past.total, past.hits.len()), (4, 0));
    assert_eq!(search(&h, &req(0, 0)).hits.len(), 0);
}

#[test]
fn the_source_selects_the_spaces() {
    let h = tree();
    let spaces = |source| {
        let req = SearchRequest {
            source,
            limit: 100,
            ..tool("*")
        };
        let mut s: Vec<&str> = ranked(&h, &req).into_iter().map(|r| r.1).collect();
        s.dedup();
        s
    };
    assert_eq!(spaces(Source::Project), ["project"]);
    assert_eq!(spaces(Source::User), ["user"]);
    // The system space is ryechain's embedded bundle: its runtimes.
    assert_eq!(spaces(Source::System), ["system"]);
    assert_eq!(spaces(Source::All), ["project", "user", "system"]);
}

#[test]
fn the_scope_pattern_keeps_the_ids_under_a_namespace() {
    let h = tree();
    let (kind, glob) =
        ryechain::facts::search::parse_scope("rye.search.tool.rye.core.runtimes.*").unwrap();
    let req = SearchRequest {
        source: Source::All,
        id_glob: glob,
        limit: 100,
        ..SearchRequest::new(kind, "*")
    };
    let found = ids(&h, &req);
    assert!(found.len() > 3, "{found:?}");
    assert!(
        found.iter().all(|id| id.starts_with("rye/core/runtimes/")),
        "{found:?}"
    );
    let (_, glob) = ryechain::facts::search::parse_scope("tool.acme.sync_logs").unwrap();
    let req = SearchRequest {
        id_glob: glob,
        ..tool("")
    };
    assert_eq!(ids(&h, &req), ["acme/sync_logs"]);
}

#[test]
fn field_queries_must_match_and_count_in_the_score() {
    let h = tree();
    let req = SearchRequest {
        fields: vec![("category".into(), "ops".into())],
        ..tool("gateway")
    };
    // description 2 + content 1 + the category query's 1.5, over 10.5 + 1.5.
    assert_eq!(
        ranked(&h, &req),
        [
            ("acme/rotate_keys".to_owned(), "project", 0.375),
            ("acme/sync_logs".to_owned(), "project", 0.375),
        ]
    );
    let req = SearchRequest {
        fields: vec![("id".into(), "rotate*".into())],
        ..tool("")
    };
    assert_eq!(ids(&h, &req), ["acme/rotate_keys"]);
    let bad = SearchRequest {
        fields: vec![("colour".into(), "x".into())],
        ..tool("")
    };
    let err = h.analysis().search(&bad).unwrap_err();
    assert_eq!(err, SearchError::UnknownField("colour".into()));
    assert!(
        err.to_string().contains("the fields are title, name"),
        "{err}"
    );
}

#[test]
fn filters_compare_values_lists_negations_and_versions() {
    let h = tree();
    let filtered = |filters: Json| {
        let filters = filters
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut ids = ids(
            &h,
            &SearchRequest {
                filters,
                ..tool("")
            },
        );
        ids.sort();
        ids
    };
    assert_eq!(
        filtered(json!({"category": "ACME/OPS"})),
        ["acme/rotate_keys", "acme/sync_logs"]
    );
    assert_eq!(
        filtered(json!({"category": ["acme/data"]})),
        ["acme/publish_tables"]
    );
    assert_eq!(
        filtered(json!({"category": "!acme/ops"})),
        ["acme/publish_tables"]
    );
    assert_eq!(
        filtered(json!({"version": ">=1.2.0"})),
        ["acme/publish_tables", "acme/sync_logs"]
    );
    assert_eq!(filtered(json!({"version": "<1"})), ["acme/rotate_keys"]);
    assert_eq!(
        filtered(json!({"source": "project", "tool_type": "python"})).len(),
        3
    );
    assert!(filtered(json!({"owner": "ada"})).is_empty());
    assert!(filtered(json!({"signed": true})).is_empty());
    assert_eq!(filtered(json!({"signed": false})).len(), 3);
    let knowledge = |filters: Json| {
        let filters = filters
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        ids(
            &h,
            &SearchRequest {
                filters,
                ..SearchRequest::new(ItemKind::Knowledge, "")
            },
        )
    };
    assert_eq!(knowledge(json!({"tags": "friday"})), ["acme/notes"]);
    assert_eq!(knowledge(json!({"tags": ["friday", "x"]})), ["acme/notes"]);
    assert_eq!(
        knowledge(json!({"date_from": "2026-01-01"})),
        ["acme/notes"]
    );
    assert_eq!(knowledge(json!({"date_to": "2026-01-01"})), ["acme/older"]);
}

#[test]
fn results_sort_by_score_name_or_date() {
    let h = tree();
    let sorted = |sort_by, kind| {
        ids(
            &h,
            &SearchRequest {
                sort_by,
                ..SearchRequest::new(kind, "")
            },
        )
    };
    assert_eq!(
        sorted(SortBy::Name, ItemKind::Tool),
        ["acme/publish_tables", "acme/rotate_keys", "acme/sync_logs"]
    );
    assert_eq!(
        sorted(SortBy::Date, ItemKind::Knowledge),
        ["acme/notes", "acme/older"]
    );
    // Both titles hold "deploy" (3 of 10.5): the id breaks the tie.
    let by_score = ids(&h, &SearchRequest::new(ItemKind::Knowledge, "deploy"));
    assert_eq!(by_score, ["acme/notes", "acme/older"]);
}

#[test]
fn proximity_keeps_items_whose_terms_are_near() {
    let h = tree();
    let near = |max| SearchRequest {
        proximity: Some(max),
        ..tool("sync archive")
    };
    // "sync" and "archive" are 7 words apart in the description ("sync logs from the gateway to
    // the archive") and in the preview, which holds the description line.
    assert_eq!(ids(&h, &near(7)), ["acme/sync_logs"]);
    assert!(ids(&h, &near(2)).is_empty());
    assert_eq!(ids(&h, &tool("sync archive")), ["acme/sync_logs"]);
}

#[test]
fn a_query_that_does_not_parse_names_the_column() {
    let h = tree();
    for (q, text) in [
        (
            "(tables",
            "Invalid query: unclosed parenthesis \"(\" opened at column 1",
        ),
        (
            "tables AND",
            "Invalid query: AND needs a term after it at column 8",
        ),
        (
            "a \"b",
            "Invalid query: unclosed quote '\"' opened at column 3",
        ),
        ("x)", "Invalid query: unexpected \")\" at column 2"),
    ] {
        let err = h.analysis().search(&tool(q)).unwrap_err();
        assert_eq!(err.to_string(), text, "{q}");
    }
    let bad_field = SearchRequest {
        fields: vec![("name".into(), "OR".into())],
        ..tool("")
    };
    assert_eq!(
        h.analysis().search(&bad_field).unwrap_err().to_string(),
        "Invalid query for field `name`: OR needs a term before it at column 1"
    );
}

#[test]
fn an_edit_recomputes_one_files_search_document() {
    use ryechain::facts::search::search_doc;
    use ryechain::testing::query_ran;
    let mut h = ryechain::testing::host_with(TREE, Default::default());
    assert!(h.db().enable_event_log(), "the host records");
    assert_eq!(ids(&h, &tool("archive")), ["acme/sync_logs"]);
    let _ = h.db().take_executed_keys();
    assert_eq!(ids(&h, &tool("archive")), ["acme/sync_logs"]);
    let log = h.db().take_executed_keys();
    let file = |h: &Host, rel: &str| {
        h.db()
            .file_at(std::path::Path::new(&format!("/fixture/project/.ai/{rel}")))
            .expect("loaded")
    };
    let (sync, rotate) = (
        file(&h, "tools/acme/sync_logs.py"),
        file(&h, "tools/acme/rotate_keys.yaml"),
    );
    assert!(
        !query_ran(h.db(), &log, search_doc, sync),
        "a second search reads memos"
    );
    let edited = FixtureFile {
        space: Space::Project,
        rel: "tools/acme/rotate_keys.yaml".to_owned(),
        text: "version: \"0.3.0\"\ntool_type: python\nexecutor_id: rye/core/runtimes/python/script\ncategory: acme/ops\ndescription: \"Rotate keys into the archive\"\n".to_owned(),
    };
    h.apply(Change {
        files: vec![FileChange::Write(file_spec(&edited))],
        ..Change::default()
    });
    let mut found = ids(&h, &tool("archive"));
    found.sort();
    assert_eq!(found, ["acme/rotate_keys", "acme/sync_logs"]);
    let log = h.db().take_executed_keys();
    assert!(
        query_ran(h.db(), &log, search_doc, rotate),
        "the edited file's document"
    );
    assert!(
        !query_ran(h.db(), &log, search_doc, sync),
        "no other file's"
    );
}

// ---- `ryechain search` ------------------------------------------------------------------------

const BIN: &str = env!("CARGO_BIN_EXE_ryechain");

/// `ryechain search <args>` in a temporary project holding the fixture's project tools.
fn cli(args: &[&str]) -> (i32, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    for f in ryechain::testing::parse_fixture(TREE) {
        if f.space == Space::Project {
            let path = project.join(".ai").join(&f.rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &f.text).unwrap();
        }
    }
    let out = Command::new(BIN)
        .arg("search")
        .args(args)
        .current_dir(&project)
        .env("HOME", tmp.path())
        .env_remove("USER_SPACE")
        .env_remove("RYE_SYSTEM_SPACE")
        .stdin(Stdio::null())
        .output()
        .expect("spawn ryechain");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_prints_a_ranked_list_and_exits_by_what_it_found() {
    let (code, out, err) = cli(&["gateway"]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "0.2857  acme/rotate_keys  project  Rotate signing keys of the gateway",
            "0.2857  acme/sync_logs    project  Sync logs from the gateway to the archive",
            "1–2 of 2 tools in every space",
        ],
        "{out}"
    );
    let (code, out, _) = cli(&["nothing-like-this"]);
    assert_eq!((code, out.as_str()), (1, "no tools match in every space\n"));
    let (code, out, _) = cli(&["gateway", "--offset", "5", "--source", "project"]);
    assert_eq!(
        (code, out.as_str()),
        (
            1,
            "2 tools match in the project space, none shown (offset 5, limit 10)\n"
        )
    );
    let (code, out, err) = cli(&["(gateway", "--type", "directive"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty());
    assert_eq!(
        err,
        "error: Invalid query: unclosed parenthesis \"(\" opened at column 1\n  (gateway\n  ^\n"
    );
}

#[test]
fn the_command_answers_rye_searchs_json() {
    let (code, out, err) = cli(&[
        "deploy",
        "--type",
        "knowledge",
        "--format",
        "json",
        "--limit",
        "1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(v["total"], 2);
    assert_eq!(v["item_type"], "knowledge");
    assert_eq!(v["source"], "all");
    assert_eq!(v["limit"], 1);
    assert_eq!(v["search_type"], "keyword");
    let r = &v["results"][0];
    assert_eq!(r["id"], "acme/notes");
    assert_eq!(r["type"], "knowledge");
    assert_eq!(r["source"], "project");
    assert_eq!(r["signed"], false);
    assert_eq!(r["integrity"]["status"], "unsigned");
    assert!(
        r["integrity"]["error"]
            .as_str()
            .unwrap()
            .starts_with("Unsigned item: ")
    );
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "name",
            "title",
            "description",
            "category",
            "preview",
            "source",
            "path",
            "score",
            "type",
            "metadata",
            "signed",
            "integrity"
        ]
    );
    let (code, out, _) = cli(&["a AND", "--format", "json"]);
    assert_eq!(code, 2);
    let v: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({"status": "error", "error": "Invalid query: AND needs a term after it at column 3", "query": "a AND"})
    );
}
