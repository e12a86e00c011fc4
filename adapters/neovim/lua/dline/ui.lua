--- *dline.ui* vim.ui.select and vim.ui.input, with prompts that Neovim's own versions show
--- on a line of their own.
---
--- What it does: Neovim's built-in select (inputlist()) and input (input()) leave the cursor
--- after the answer typed, and the next prompt of a dialog ran into it ("...cancels): 17ac6a50f
--- Add a comment", "Edited message: Use Apache-2.0 insteadApply the edit"). With them, a prompt
--- starts with a newline; a picker a plugin installed (telescope, fzf-lua, dressing) gets the
--- prompt as it is.
--- What it does not do: replace vim.ui (the user's picker is always the one used).

local M = {}

--- Whether `fn` is Neovim's own (runtime/lua/vim/ui.lua), not a picker plugin's.
function M.builtin(fn)
  local info = type(fn) == "function" and debug.getinfo(fn, "S") or nil
  return info ~= nil and (info.source or ""):find("vim/ui%.lua$") ~= nil
end

--- `prompt` for Neovim's own prompt functions: on a line of its own.
function M.own_line(prompt) return "\n" .. (prompt or "") end

--- vim.ui.select (see |vim.ui.select()|).
function M.select(items, opts, on_choice)
  opts = opts or {}
  if M.builtin(vim.ui.select) then
    opts = vim.tbl_extend("force", opts, { prompt = M.own_line(opts.prompt or "Select one of:") })
  end
  return vim.ui.select(items, opts, on_choice)
end

--- vim.ui.input (see |vim.ui.input()|).
function M.input(opts, on_confirm)
  opts = opts or {}
  if M.builtin(vim.ui.input) then opts = vim.tbl_extend("force", opts, { prompt = M.own_line(opts.prompt) }) end
  return vim.ui.input(opts, on_confirm)
end

return M
