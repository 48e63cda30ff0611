//! Word lists and code snippets the rendered files are made of.

pub(crate) const PROJECT_ROOTS: [&str; 4] = ["acme", "platform", "billing", "growth"];
pub(crate) const USER_ROOTS: [&str; 4] = ["personal", "lab", "team", "scratch"];
#[rustfmt::skip]
pub(crate) const DOMAINS: [&str; 30] = [
    "data", "etl", "reports", "git", "deploy", "k8s", "aws", "gcp", "payments", "search", "auth",
    "cache", "logs", "metrics", "alerts", "docs", "release", "backup", "ml", "web", "db",
    "security", "notify", "infra", "ci", "assets", "i18n", "crm", "support", "analytics",
];
#[rustfmt::skip]
pub(crate) const SUBAREAS: [&str; 18] = [
    "ingest", "export", "sync", "audit", "validate", "migrate", "scan", "index", "cleanup",
    "imports", "monitor", "rollout", "snapshot", "quality", "schedule", "archive", "transform",
    "inventory",
];
pub(crate) const LEAVES: [&str; 10] = [
    "daily", "batch", "stream", "legacy", "v2", "internal", "staging", "prod", "nightly", "adhoc",
];
#[rustfmt::skip]
pub(crate) const VERBS: [&str; 30] = [
    "fetch", "sync", "export", "import", "validate", "render", "summarize", "rotate", "prune",
    "scan", "compare", "publish", "backfill", "reindex", "snapshot", "notify", "check", "merge",
    "split", "tag", "archive", "resolve", "collect", "diff", "lint", "build", "upload", "download",
    "audit", "estimate",
];
#[rustfmt::skip]
pub(crate) const NOUNS: [&str; 35] = [
    "invoices", "orders", "users", "events", "metrics", "logs", "tickets", "releases", "commits",
    "images", "secrets", "certs", "buckets", "tables", "schemas", "dashboards", "alerts", "pages",
    "translations", "sessions", "payments", "refunds", "contracts", "leads", "builds", "artifacts",
    "queues", "indexes", "snapshots", "backups", "changelog", "deps", "licenses", "sitemaps",
    "feeds",
];
#[rustfmt::skip]
pub(crate) const PY_VARIANTS: [&str; 20] = [
    "uv", "pinned", "isolated", "traced", "profiled", "debug", "slim", "py311", "py312", "py313",
    "conda", "poetry", "pdm", "hatch", "sandboxed", "gpu", "cached", "offline", "locked",
    "vendored",
];
#[rustfmt::skip]
pub(crate) const MCP_VARIANTS: [&str; 6] = [
    "stdio-pooled", "http-retry", "stdio-sandboxed", "http-auth", "stdio-verbose", "http-proxy",
];
#[rustfmt::skip]
pub(crate) const GRAPH_VARIANTS: [&str; 5] = [
    "checkpointed", "parallel", "resumable", "dry-run", "audited",
];
#[rustfmt::skip]
pub(crate) const MCP_SERVERS: [&str; 14] = [
    "github", "gitlab", "linear", "jira", "slack", "notion", "sentry", "postgres", "filesystem",
    "context7", "stripe", "figma", "datadog", "pagerduty",
];
#[rustfmt::skip]
pub(crate) const MCP_TOOLS: [&str; 10] = [
    "list_issues", "create_issue", "search", "get_page", "query", "list_events", "post_message",
    "get_file", "list_alerts", "summarize_thread",
];
#[rustfmt::skip]
pub(crate) const HOSTS: [&str; 6] = [
    "api.example.com", "billing.internal", "hooks.acme.dev", "metrics.acme.dev", "cms.example.org",
    "id.acme.dev",
];
pub(crate) const IO_SETS: [[&str; 3]; 5] = [
    ["rows", "columns", "title"],
    ["records", "schema", "source"],
    ["report", "recipients", "subject"],
    ["artifact", "checksum", "manifest"],
    ["findings", "severity", "baseline"],
];

/// A YAML command tool: program and argv template.
pub(crate) const COMMANDS: [(&str, &[&str]); 10] = [
    ("git", &["log", "--oneline", "--no-merges", "{since}..HEAD"]),
    ("rsync", &["-az", "--delete", "{source}/", "{destination}/"]),
    (
        "kubectl",
        &[
            "rollout",
            "status",
            "deployment/{service}",
            "--namespace",
            "{namespace}",
        ],
    ),
    ("terraform", &["plan", "-input=false", "-out={plan_file}"]),
    (
        "pg_dump",
        &["--format=custom", "--file={output}", "{database_url}"],
    ),
    ("aws", &["s3", "sync", "{source}", "s3://{bucket}/{prefix}"]),
    ("docker", &["build", "--tag", "{image}:{tag}", "{context}"]),
    ("make", &["-C", "{directory}", "{target}"]),
    (
        "gcloud",
        &["run", "deploy", "{service}", "--region", "{region}"],
    ),
    ("jq", &["--raw-output", "{filter}", "{input}"]),
];

pub(crate) const SENTENCES: [&str; 10] = [
    "Reads @NOUN_H@ from the @DOMAIN@ store and writes a summary the next step can consume.",
    "Parameters arrive as JSON on stdin; the result is printed as one JSON object.",
    "Safe to re-run: records that were already processed are skipped.",
    "Set `dry_run` to see what would change without touching anything.",
    "Owned by the @DOMAIN@ team; ask them before changing the output format.",
    "Uses the project's virtualenv when one exists.",
    "Large inputs are processed in batches so memory stays flat.",
    "Failures are reported as `{\"success\": false, \"error\": ...}` instead of a traceback.",
    "Timestamps are UTC and ISO-8601 throughout.",
    "The limit parameter caps how many @NOUN_H@ are touched in one run.",
];

/// A helper function for Python tool bodies: imports it needs, its text, and an optional line
/// `execute()` uses it with. `@NOUN@` is a Python identifier fragment.
pub(crate) struct Snippet {
    pub(crate) imports: &'static [&'static str],
    pub(crate) text: &'static str,
    pub(crate) use_line: Option<&'static str>,
}

pub(crate) const SNIPPETS: [Snippet; 12] = [
    Snippet {
        imports: &["import json", "from pathlib import Path"],
        text: r#"def load_@NOUN@(path: Path) -> list:
    """Read one JSON object per line, skipping blank lines."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{line_no}: {exc}") from exc
    return records
"#,
        use_line: Some(
            r#"source = root / params.get("source", "data/@NOUN@.jsonl")
    if source.exists():
        result["count"] = len(load_@NOUN@(source)[:limit])"#,
        ),
    },
    Snippet {
        imports: &["from datetime import datetime, timedelta, timezone"],
        text: r#"def recent_@NOUN@(records: list, days: int) -> list:
    """Keep the records updated within the last `days` days."""
    cutoff = datetime.now(timezone.utc) - timedelta(days=days)
    kept = []
    for record in records:
        stamp = datetime.fromisoformat(record.get("updated_at", "1970-01-01T00:00:00+00:00"))
        if stamp >= cutoff:
            kept.append(record)
    return kept
"#,
        use_line: Some(r#"result["window_days"] = int(params.get("days", 7))"#),
    },
    Snippet {
        imports: &["from collections import defaultdict"],
        text: r#"def group_@NOUN@_by(records: list, key: str) -> dict:
    """Count records per value of `key`."""
    groups = defaultdict(list)
    for record in records:
        groups[record.get(key, "unknown")].append(record)
    return {name: len(items) for name, items in sorted(groups.items())}
"#,
        use_line: Some(
            r#"result["groups"] = group_@NOUN@_by(params.get("records", []), params.get("group_by", "status"))"#,
        ),
    },
    Snippet {
        imports: &["import subprocess", "from pathlib import Path"],
        text: r#"def run(cmd: list, cwd: Path) -> str:
    """Run a command and return its stdout; raise with its stderr on failure."""
    log.debug("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout
"#,
        use_line: Some(
            r#"if params.get("git_rev"):
        result["rev"] = run(["git", "rev-parse", params["git_rev"]], root).strip()"#,
        ),
    },
    Snippet {
        imports: &[
            "import json",
            "import urllib.parse",
            "import urllib.request",
        ],
        text: r#"def fetch_@NOUN@(base_url: str, token: str, page_size: int = 100) -> list:
    """Page through the API until an empty page comes back."""
    items, page = [], 1
    while True:
        query = urllib.parse.urlencode({"page": page, "per_page": page_size})
        request = urllib.request.Request(
            f"{base_url}/@NOUN@?{query}",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            batch = json.load(response)
        if not batch:
            return items
        items.extend(batch)
        page += 1
"#,
        use_line: None,
    },
    Snippet {
        imports: &["import hashlib", "from pathlib import Path"],
        text: r#"def checksum(path: Path, chunk_size: int = 1 << 16) -> str:
    """SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()
"#,
        use_line: Some(
            r#"if params.get("verify"):
        result["checksum"] = checksum(root / params["verify"])"#,
        ),
    },
    Snippet {
        imports: &["import csv", "from pathlib import Path"],
        text: r#"def write_@NOUN@_csv(rows: list, target: Path) -> int:
    """Write dict rows to CSV with a stable, sorted header."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fields = sorted({key for row in rows for key in row})
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
"#,
        use_line: Some(
            r#"if not dry_run and params.get("rows"):
        result["written"] = write_@NOUN@_csv(params["rows"], root / "out" / "@NOUN@.csv")"#,
        ),
    },
    Snippet {
        imports: &["import functools", "import time"],
        text: r#"def with_retries(attempts: int = 3, delay: float = 0.5):
    """Retry the decorated call on OSError with exponential backoff."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except OSError:
                    if attempt == attempts:
                        raise
                    time.sleep(delay * 2 ** (attempt - 1))

        return wrapper

    return decorate
"#,
        use_line: None,
    },
    Snippet {
        imports: &["from dataclasses import dataclass, field"],
        text: r#"@dataclass
class RunSummary:
    total: int = 0
    failed: int = 0
    skipped: int = 0
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"total": self.total, "failed": self.failed, "skipped": self.skipped, "notes": self.notes}
"#,
        use_line: Some(r#"result["summary"] = RunSummary(total=limit).as_dict()"#),
    },
    Snippet {
        imports: &["from pathlib import Path"],
        text: r#"def find_@NOUN@_files(root: Path, patterns: list) -> list:
    """Files under `root` matching any pattern, outside .git, sorted."""
    found = []
    for pattern in patterns:
        found.extend(p for p in root.rglob(pattern) if p.is_file() and ".git" not in p.parts)
    return sorted(set(found))
"#,
        use_line: Some(
            r#"result["files"] = [str(p) for p in find_@NOUN@_files(root, params.get("patterns", ["*.json"]))][:limit]"#,
        ),
    },
    Snippet {
        imports: &["import os"],
        text: r#"def settings() -> dict:
    """Connection settings from the environment."""
    return {
        "endpoint": os.environ.get("@ENV@_ENDPOINT", "http://localhost:8080"),
        "token": os.environ.get("@ENV@_TOKEN", ""),
        "dry_run": os.environ.get("@ENV@_DRY_RUN", "0") == "1",
    }
"#,
        use_line: Some(r#"result["endpoint"] = settings()["endpoint"]"#),
    },
    Snippet {
        imports: &["import re"],
        text: r#"LINE = re.compile(r"^(?P<ts>\S+) (?P<level>[A-Z]+) (?P<msg>.*)$")


def parse_@NOUN@_log(text: str) -> list:
    """Structured entries from `<timestamp> <LEVEL> <message>` lines."""
    entries = []
    for raw in text.splitlines():
        match = LINE.match(raw)
        if match:
            entries.append(match.groupdict())
    return entries
"#,
        use_line: Some(r#"result["entries"] = len(parse_@NOUN@_log(params.get("log_text", "")))"#),
    },
];

pub(crate) const SCHEMA_PARAMS: [(&str, &str); 10] = [
    ("limit", r#"{"type": "integer", "default": 100}"#),
    ("dry_run", r#"{"type": "boolean", "default": False}"#),
    (
        "since",
        r#"{"type": "string", "description": "ISO date or git revision"}"#,
    ),
    ("target", r#"{"type": "string"}"#),
    (
        "region",
        r#"{"type": "string", "enum": ["eu-west-1", "us-east-1", "ap-southeast-2"]}"#,
    ),
    (
        "batch_size",
        r#"{"type": "integer", "minimum": 1, "default": 500}"#,
    ),
    (
        "patterns",
        r#"{"type": "array", "items": {"type": "string"}}"#,
    ),
    ("days", r#"{"type": "integer", "default": 7}"#),
    (
        "source",
        r#"{"type": "string", "description": "Input file, relative to the project"}"#,
    ),
    (
        "verify",
        r#"{"type": "string", "description": "File whose checksum is reported"}"#,
    ),
];
