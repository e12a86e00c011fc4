-- luacheck (`npm run lint:lua`) for the Neovim plugin: Lua 5.1 / LuaJIT, as Neovim 0.7.2 runs it.
std = "luajit"
-- The plugin and its tests set fields of `vim` (vim.g, vim.bo, vim.opt_local, ...).
globals = { "vim" }
-- Line length is the formatter's (StyLua, .stylua.toml).
max_line_length = false
-- The fake sidecar gets its arguments from the command line that starts it (tests/fixtures/fake-sidecar).
files["adapters/neovim/tests/fixtures/fake_sidecar.lua"] = { read_globals = { "FAKE_ARGS" } }
