-- Minimal init for the test children: the plugin and the test helpers on the runtimepath,
-- nothing of the user's configuration (run with --clean and isolated XDG folders).
local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h")
local plugin = vim.fn.fnamemodify(tests, ":h")
vim.opt.runtimepath:prepend(plugin)
vim.opt.runtimepath:append(tests)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.cmd("runtime plugin/dline.lua")
