--- *dline.disk_watch* Buffers follow their files when something else changes them on disk:
--- a restore made in another window or from the CLI, a command another window's task ran.
--- Neovim itself looks again only on focus or |:checktime|, while VS Code and JetBrains show
--- such a change at once; a Dline user moves between them, and a stale buffer here would be
--- written back over the restore by the next :w.
---
--- What it does: one libuv watch per folder holding a loaded file buffer (a folder's watch,
--- unlike a file's, survives the temporary file and rename a restore writes with); once a
--- changed file settles, |:checktime| on its buffer, which 'autoread' reloads.
--- What it does not do: touch a buffer with unsaved changes (Neovim warns when it is written),
--- the buffer of a deleted file, or anything when 'autoread' is off.

local M = {}
local H = {}
H.__index = H

local uv = vim.uv or vim.loop

--- How long a folder stays quiet before its changed files are checked (a write in parts, a
--- restore of many files: one check each).
H.SETTLE_MS = 100

--- Starts watching the folders of the loaded file buffers, and of each buffer read or written
--- from now on. `group`: the augroup for its autocommands (cleared by the caller on stop).
---@return table watcher with :stop()
function M.start(group)
  local self = setmetatable({ dirs = {}, group = group }, H)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    self:watch_buffer(buf)
  end
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufFilePost", "BufNewFile" }, {
    group = group,
    callback = function(args) self:watch_buffer(args.buf) end,
  })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    -- After the unload: the buffer still counts as loaded while its autocommands run.
    callback = function()
      vim.schedule(function() self:sweep() end)
    end,
  })
  return self
end

function H.file_buffer_name(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then return nil end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or name:find("^%a[%w+.-]*://") then return nil end
  return name
end

function H:watch_buffer(buf)
  if not vim.api.nvim_buf_is_valid(buf) then return end
  local name = H.file_buffer_name(buf)
  if not name then return end
  local dir = vim.fn.fnamemodify(name, ":p:h")
  if self.dirs[dir] then return end
  local stat = uv.fs_stat(dir)
  if not stat or stat.type ~= "directory" then return end
  local handle = uv.new_fs_event()
  if not handle then return end
  local entry = { handle = handle, changed = {}, timer = nil }
  local ok = handle:start(dir, {}, function(err, filename)
    if err then return end
    -- Without a name (some systems), every buffer of the folder is checked.
    entry.changed[filename or ""] = true
    if entry.timer then entry.timer:stop() end
    entry.timer = entry.timer or uv.new_timer()
    entry.timer:start(H.SETTLE_MS, 0, function()
      local changed = entry.changed
      entry.changed = {}
      vim.schedule(function() self:check(dir, changed) end)
    end)
  end)
  if ok ~= 0 and ok ~= true then
    handle:close()
    return
  end
  self.dirs[dir] = entry
end

--- Checks the unmodified buffers of the files of `dir` named in `changed` ("" for all).
function H:check(dir, changed)
  if not self.dirs[dir] then return end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = H.file_buffer_name(buf)
    if name and vim.fn.fnamemodify(name, ":p:h") == dir then
      local base = vim.fn.fnamemodify(name, ":t")
      if
        (changed[base] or changed[""])
        and not vim.bo[buf].modified
        and uv.fs_stat(name) ~= nil
        and H.autoread(buf)
      then
        vim.cmd(("silent! checktime %d"):format(buf))
      end
    end
  end
end

--- 'autoread' for `buf`: its local value when it has one, else the global one.
function H.autoread(buf)
  local ok, value = pcall(vim.api.nvim_buf_get_option, buf, "autoread")
  if ok and type(value) == "boolean" then return value end
  return vim.o.autoread
end

--- Stops the watches of folders no loaded file buffer is in any more.
function H:sweep()
  local used = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = H.file_buffer_name(buf)
    if name then used[vim.fn.fnamemodify(name, ":p:h")] = true end
  end
  for dir in pairs(self.dirs) do
    if not used[dir] then self:unwatch(dir) end
  end
end

function H:unwatch(dir)
  local entry = self.dirs[dir]
  if not entry then return end
  self.dirs[dir] = nil
  if entry.timer then
    entry.timer:stop()
    entry.timer:close()
  end
  entry.handle:stop()
  entry.handle:close()
end

function H:stop()
  for dir in pairs(self.dirs) do
    self:unwatch(dir)
  end
end

return M
