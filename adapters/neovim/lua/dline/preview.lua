--- *dline.preview* The change an approval is about, shown before the choice.
---
--- What it does: for an edit approval, opens a tab per changed file in diff mode: the file as
--- it is (its buffer when loaded, else the text the core read) against the proposed text, with
--- keymaps to answer (ga approve, gr deny, gA / gR with feedback, q close). A file too large to
--- send whole shows the core's unified diff of the change instead; one whose file as it is was
--- left out (binary, or too large to read) shows what the edit writes under a line saying what
--- it replaces, or, when that too was left out, the sizes. The tab closes when the
--- question is answered, from here or anywhere else.
--- What it does not do: decide anything (dline.task answers) or write the file.

local render = require("dline.chat_render")

local M = {}
local H = {}

M.KEYS = {
  { "ga", "approve", "approve this change" },
  { "gA", "approve_feedback", "approve with feedback" },
  { "gr", "deny", "deny this change" },
  { "gR", "deny_feedback", "deny with feedback" },
  { "q", "close", "close the preview (the question stays)" },
}

function H.scratch(name, text, filetype, crlf)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  -- An empty text leaves the buffer with no lines (see dline.diff_sides).
  require("dline.diff_sides").set_text(buf, text, crlf)
  vim.bo[buf].modifiable = false
  if filetype and filetype ~= "" then vim.bo[buf].filetype = filetype end
  return buf
end

--- Window options a new window copies from the one it was opened from (the chat sidebar sets
--- them): a preview window takes the global values, so it folds and numbers like any other.
H.inherited = {
  "foldmethod",
  "foldexpr",
  "foldtext",
  "foldlevel",
  "fillchars",
  "wrap",
  "linebreak",
  "number",
  "relativenumber",
  "signcolumn",
  "winfixwidth",
  "winfixheight",
}

function H.plain_window(win)
  vim.api.nvim_win_call(win, function()
    for _, name in ipairs(H.inherited) do
      vim.cmd("setlocal " .. name .. "<")
    end
  end)
end

function H.filetype(path)
  -- 0.8+; 0.7's vim.filetype.match(name, buf) sets the filetype of a buffer instead.
  if vim.fn.has("nvim-0.8") == 0 then return "" end
  local ok, ft = pcall(vim.filetype.match, { filename = path })
  if ok and type(ft) == "string" then return ft end
  return ""
end

--- What the text an edit writes replaces, when the file as it is was left out.
function H.replaced(edit)
  local size = render.bytes(edit.originalSize)
  local now = edit.originalBinary and ("binary, %s, not shown"):format(size) or ("%s, too large to show"):format(size)
  local lines = render.written_lines(edit)
  return ("%s as it is now: %s.\nOnce approved, the text below replaces it whole (%s, %d line%s)."):format(
    render.one_line(edit.path),
    now,
    render.bytes(edit.proposedSize),
    #lines,
    #lines == 1 and "" or "s"
  )
end

--- Gives the window saying what an edit's text replaces the height of its lines, wrapped at
--- its width now (a narrower screen wraps them on more lines), but at most half the screen:
--- the text the edit writes, below it, stays in view.
function H.fit_description(win)
  if not vim.api.nvim_win_is_valid(win) then return end
  local height
  if vim.api.nvim_win_text_height then
    height = vim.api.nvim_win_text_height(win, {}).all
  else
    -- 0.9 and older: count the wrapped lines (the window shows no line numbers or signs of
    -- its own, but 'number' may be set for every window).
    local info = vim.fn.getwininfo(win)[1] or {}
    local width = math.max(vim.api.nvim_win_get_width(win) - (info.textoff or 0), 1)
    height = 0
    for _, line in ipairs(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)) do
      height = height + math.max(1, math.ceil(vim.fn.strdisplaywidth(line) / width))
    end
  end
  local room = math.max(1, math.floor((vim.o.lines - vim.o.cmdheight - 2) / 2))
  height = math.max(1, math.min(height, room))
  if vim.api.nvim_win_get_height(win) ~= height then pcall(vim.api.nvim_win_set_height, win, height) end
end

--- Fits the preview's description windows again when the screen or a window changes size
--- (:set lines= / columns=, a terminal resized, a split in the preview's tab), and when their
--- tab page is entered (a tab page in the background keeps its old layout until then).
function H.watch_sizes(preview)
  H.count = (H.count or 0) + 1
  preview.augroup = vim.api.nvim_create_augroup("dline_preview_sizes_" .. H.count, { clear = true })
  local events = { "VimResized", "TabEnter" }
  if vim.fn.exists("##WinResized") == 1 then table.insert(events, "WinResized") end
  vim.api.nvim_create_autocmd(events, {
    group = preview.augroup,
    callback = function()
      for _, win in ipairs(preview.descriptions) do
        if
          vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_get_current_tabpage()
        then
          H.fit_description(win)
        end
      end
    end,
  })
end

function H.keymaps(buf, answer)
  for _, key in ipairs(M.KEYS) do
    vim.keymap.set(
      "n",
      key[1],
      function() answer(key[2]) end,
      { buffer = buf, desc = "Dline: " .. key[3], nowait = true }
    )
  end
end

--- `text`'s first characters that fit in `width` screen cells.
function H.head(text, width)
  local out, used = {}, 0
  for _, char in ipairs(vim.fn.split(text, [[\zs]])) do
    used = used + vim.fn.strdisplaywidth(char)
    if used > width then break end
    table.insert(out, char)
  end
  return table.concat(out)
end

--- `text`'s last characters that fit in `width` screen cells.
function H.tail(text, width)
  local out, used = {}, 0
  local chars = vim.fn.split(text, [[\zs]])
  for i = #chars, 1, -1 do
    used = used + vim.fn.strdisplaywidth(chars[i])
    if used > width then break end
    table.insert(out, 1, chars[i])
  end
  return table.concat(out)
end

--- The keys of the preview, from the whole sentence down to the bare keys.
H.KEY_HINTS = {
  "  ga approve · gr deny · gA/gR with feedback · q close",
  "  ga approve · gr deny · q close",
  "  ga · gr · q",
}

--- The line shown under a preview tab ("Dline proposes: path (+1 -1)  ga approve · ..."),
--- in at most `width` screen cells (v:echospace): a longer message makes Neovim wait for
--- Enter before the question can even be seen. The keys are said shorter first, then the
--- path loses its beginning ("…/deep/file.txt").
function M.proposes(edit, width)
  local path, stat = render.one_line(edit.path or ""), render.edit_stat(edit)
  local head = ("Dline proposes: %s %s"):format(path, stat)
  local fits = function(text) return vim.fn.strdisplaywidth(text) <= width end
  for _, keys in ipairs(H.KEY_HINTS) do
    if fits(head .. keys) then return head .. keys end
  end
  if fits(head) then return head end
  local room = width - vim.fn.strdisplaywidth(("Dline proposes: … %s"):format(stat))
  if room >= 8 then return ("Dline proposes: …%s %s"):format(H.tail(path, room), stat) end
  return H.head(head, math.max(width - 1, 0)) .. "…"
end

---@class dline.Preview
---@field tabs integer[]
---@field close fun()

--- Opens the preview of `ask` (its `edits`) for a task in `root`. `answer(action)` is called
--- with "approve", "approve_feedback", "deny", "deny_feedback" from the keymaps. Returns nil
--- when the ask has no edit to show.
---@return dline.Preview|nil
function M.open(ask, root, answer, opts)
  opts = opts or {}
  local edits = ask.edits or {}
  if #edits == 0 then return nil end
  -- The question may come while you type (Insert mode, in a file or the input area): the
  -- preview takes the screen, and the keys that follow would land in the proposed text (shown,
  -- never written) or in your own buffer on its left. Its keys (ga, gr, q) are Normal-mode keys.
  if vim.api.nvim_get_mode().mode:match("^[iR]") then vim.cmd("stopinsert") end
  local previous_tab = vim.api.nvim_get_current_tabpage()
  local preview = { tabs = {}, scratch = {}, descriptions = {}, marked = {} }
  local max_tabs = opts.max_tabs or 8
  local function on_key(action)
    if action == "close" then return preview.close() end
    answer(action)
  end
  for i, edit in ipairs(edits) do
    if i > max_tabs then break end
    local path = (root or (vim.uv or vim.loop).cwd()) .. "/" .. edit.path
    local ft = H.filetype(path)
    vim.cmd("tabnew")
    local tab = vim.api.nvim_get_current_tabpage()
    table.insert(preview.tabs, tab)
    vim.t.dline_preview = edit.path
    local left_win = vim.api.nvim_get_current_win()
    H.plain_window(left_win)
    local placeholder = vim.api.nvim_get_current_buf()
    local current
    if edit.truncated and (edit.diff or "") ~= "" then
      -- Too large to send whole: the change as a unified diff (every changed line, in context).
      current = H.scratch("dline://proposed/" .. edit.path .. ".diff", edit.diff, "diff")
      vim.api.nvim_win_set_buf(left_win, current)
      table.insert(preview.scratch, current)
    elseif render.written_lines(edit) then
      -- The file as it is was left out (binary, or too large to read), what the edit writes
      -- was not: that text, whole, under a line that says what it replaces.
      current = H.scratch("dline://current/" .. edit.path, H.replaced(edit), "")
      vim.api.nvim_win_set_buf(left_win, current)
      table.insert(preview.scratch, current)
      vim.cmd("belowright split")
      local proposed = H.scratch("dline://proposed/" .. edit.path, edit.proposedText, ft)
      table.insert(preview.scratch, proposed)
      vim.api.nvim_win_set_buf(0, proposed)
      H.keymaps(proposed, on_key)
      -- As high as its wrapped lines, and no higher, again whenever the screen changes size.
      vim.wo[left_win].wrap = true
      vim.wo[left_win].winfixheight = true
      table.insert(preview.descriptions, left_win)
      H.fit_description(left_win)
    elseif edit.truncated then
      local status = ((edit.status or ""):gsub("^FILE_STATUS_", "")):lower()
      local sizes = render.edit_sizes(edit)
      current = H.scratch(
        "dline://proposed/" .. edit.path,
        sizes and ("%s (%s): %s. The whole file is written once approved."):format(edit.path, status, sizes)
          or ("%s (%s): not shown, binary or too large; the whole file is written once approved."):format(
            edit.path,
            status
          ),
        ""
      )
      vim.api.nvim_win_set_buf(left_win, current)
      table.insert(preview.scratch, current)
    else
      local sides = require("dline.diff_sides")
      local buf = vim.fn.bufnr(vim.fn.fnamemodify(path, ":p"))
      local yours = buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) and edit.status ~= "FILE_STATUS_ADDED"
      if
        yours
        and vim.bo[buf].fileformat == "dos"
        and (edit.proposedText or "") ~= ""
        and not sides.is_crlf(edit.proposedText)
      then
        -- Your buffer shows a CRLF file's lines without their CRs, the edit takes them off: the
        -- text the core read instead, so that every line whose ending changes shows.
        yours = false
      end
      -- A CRLF file's lines as Neovim shows them (no ^M on each), like your buffer of it.
      local dos = nil
      if yours then dos = vim.bo[buf].fileformat == "dos" end
      local crlf = sides.both_crlf(edit.originalText, edit.proposedText, dos)
      if yours then
        -- Your buffer, as it is, against the proposed text.
        current = buf
      else
        current = H.scratch("dline://current/" .. edit.path, edit.originalText or "", ft, crlf)
        table.insert(preview.scratch, current)
      end
      vim.api.nvim_win_set_buf(left_win, current)
      vim.cmd("diffthis")
      vim.cmd("rightbelow vsplit")
      local proposed = H.scratch("dline://proposed/" .. edit.path, edit.proposedText or "", ft, crlf)
      table.insert(preview.scratch, proposed)
      vim.api.nvim_win_set_buf(0, proposed)
      vim.cmd("diffthis")
      H.keymaps(proposed, on_key)
      -- A new (or empty) file against its text, or a file emptied: every line added / removed,
      -- blank ones too (Neovim 0.7 diffs no text as one empty line).
      if (edit.originalText or "") == "" and sides.is_empty(current) then
        sides.mark(left_win, vim.api.nvim_get_current_win(), (edit.proposedText or "") ~= "")
      elseif (edit.proposedText or "") == "" then
        sides.mark(vim.api.nvim_get_current_win(), left_win)
      end
      table.insert(preview.marked, current)
      table.insert(preview.marked, proposed)
    end
    if current ~= placeholder and vim.api.nvim_buf_is_valid(placeholder) and placeholder ~= current then
      pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
    end
    -- Your own buffer keeps its keymaps: the keys answer from the proposed side.
    if vim.tbl_contains(preview.scratch, current) then H.keymaps(current, on_key) end
    vim.api.nvim_echo({ { M.proposes(edit, vim.v.echospace), "MoreMsg" } }, false, {})
  end

  if #preview.descriptions > 0 then H.watch_sizes(preview) end

  local closed = false
  function preview.close()
    if closed then return end
    closed = true
    if preview.augroup then pcall(vim.api.nvim_del_augroup_by_id, preview.augroup) end
    -- Back to the tab page the preview was opened from only when it is the one shown: an
    -- answer given from another tab page (ga in the chat there) stays there.
    local current = vim.api.nvim_get_current_tabpage()
    local shown = vim.tbl_contains(preview.tabs, current)
    for _, tab in ipairs(preview.tabs) do
      if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
        for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
          pcall(vim.api.nvim_win_call, win, function() vim.cmd("diffoff") end)
        end
        local number = vim.api.nvim_tabpage_get_number(tab)
        pcall(vim.cmd, "tabclose " .. number)
      end
    end
    for _, buf in ipairs(preview.marked) do
      require("dline.diff_sides").clear(buf)
    end
    for _, buf in ipairs(preview.scratch) do
      if vim.api.nvim_buf_is_valid(buf) then pcall(vim.api.nvim_buf_delete, buf, { force = true }) end
    end
    if shown and vim.api.nvim_tabpage_is_valid(previous_tab) then
      vim.api.nvim_set_current_tabpage(previous_tab)
    elseif vim.api.nvim_tabpage_is_valid(current) then
      vim.api.nvim_set_current_tabpage(current)
    end
  end
  return preview
end

--- The windows of the preview tabs that are in diff mode (tests, :checkhealth-like checks).
function M.diff_windows(preview)
  local wins = {}
  for _, tab in ipairs(preview and preview.tabs or {}) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
        if vim.wo[win].diff then table.insert(wins, win) end
      end
    end
  end
  return wins
end

return M
