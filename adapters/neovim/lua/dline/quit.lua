--- *dline.quit* Quitting Neovim while a task of this editor runs or waits for an answer.
---
--- What it does: on ExitPre (a command that would end Neovim: `:qa`, `:q` in the last window,
--- `:x`...), while a task runs or waits, marks a hidden buffer modified for the time of the
--- command, so Neovim refuses to quit as it does for unsaved changes (E37), then says why and
--- what to do. `:qa!` quits anyway: the task is then interrupted (:Dline resume continues it).
--- What it does not do: stop or cancel tasks.

local M = {}
local H = {}

H.NAME = "dline://a task is running"

local function dline() return require("dline") end

--- The buffer that holds the quit back: 'buftype' acwrite (a "write" of it does nothing), so
--- that Neovim counts it as unsaved; unlisted, and never modified outside of a quit.
function H.guard()
  if H.buf and vim.api.nvim_buf_is_valid(H.buf) then return H.buf end
  local existing = vim.fn.bufnr(H.NAME)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, false)
  vim.api.nvim_buf_set_name(buf, H.NAME)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = function() end })
  H.buf = buf
  return buf
end

--- The message after a refused quit: which tasks, and how to go on.
function M.message(busy)
  return ("%s %s: Neovim did not quit. :qa! quits anyway (the task is interrupted; :Dline resume continues it later), :Dline cancel stops it"):format(
    #busy == 1 and "task" or "tasks",
    table.concat(busy, ", ")
  )
end

--- Holds quitting back while `busy()` names tasks ({ "1a2b3c4d (running)", ... }).
function M.watch(busy)
  if H.watching then return end
  H.watching = true
  vim.api.nvim_create_autocmd("ExitPre", {
    group = vim.api.nvim_create_augroup("dline_quit", { clear = true }),
    callback = function()
      local tasks = busy()
      if #tasks == 0 then return end
      local buf = H.guard()
      local win, shown = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "(dline) " .. M.message(tasks) })
      vim.bo[buf].modified = true
      -- Runs only when Neovim did not quit.
      vim.schedule(function()
        if not vim.api.nvim_buf_is_valid(buf) then return end
        vim.bo[buf].modified = false
        -- Neovim 0.7 shows the "unsaved" buffer in the window: the window shows its own again.
        for _, w in ipairs(vim.fn.win_findbuf(buf)) do
          local back = (w == win and vim.api.nvim_buf_is_valid(shown)) and shown or vim.fn.bufnr("#")
          if back > 0 and back ~= buf then pcall(vim.api.nvim_win_set_buf, w, back) end
        end
        dline().notify(M.message(tasks), vim.log.levels.WARN)
      end)
    end,
  })
end

return M
