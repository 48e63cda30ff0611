"""ryechain's language server driven by pytest-lsp (a client nobody on the project wrote).

Run by tests/lsp_clients.rs with RYECHAIN_BIN set: open a tool with a typo in its executor id,
get the diagnostic, apply the quick fix, see it cleared; hover, go to the definition of an
embedded runtime (materialised read-only under the cache dir), complete an id, list symbols.
"""

import asyncio
import os
import pathlib
import stat
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = pathlib.Path(tempfile.mkdtemp(prefix="ryechain-pytest-lsp-"))
PROJECT = ROOT / "project"
USER = ROOT / "user"
CACHE = ROOT / "cache"

RUNTIME = "rye/core/runtimes/python/script"
TYPO = "rye/core/runtimes/python/scirpt"


def tool(executor: str) -> str:
    return (
        '"""A tool."""\n\n'
        '__version__ = "1.0.0"\n'
        '__tool_type__ = "python"\n'
        f'__executor_id__ = "{executor}"\n'
        '__category__ = "acme"\n'
        '__tool_description__ = "d"\n\n\n'
        "def main(params):\n    return {}\n"
    )


TOOL = PROJECT / ".ai" / "tools" / "acme" / "digest.py"
TOOL.parent.mkdir(parents=True, exist_ok=True)
TOOL.write_text(tool(TYPO))
(USER / ".ai" / "tools").mkdir(parents=True, exist_ok=True)
URI = TOOL.as_uri()
LINE = 4  # 0-based line of __executor_id__
COL = tool(TYPO).splitlines()[LINE].index("rye/")


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(
        server_command=[os.environ["RYECHAIN_BIN"], "lsp", "--ignore", "integrity"],
        server_env={**os.environ, "XDG_CACHE_HOME": str(CACHE), "HOME": str(ROOT)},
    ),
)
async def client(request, lsp_client: LanguageClient):
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams):
        lsp_client.registrations.extend(params.registrations)

    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=PROJECT.as_uri(),
        initialization_options={"userSpace": str(USER)},
    )
    result = await lsp_client.initialize_session(params)
    assert result.server_info.name == "ryechain"
    yield
    await lsp_client.shutdown_session()


async def diagnostics_for(client: LanguageClient, uri: str, want):
    """The diagnostics of `uri` once they satisfy `want`: pulled (`textDocument/diagnostic`) when
    the client's capabilities say it pulls, else as pushed (`publishDiagnostics`)."""
    pull = client.capabilities.text_document.diagnostic is not None
    for _ in range(100):
        if pull:
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            got = list(report.items)
            if want(got):
                return got
            await asyncio.sleep(0.05)
            continue
        got = client.diagnostics.get(uri)
        if got is not None and want(got):
            return got
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    raise AssertionError(f"no matching diagnostics for {uri}: {client.diagnostics.get(uri)}")


@pytest.mark.asyncio(loop_scope="function")
async def test_typo_diagnostic_quick_fix_and_clear(client: LanguageClient):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=URI, language_id="python", version=1, text=tool(TYPO)
            )
        )
    )
    diags = await diagnostics_for(
        client, URI, lambda ds: any(d.code == "missing-executor" for d in ds)
    )
    d = next(d for d in diags if d.code == "missing-executor")
    caps = client.capabilities.workspace.did_change_watched_files
    if caps and caps.dynamic_registration:
        watch = [r for r in client.registrations if r.method == "workspace/didChangeWatchedFiles"]
        globs = [w["globPattern"] for w in watch[0].register_options["watchers"]]
        assert "**/.ai/**" in globs, globs
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.range.start.line == LINE
    assert d.code_description.href.endswith("/rules/missing-executor.md")
    page = pathlib.Path(d.code_description.href.removeprefix("file://"))
    assert page.read_text().startswith("# missing-executor")

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    fix = actions[0]
    assert fix.kind == types.CodeActionKind.QuickFix
    edit = fix.edit.changes[URI][0]
    assert edit.new_text == RUNTIME
    assert (edit.range.start.line, edit.range.start.character) == (LINE, COL)

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
            ],
        )
    )
    await diagnostics_for(client, URI, lambda ds: len(ds) == 0)


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_definition_completion_symbols(client: LanguageClient):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=URI, language_id="python", version=1, text=tool(RUNTIME)
            )
        )
    )
    at = types.Position(line=LINE, character=COL + 4)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=at)
    )
    assert f"`{RUNTIME}`" in hover.contents.value
    assert "rye/core/primitives/subprocess" in hover.contents.value

    loc = await client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=URI), position=at)
    )
    target = pathlib.Path(loc.uri.removeprefix("file://"))
    assert target.is_relative_to(CACHE), target
    assert target.name == "script.yaml"
    assert "tool_type: runtime" in target.read_text()
    assert not target.stat().st_mode & stat.S_IWUSR, "the copy is read-only"

    typing = tool("rye/core/runtimes/py")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typing)],
        )
    )
    end = typing.splitlines()[LINE].index('"rye/') + 1 + len("rye/core/runtimes/py")
    items = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=types.Position(line=LINE, character=end),
        )
    )
    labels = [i.label for i in items.items]
    assert RUNTIME in labels, labels
    assert all(label.startswith("rye/core/runtimes/py") for label in labels), labels

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=tool(RUNTIME))],
        )
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    assert [s.name for s in symbols] == [
        "version",
        "tool_type",
        "executor_id",
        "category",
        "description",
    ]
