#!/usr/bin/env bash
# Prepare the reference's MCP server (`ryeos-mcp` from the Python package index) to serve a tree
# `examples/gen_tree` wrote, for benches/mcp_latency.py's comparison:
#
#   benches/ref_mcp_prepare.sh /tmp/t100k /tmp/t100k-ref [TOOL]
#
# 1. target/ref-venv: a virtualenv with ryeos-mcp==0.1.12 (and what it pulls: ryeos-core,
#    ryeos-engine, ryeos, lillux) and the MCP SDK before 2.0 (1.30.0 when measured): ryeos-mcp
#    asks for `mcp` unpinned, and with mcp 2.x it dies at start with "AttributeError: 'Server'
#    object has no attribute 'list_tools'" (2.0 dropped the low-level server's decorators).
# 2. A one-module package `ryechain-gen-bundle` (written to target/ref-gen-bundle, installed into
#    that virtualenv) that declares the tree's system/ as the reference's system bundle `gen`
#    through the `rye.bundles` entry point group, the one way the reference finds system spaces;
#    its root is read from RYECHAIN_GEN_SYSTEM when the server starts. The user space is
#    USER_SPACE (spec §12.10). The reference's own bundles (ryeos-core, ryeos) stay installed:
#    they hold its extractors and parsers; `gen` sorts first, so the tree's items win.
# 3. OUT: a copy of TREE with two changes, nothing else:
#    - system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml removed: ryechain's tool
#      extractor reads `executor_id` from `__executor_id__`, and the reference (0.1.12) takes an
#      item whose extractor gives an executor id other than `@primitive_chain` for data that an
#      executor tool runs, so it runs the runtime for real (and fails) instead of building the
#      chain; without that file the reference uses its own extractor (ryeos-core's, `executor_id`
#      the constant `@primitive_chain`, the other rules the same), which builds the same chain
#      (tool -> runtime -> runtime -> primitive) from `__executor_id__`;
#    - TOOL (default acme/gcp/publish_tables) signed with the reference's own signing (its
#      `sign` action, a key made by its `lillux` binary under user/.ai/config/keys/signing and
#      trusted in user/.ai/config/keys/trusted): the reference verifies the tool's signature
#      even in a dry run (ryechain does not, §12.4), and the generated tree is unsigned.
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=$(realpath "${1:?usage: ref_mcp_prepare.sh TREE OUT [TOOL]}")
OUT=${2:?usage: ref_mcp_prepare.sh TREE OUT [TOOL]}
TOOL=${3:-acme/gcp/publish_tables}
[ -d "$TREE/project/.ai" ] || { echo "no generated tree at $TREE" >&2; exit 2; }

if ! target/ref-venv/bin/python -c "import rye_mcp, mcp.server; mcp.server.Server('x').list_tools" 2>/dev/null; then
  python3 -m venv target/ref-venv
  target/ref-venv/bin/pip install -q ryeos-mcp==0.1.12 'mcp<2'
fi
if ! target/ref-venv/bin/python -c "import ryechain_gen_bundle" 2>/dev/null; then
  mkdir -p target/ref-gen-bundle/ryechain_gen_bundle
  cat > target/ref-gen-bundle/pyproject.toml <<'EOF'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "ryechain-gen-bundle"
version = "0.0.0"

[project.entry-points."rye.bundles"]
gen = "ryechain_gen_bundle:get_bundle"

[tool.setuptools]
packages = ["ryechain_gen_bundle"]
EOF
  cat > target/ref-gen-bundle/ryechain_gen_bundle/__init__.py <<'EOF'
"""A generated tree's system/ as the reference's system bundle `gen` (root: RYECHAIN_GEN_SYSTEM)."""
import os
from pathlib import Path


def get_bundle() -> dict:
    return {
        "bundle_id": "gen",
        "version": "0.0.0",
        "root_path": Path(os.environ["RYECHAIN_GEN_SYSTEM"]),
    }
EOF
  target/ref-venv/bin/pip install -q ./target/ref-gen-bundle
fi

rm -rf "$OUT"
cp -a "$TREE" "$OUT"
OUT=$(realpath "$OUT")
rm "$OUT/system/.ai/tools/rye/core/extractors/tool/tool_extractor.yaml"
USER_SPACE="$OUT/user" RYECHAIN_GEN_SYSTEM="$OUT/system" HOME="$OUT/user" \
  target/ref-venv/bin/python - "$OUT" "$TOOL" <<'EOF'
import asyncio
import sys
from pathlib import Path

from rye.actions.sign import SignTool
from rye.primitives.signing import ensure_keypair
from rye.utils.execution_context import ExecutionContext
from rye.utils.path_utils import get_signing_key_dir
from rye.utils.trust_store import TrustStore

out, tool = Path(sys.argv[1]), sys.argv[2]
_, public = ensure_keypair(get_signing_key_dir())
TrustStore(ExecutionContext.from_env(project_path=out / "project")).add_key(
    public, owner="local", version="1.0.0", space="user"
)
signed = asyncio.run(
    SignTool(str(out / "user")).handle(
        item_id=f"tool:{tool}", project_path=str(out / "project"), source="project"
    )
)
assert signed.get("status") == "signed", signed
print(f"ref_mcp_prepare: {out} ready; {tool} signed by {signed['signature']['pubkey_fp']}")
EOF
