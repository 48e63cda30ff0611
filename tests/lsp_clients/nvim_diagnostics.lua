-- Neovim (0.7+) headless as a client of `ryechain lsp`: open the fixture workspace's tool, wait
-- for the server's diagnostics, and write them to $RYECHAIN_OUT as `line:col:code:message` rows.
-- Run by tests/lsp_clients.rs: nvim --headless --clean -c "luafile nvim_diagnostics.lua"
local bin = os.getenv("RYECHAIN_BIN")
local root = os.getenv("RYECHAIN_ROOT")
local file = os.getenv("RYECHAIN_FILE")
local out = os.getenv("RYECHAIN_OUT")

local function finish(lines, code)
  vim.fn.writefile(lines, out)
  vim.cmd(code == 0 and "qa!" or "cq!")
end

local client_id = vim.lsp.start_client({
  name = "ryechain",
  cmd = { bin, "lsp", "--ignore", "integrity" },
  root_dir = root,
  init_options = { userSpace = os.getenv("RYECHAIN_USER") },
})
if not client_id then
  finish({ "error: the client did not start" }, 1)
  return
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)

local got = vim.wait(20000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)
if not got then
  finish({ "error: no diagnostics within 20 s" }, 1)
  return
end

local rows = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
  table.insert(rows, string.format("%d:%d:%s:%s", d.lnum, d.col, code, (d.message:gsub("\n", " "))))
end
table.sort(rows)

-- A clean stop: shutdown and exit, then leave.
vim.lsp.stop_client(client_id)
vim.wait(5000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 50)
finish(rows, 0)
