--- *dline.buffers* The editor's files as Dline needs them: buffers reloaded after a tool or a
--- restore changed their file, and what the editor shows, has open and has unsaved.
---
--- What it does: re-reads loaded buffers whose file changed on disk (a buffer with unsaved
--- changes is never replaced: the user is told), and lists the visible, open and modified
--- files of a workspace for the core (environment details; edits to unsaved files are refused).
--- What it does not do: write files.

local M = {}
local H = {}

local function dline() return require("dline") end

function H.absolute(root, path)
  if path:sub(1, 1) == "/" then return vim.fn.fnamemodify(path, ":p") end
  return vim.fn.fnamemodify((root or (vim.uv or vim.loop).cwd()) .. "/" .. path, ":p")
end

--- "/a/b" -> "/a/b/" (absolute, one trailing slash).
function H.dir_prefix(root) return (vim.fn.fnamemodify(root, ":p"):gsub("/+$", "")) .. "/" end

--- Whether `buf` is a buffer of a file (not a scratch, help or terminal buffer).
function H.is_file_buffer(buf)
  return vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= ""
end

--- Re-reads buffer `buf` from its file, keeping the view of every window showing it.
function H.reread(buf)
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  vim.api.nvim_buf_call(buf, function() vim.cmd("silent! edit!") end)
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_call(win, function() vim.fn.winrestview(view) end) end
  end
end

--- Reloads the loaded buffers of `paths` (absolute or relative to `root`) whose file changed.
--- A buffer with unsaved changes is kept, and the user is told what happened (`why`), unless
--- `opts.quiet` (the caller shows the warning with its own message). Returns the buffers
--- reloaded, those kept, and the warning (nil when none was kept).
function M.reload(root, paths, why, opts)
  local reloaded, kept = {}, {}
  for _, p in ipairs(paths or {}) do
    local buf = vim.fn.bufnr(H.absolute(root, p))
    if buf ~= -1 and H.is_file_buffer(buf) then
      if vim.bo[buf].modified then
        table.insert(kept, buf)
      else
        H.reread(buf)
        table.insert(reloaded, buf)
      end
    end
  end
  local warning
  if #kept > 0 then
    local names = vim.tbl_map(function(b) return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ":~:.") end, kept)
    warning = ("%s changed %s on disk, but its buffer has unsaved changes: your buffer was kept (:e! loads the file)"):format(
      why or "Dline",
      table.concat(names, ", ")
    )
    if not (opts and opts.quiet) then dline().notify(warning, vim.log.levels.WARN) end
  end
  return reloaded, kept, warning
end

--- The text a buffer would write (its lines, and the last newline unless 'eol' is off).
function H.buffer_text(buf)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then text = text .. "\n" end
  return text
end

--- Files larger than this are compared by :checktime's time and size only.
H.COMPARE_MAX_BYTES = 4 * 1024 * 1024

--- Reloads every unmodified file buffer under `root` whose file now differs from it (after a
--- command, which may change any file, twice in the same second and to the same size, which
--- :checktime alone would miss). Buffers with unsaved changes are left as they are.
function M.reload_changed(root)
  local prefix = root and H.dir_prefix(root) or nil
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if H.is_file_buffer(buf) and not vim.bo[buf].modified then
      local name = vim.api.nvim_buf_get_name(buf)
      if not prefix or name:sub(1, #prefix) == prefix then
        local stat = (vim.uv or vim.loop).fs_stat(name)
        if stat and stat.type == "file" and stat.size <= H.COMPARE_MAX_BYTES then
          local f = io.open(name, "rb")
          local text = f and f:read("*a")
          if f then f:close() end
          if text and text ~= H.buffer_text(buf) then H.reread(buf) end
        else
          -- Gone, or too large to compare: :checktime with autoread (no prompt).
          local autoread = vim.o.autoread
          vim.o.autoread = true
          pcall(vim.cmd, "silent! checktime " .. buf)
          vim.o.autoread = autoread
        end
      end
    end
  end
end

-- What the editor shows -------------------------------------------------------------------

function H.under(root, name)
  if not root or root == "" then return true end
  local prefix = H.dir_prefix(root)
  return name:sub(1, #prefix) == prefix
end

--- The editor's state for a task in `root` (absolute paths): visible files (in windows of the
--- current tab page), open files (loaded buffers) and unsaved files (modified buffers).
function M.editor_state(root)
  local visible, open, unsaved, seen = {}, {}, {}, {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    local name = vim.api.nvim_buf_get_name(buf)
    if H.is_file_buffer(buf) and H.under(root, name) and not seen[name] then
      seen[name] = true
      table.insert(visible, name)
    end
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if H.is_file_buffer(buf) and vim.bo[buf].buflisted and H.under(root, name) then
      table.insert(open, name)
      if vim.bo[buf].modified then table.insert(unsaved, name) end
    end
  end
  return { visibleFiles = visible, openFiles = open, unsavedFiles = unsaved }
end

--- Calls `fn()` (soon, once for a burst) whenever a file buffer may have become modified or
--- saved, or went away. Changes are seen through nvim_buf_attach, which also sees changes
--- made through the API (BufModifiedSet and TextChanged are fired only from the main loop's
--- checks, not for every change).
function M.on_unsaved_change(fn)
  H.listeners = H.listeners or {}
  table.insert(H.listeners, fn)
  if H.watching then return end
  H.watching = true
  local function notify()
    if H.pending then return end
    H.pending = true
    vim.schedule(function()
      H.pending = false
      for _, listener in ipairs(H.listeners) do
        pcall(listener)
      end
    end)
  end
  H.attached = {}
  local function attach(buf)
    if H.attached[buf] or not H.is_file_buffer(buf) then return end
    H.attached[buf] = true
    vim.api.nvim_buf_attach(buf, false, {
      -- One scheduled check per burst of changes; it reports only what differs.
      on_lines = notify,
      on_detach = function() H.attached[buf] = nil end,
    })
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    attach(buf)
  end
  local group = vim.api.nvim_create_augroup("dline_buffers", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(args)
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(args.buf) then attach(args.buf) end
      end)
      notify()
    end,
  })
  vim.api.nvim_create_autocmd({ "BufModifiedSet", "BufWritePost", "BufDelete" }, { group = group, callback = notify })
end

return M
