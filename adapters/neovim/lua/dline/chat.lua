--- *dline.chat* The chat buffer of one task: renders its dline.chat_state as it changes.
---
--- What it does: keeps the buffer as blocks (the header, one block per row, then the notice
--- and the pending question last) and rewrites only the lines of the blocks an event changed,
--- so streamed text appears as it arrives without redrawing the whole buffer. The chat is
--- shown in the one chat sidebar (dline.sidebar), with the one input area below it.
--- What it does not do: talk to the sidecar (dline.task does) or ask questions (dline.ask).

local state_mod = require("dline.chat_state")
local render = require("dline.chat_render")

local M = {}
local H = {}

--- The chat's highlights (the cut-off marker's), set on the lines a block shows.
H.NS = vim.api.nvim_create_namespace("dline_chat")

--- DlineCutOff: the line under an answer stopped midway. Quiet (Comment) unless a user or
--- colorscheme sets it; set again after a colorscheme clears the highlights.
function H.define_highlights() vim.cmd("highlight default link DlineCutOff Comment") end
H.define_highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("dline_chat_highlights", { clear = true }),
  callback = H.define_highlights,
})

---@class dline.Chat
---@field task_id string
---@field buf integer
---@field input_buf integer   the shared input area (dline.sidebar)
---@field state dline.ChatState
---@field blocks table[]   { key = string, lines = string[], tail = boolean, highlights = table|nil }
---@field on_send fun(text: string, restore: fun())|nil  `restore` puts the words back (the send was refused)
---@field on_wipe fun()|nil  called when the chat's buffer is wiped out (:bwipeout, the task deleted)

---@return dline.Chat
function M.new(task_id, title)
  local self = setmetatable({ task_id = task_id, blocks = {}, state = state_mod.new(task_id, title) }, { __index = M })
  H.new_buffer(self)
  self.input_buf = require("dline.sidebar").input_buffer()
  H.set_block(self, "header", render.header_lines(self.state))
  return self
end

--- Gives the chat a new buffer, with its name, its task, its keymaps and its watchers.
function H.new_buffer(self)
  local buf = H.scratch(H.buffer_name(self.task_id))
  self.buf = buf
  vim.b[buf].dline_task_id = self.task_id
  require("dline.sidebar").chat_keymaps(buf)
  -- :bdelete (or :bunload) keeps the buffer but empties it and clears its options, keymaps
  -- and variables: the events that follow would be written into a plain buffer that has lost
  -- the chat's rows (and that :w would write to a file). The chat gets a new buffer instead,
  -- drawn whole from its state, which the next :Dline chat shows.
  vim.api.nvim_create_autocmd({ "BufDelete", "BufUnload" }, {
    buffer = buf,
    callback = function()
      vim.schedule(function()
        if self.buf == buf and vim.api.nvim_buf_is_valid(buf) then H.renew(self, buf) end
      end)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      if self.buf == buf and self.on_wipe then self.on_wipe() end
    end,
  })
end

--- Replaces the chat's deleted (unloaded) buffer `old` with a new one showing the whole chat.
function H.renew(self, old)
  self.buf = nil -- `old` is no longer the chat's: wiping it closes nothing
  pcall(vim.api.nvim_buf_delete, old, { force = true })
  H.new_buffer(self)
  M.redraw(self)
end

--- Renews the buffer now when it was deleted and the scheduled renewal has not run yet.
function H.ensure_buffer(self)
  if self.buf and vim.api.nvim_buf_is_valid(self.buf) and not vim.api.nvim_buf_is_loaded(self.buf) then
    H.renew(self, self.buf)
    return true
  end
end

--- The chat buffer's name: the task's short id (a tab label shows it whole), its full id when
--- another task's chat has that name already.
function H.buffer_name(task_id)
  local name = "dline://chat/" .. require("dline.ids").short(task_id)
  local existing = vim.fn.bufnr("^" .. name .. "$")
  if existing ~= -1 and vim.b[existing].dline_task_id ~= task_id then return "dline://chat/" .. task_id end
  return name
end

function H.scratch(name)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "dline"
  vim.bo[buf].syntax = "markdown"
  H.modifiable(buf, false)
  return buf
end

-- Windows -------------------------------------------------------------------------------

--- Shows the chat in the chat sidebar (see config.chat), with the input area below it.
function M.open(self, opts)
  H.ensure_buffer(self)
  require("dline.sidebar").show(self, opts)
end

--- The window showing the chat in the current tab, if any.
function M.window(self)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == self.buf then return win end
  end
end

--- Sends what the input area holds to this chat's task.
function M.send_input(self) require("dline.sidebar").send(self) end

function M.text(self) return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n") end

-- Blocks --------------------------------------------------------------------------------

--- The first line (0-based) of block `key` and its index, or nil.
function H.find(self, key)
  local first = 0
  for i, block in ipairs(self.blocks) do
    if block.key == key then return first, i end
    first = first + #block.lines
  end
end

--- Replaces (or adds) block `key` with `lines`, rewriting only its lines. New blocks go
--- before the tail blocks (notice, question), which stay last; `tail` marks one of those.
--- `highlights`: { [line index] = group } among `lines`.
function H.set_block(self, key, lines, tail, highlights)
  local first, index = H.find(self, key)
  H.modifiable(self.buf, true)
  if index then
    local old = self.blocks[index]
    -- The old lines' highlights go with them (else they would move to the block's first line).
    if old.highlights then vim.api.nvim_buf_clear_namespace(self.buf, H.NS, first, first + #old.lines) end
    vim.api.nvim_buf_set_lines(self.buf, first, first + #old.lines, false, lines)
    old.lines = lines
    old.highlights = highlights
  else
    local at, line = #self.blocks + 1, 0
    for i, block in ipairs(self.blocks) do
      if block.tail and not tail then
        at = i
        break
      end
      line = line + #block.lines
    end
    table.insert(self.blocks, at, { key = key, lines = lines, tail = tail, highlights = highlights })
    if #self.blocks == 1 then
      vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
    else
      vim.api.nvim_buf_set_lines(self.buf, line, line, false, lines)
    end
    first = line
  end
  for i, group in pairs(highlights or {}) do
    vim.api.nvim_buf_set_extmark(self.buf, H.NS, first + i - 1, 0, { end_col = #lines[i], hl_group = group })
  end
  H.modifiable(self.buf, false)
  H.follow(self)
end

function H.remove_block(self, key)
  local first, index = H.find(self, key)
  if not index then return end
  H.modifiable(self.buf, true)
  vim.api.nvim_buf_clear_namespace(self.buf, H.NS, first, first + #self.blocks[index].lines)
  vim.api.nvim_buf_set_lines(self.buf, first, first + #self.blocks[index].lines, false, {})
  H.modifiable(self.buf, false)
  table.remove(self.blocks, index)
end

--- Appends streamed text to a plain text row by rewriting only its last text line (and adding
--- lines for newlines), instead of re-rendering the whole row: long answers stay cheap to
--- stream. Returns false when the row is not a plain text message.
function H.append_text(self, item, text)
  if (item.kind or "text") ~= "text" or (item.checkpointId or "") ~= "" or item.cutOff then return false end
  local first, index = H.find(self, "msg:" .. item.id)
  if not index then return false end
  local lines = self.blocks[index].lines
  if #lines < 3 then return false end
  local last = #lines - 1 -- the last text line; the block ends with a blank separator
  -- The line breaks that ended the text so far are drawn now, if text follows them.
  text = H.unshown_end(item) .. text
  if #render.unshown_end(text) == #text then return true end
  local pieces = render.split(text)
  local changed = { lines[last] .. pieces[1] }
  for i = 2, #pieces do
    changed[i] = pieces[i]
  end
  H.modifiable(self.buf, true)
  vim.api.nvim_buf_set_lines(self.buf, first + last - 1, first + last, false, changed)
  H.modifiable(self.buf, false)
  lines[last] = changed[1]
  for i = 2, #changed do
    table.insert(lines, #lines, changed[i])
  end
  H.follow(self, false, #changed == 1)
  return true
end

--- The line breaks that end a streamed row's text before its newest piece (the last of
--- `item.parts`): not drawn yet (render.unshown_end).
function H.unshown_end(item)
  local parts, ending = item.parts or {}, ""
  for i = #parts - 1, 0, -1 do
    local piece = i == 0 and (item.text or "") or parts[i]
    local breaks = render.unshown_end(piece)
    ending = breaks .. ending
    if #breaks < #piece then break end
  end
  return ending
end

--- Where a window following the chat puts its cursor: the end of its last line with text
--- (the blank line that ends every block would do for a short line, but a line taller than
--- the window, a long paragraph in a narrow sidebar, would then be scrolled out of view
--- whole: only that blank line and "~" would show). At the end of a tall line, Neovim shows
--- that line's end, where the text arrives.
function M.end_position(buf)
  local count = vim.api.nvim_buf_line_count(buf)
  local line = count
  local text = vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ""
  if text == "" and count > 1 then
    line = count - 1
    text = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1] or ""
  end
  return { line, #text }
end

--- Keeps windows whose cursor was at the end of the chat at its end (one whose cursor is
--- elsewhere, where the user reads, stays). Cheap when nothing was added: called on every
--- streamed delta. `grew`: text was added to the last text line (no new line).
function H.follow(self, force, grew)
  local count = vim.api.nvim_buf_line_count(self.buf)
  local before = self.line_count or 0
  self.line_count = count
  if count == before and not force and not grew then return end
  local target
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == self.buf then
      if force or vim.api.nvim_win_get_cursor(win)[1] >= before - 1 then
        target = target or M.end_position(self.buf)
        pcall(vim.api.nvim_win_set_cursor, win, target)
      end
      if force or count < before then
        -- The chat got shorter (a restore, a retry): a window whose top line is past the new
        -- end would show nothing but "~" until something scrolled it. Show the end.
        pcall(vim.api.nvim_win_call, win, function() vim.cmd("normal! zb") end)
      end
    end
  end
end

-- vim.bo is several times slower than the API call, and this runs once per streamed delta.
function H.modifiable(buf, value) vim.api.nvim_buf_set_option(buf, "modifiable", value) end

-- Rendering -----------------------------------------------------------------------------

function H.render_item(self, id)
  local item = state_mod.item(self.state, id)
  if item then
    local lines, highlights = render.item_lines(item)
    H.set_block(self, "msg:" .. id, lines, false, highlights)
  end
end

--- Redraws everything from the state (after a load), and shows the end of the chat in every
--- window showing it (an unfocused chat would otherwise keep a view of lines that are gone).
function M.redraw(self)
  if H.ensure_buffer(self) then return end
  H.modifiable(self.buf, true)
  vim.api.nvim_buf_clear_namespace(self.buf, H.NS, 0, -1)
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  H.modifiable(self.buf, false)
  self.blocks = {}
  self.line_count = 0
  H.set_block(self, "header", render.header_lines(self.state))
  for _, item in ipairs(state_mod.items(self.state)) do
    local lines, highlights = render.item_lines(item)
    H.set_block(self, "msg:" .. item.id, lines, false, highlights)
  end
  H.set_block(self, "notice", render.notice_lines(self.state), true)
  H.set_block(self, "ask", render.ask_lines(self.state), true)
  H.set_block(self, "queued", render.queued_lines(self.state), true)
  H.follow(self, true)
end

--- Loads a GetTaskResponse (Connect JSON) and redraws.
function M.load(self, res)
  state_mod.load(self.state, res)
  M.redraw(self)
end

--- Renders stored messages (GetTask's rows), replacing what is shown; keeps the status.
function M.set_messages(self, messages)
  local status = self.state.status
  state_mod.load(
    self.state,
    { task = { title = self.state.title, status = status }, messages = messages, ownerPid = 1 }
  )
  self.state.status = status
  M.redraw(self)
end

function M.set_status(self, status) M.apply(self, { statusChanged = { status = status } }) end

--- Shows the checkpoints' state (a GetStatus answer), e.g. unavailable in the home folder.
function M.set_checkpoint_status(self, res)
  M.apply(self, {
    checkpointStatus = {
      state = res.state,
      message = res.message,
      phase = res.phase,
      filesDone = res.filesDone,
      filesTotal = res.filesTotal,
    },
  })
end

--- Shows the checkpoints' kinds and which one the files were restored to on the markers (a
--- ListCheckpoints answer's checkpoints).
function M.set_checkpoints(self, checkpoints)
  local change = state_mod.set_checkpoints(self.state, checkpoints)
  if H.ensure_buffer(self) then return change end
  for _, id in ipairs(change.items or {}) do
    H.render_item(self, id)
  end
  return change
end

--- Applies one TaskEvent; returns what changed (dline.ChatChange).
function M.apply(self, event)
  local change = state_mod.apply(self.state, event)
  -- Drawn whole from the state, this event included.
  if H.ensure_buffer(self) then return change end
  for _, id in ipairs(change.removed or {}) do
    H.remove_block(self, "msg:" .. id)
  end
  if change.delta then
    -- The row as it is (its text not joined: append_text needs only its kind).
    local item = self.state.index[change.delta.id]
    if item and not H.append_text(self, item, change.delta.text) then H.render_item(self, item.id) end
  end
  for _, id in ipairs(change.items or {}) do
    H.render_item(self, id)
  end
  if change.header then H.set_block(self, "header", render.header_lines(self.state)) end
  if change.notice then H.set_block(self, "notice", render.notice_lines(self.state), true) end
  if change.ask then H.set_block(self, "ask", render.ask_lines(self.state), true) end
  if change.queued then H.set_block(self, "queued", render.queued_lines(self.state), true) end
  return change
end

--- Shows `text`, sent while the model works, as queued at the end of the chat (at once: the
--- core adds it to the conversation only when the turn ends). `unqueue`: it was refused.
function M.queue(self, text)
  state_mod.queue(self.state, text)
  if H.ensure_buffer(self) then return end
  H.set_block(self, "queued", render.queued_lines(self.state), true)
end

function M.unqueue(self, text)
  if state_mod.unqueue(self.state, text).queued and not H.ensure_buffer(self) then
    H.set_block(self, "queued", render.queued_lines(self.state), true)
  end
end

--- Closes the chat's buffer (the input area stays for the next chat).
function M.close(self)
  if vim.api.nvim_buf_is_valid(self.buf) then vim.api.nvim_buf_delete(self.buf, { force = true }) end
end

return M
