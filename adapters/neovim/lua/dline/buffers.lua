--- *dline.buffers* The editor's files as Dline needs them: buffers reloaded after a tool or a
--- restore changed their file, and what the editor shows, has open and has unsaved.
---
--- What it does: re-reads loaded buffers whose file changed on disk (a buffer with unsaved
--- changes is never replaced: the user is told), wipes the unmodified buffer of a file that
--- was deleted (and marks a modified one as no longer on disk), and lists the visible, open
--- and modified files of a workspace for the core (environment details; edits to unsaved
--- files are refused).
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

--- The buffer whose name is `name` exactly (bufnr() would read `name` as a pattern: a file
--- named `[id].js` would find another buffer), or nil.
function H.buffer_of(name)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == name then return buf end
  end
  local buf = vim.fn.bufnr(name)
  if buf ~= -1 and vim.fn.resolve(vim.api.nvim_buf_get_name(buf)) == vim.fn.resolve(name) then return buf end
end

function H.exists(name) return (vim.uv or vim.loop).fs_stat(name) ~= nil end

H.NOT_ON_DISK = vim.api.nvim_create_namespace("dline_not_on_disk")

--- Marks buffer `buf` (unsaved changes, its file deleted) as no longer on disk: b:dline_not_on_disk
--- (for a statusline) and a warning at the end of its first line, until the file exists again
--- (you saved it, or it came back and you loaded it).
function H.mark_not_on_disk(buf, text)
  vim.b[buf].dline_not_on_disk = true
  vim.api.nvim_buf_clear_namespace(buf, H.NOT_ON_DISK, 0, -1)
  vim.api.nvim_buf_set_extmark(buf, H.NOT_ON_DISK, 0, 0, {
    virt_text = { { "  " .. text, "WarningMsg" } },
    virt_text_pos = "eol",
  })
  if H.marked and H.marked[buf] then return end
  H.marked = H.marked or {}
  H.marked[buf] = true
  vim.api.nvim_create_autocmd({ "BufWritePost", "BufReadPost", "BufFilePost" }, {
    buffer = buf,
    callback = function()
      if not H.exists(vim.api.nvim_buf_get_name(buf)) then return end
      H.unmark(buf)
      return true
    end,
  })
end

function H.unmark(buf)
  if H.marked then H.marked[buf] = nil end
  if not vim.api.nvim_buf_is_valid(buf) then return end
  vim.b[buf].dline_not_on_disk = nil
  vim.api.nvim_buf_clear_namespace(buf, H.NOT_ON_DISK, 0, -1)
end

--- Wipes buffer `buf` (no unsaved changes) after its file was deleted: each window that shows
--- it shows its alternate buffer instead (else another listed buffer, else an empty one), so
--- no window closes.
function H.wipe(buf)
  local empty
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local alt = vim.api.nvim_win_call(win, function() return vim.fn.bufnr("#") end)
    local other
    if alt > 0 and alt ~= buf and vim.fn.buflisted(alt) == 1 then other = alt end
    if not other then
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if b ~= buf and vim.fn.buflisted(b) == 1 then
          other = b
          break
        end
      end
    end
    if not other then
      empty = empty or vim.api.nvim_create_buf(true, false)
      other = empty
    end
    pcall(vim.api.nvim_win_set_buf, win, other)
  end
  pcall(vim.api.nvim_buf_delete, buf, { force = true })
end

--- Reloads the loaded buffers of `paths` (absolute or relative to `root`) whose file changed.
--- A buffer with unsaved changes is kept, and the user is told what happened (`why`), unless
--- `opts.quiet` (the caller shows the warning with its own message). When a file was deleted:
--- its buffer without unsaved changes is wiped (re-read, it would be empty, and `:w` would
--- write an empty file); one with unsaved changes keeps its text and is marked as no longer
--- on disk. Returns the buffers reloaded, those kept, and the warning (nil when none was kept
--- or wiped).
function M.reload(root, paths, why, opts)
  why = why or "Dline"
  local reloaded, kept, gone, wiped = {}, {}, {}, {}
  for _, p in ipairs(paths or {}) do
    local name = H.absolute(root, p)
    local buf = H.buffer_of(name)
    local file_buffer = buf and vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= ""
    if file_buffer and not H.exists(name) then
      if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
        H.mark_not_on_disk(
          buf,
          ("not on disk: %s deleted the file (:w writes your text back)"):format((why:gsub("^The ", "the ")))
        )
        table.insert(gone, buf)
      else
        -- Unloaded, or no unsaved changes: nothing of yours is in it (:Dline undo brings
        -- back a file a restore deleted). One neither loaded nor listed (a quickfix entry's,
        -- Compare's list) was never open: it goes without a word.
        if vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buflisted then
          table.insert(wiped, vim.fn.fnamemodify(name, ":~:."))
        end
        H.wipe(buf)
      end
    elseif file_buffer and vim.api.nvim_buf_is_loaded(buf) then
      if vim.b[buf].dline_not_on_disk then H.unmark(buf) end
      if vim.bo[buf].modified then
        table.insert(kept, buf)
      else
        H.reread(buf)
        table.insert(reloaded, buf)
      end
    end
  end
  local lines = {}
  local function names(bufs)
    return table.concat(
      vim.tbl_map(function(b) return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ":~:.") end, bufs),
      ", "
    )
  end
  if #kept > 0 then
    table.insert(
      lines,
      ("%s changed %s on disk, but its buffer has unsaved changes: your buffer was kept (:e! loads the file)"):format(
        why,
        names(kept)
      )
    )
  end
  if #gone > 0 then
    table.insert(
      lines,
      ("%s deleted %s, but its buffer has unsaved changes: your text was kept, marked as not on disk (:w writes it back as the file)"):format(
        why,
        names(gone)
      )
    )
  end
  if #wiped > 0 then
    table.insert(
      lines,
      ("%s deleted %s: %s"):format(
        why,
        table.concat(wiped, ", "),
        #wiped == 1 and "its buffer (no unsaved changes) was closed" or "their buffers (no unsaved changes) were closed"
      )
    )
  end
  vim.list_extend(kept, gone)
  local warning = #lines > 0 and table.concat(lines, "\n") or nil
  if warning and not (opts and opts.quiet) then dline().notify(warning, vim.log.levels.WARN) end
  return reloaded, kept, warning
end

--- The loaded buffers with unsaved changes among the files `paths` (relative to `root`, or
--- absolute), in the order of `paths`: { buf, path } each (`path` as given).
function M.modified(root, paths)
  local out = {}
  for _, p in ipairs(paths or {}) do
    local buf = H.buffer_of(H.absolute(root, p))
    if buf and H.is_file_buffer(buf) and vim.bo[buf].modified then table.insert(out, { buf = buf, path = p }) end
  end
  return out
end

--- Writes buffers `bufs` (|:write| in each, so the user's write autocommands run), stopping at
--- the first that cannot be written: returns nil, or the error and the buffer that failed.
function M.save(bufs)
  for _, buf in ipairs(bufs) do
    if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
      local ok, err = pcall(vim.api.nvim_buf_call, buf, function() vim.cmd("silent write") end)
      if not ok or vim.bo[buf].modified then
        -- The Vim error ("E45: 'readonly' option is set ..."), without the Lua traceback.
        local text = tostring(err or "still modified after :write")
        return text:match("(E%d+:[^\n]*)") or text:match("^[^\n]*"), buf
      end
    end
  end
end

--- The text a buffer would write (its lines, and the last newline unless 'eol' is off).
function H.buffer_text(buf)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then text = text .. "\n" end
  return text
end

--- Files larger than this are compared by :checktime's time and size only.
H.COMPARE_MAX_BYTES = 4 * 1024 * 1024

--- The names of the loaded file buffers under `root` whose file exists now (a set): taken when
--- a command starts, to tell the files it deleted from buffers of files never written.
function M.existing(root)
  local prefix = root and H.dir_prefix(root) or nil
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if H.is_file_buffer(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      if (not prefix or name:sub(1, #prefix) == prefix) and H.exists(name) then out[name] = true end
    end
  end
  return out
end

--- Reloads every unmodified file buffer under `root` whose file now differs from it (after a
--- command, which may change any file, twice in the same second and to the same size, which
--- :checktime alone would miss). Buffers with unsaved changes are left as they are.
--- `existed` (M.existing when the command started): a buffer of a file among them that is gone
--- now was deleted by the command, and goes as after a tool or a restore deleted it (M.reload:
--- wiped, or kept and marked when it has unsaved changes, and said so).
function M.reload_changed(root, existed)
  local prefix = root and H.dir_prefix(root) or nil
  local deleted = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = H.is_file_buffer(buf) and vim.api.nvim_buf_get_name(buf) or ""
    if existed and existed[name] and not H.exists(name) then
      table.insert(deleted, name)
    elseif H.is_file_buffer(buf) and not vim.bo[buf].modified then
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
  if #deleted > 0 then M.reload(root, deleted, "The command") end
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
