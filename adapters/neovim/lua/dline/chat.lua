--- *dline.chat* The chat buffer of one task: renders its messages and events.
---
--- What it does: keeps the task's conversation as blocks (a header, one block per message,
--- tool run, question or checkpoint) and rewrites only the lines of the block that changed,
--- so streamed text appears as it arrives without redrawing the whole buffer. An input
--- buffer below it sends with <CR> (normal mode) or <C-s> (insert mode).
--- What it does not do: talk to the sidecar (dline.task does) or ask questions (dline.ask).

local visible = require("dline.visible")
local M = {}
local H = {}

H.status_text = {
  TASK_STATUS_RUNNING = "running",
  TASK_STATUS_WAITING = "waiting for you",
  TASK_STATUS_COMPLETED = "completed",
  TASK_STATUS_CANCELLED = "cancelled",
  TASK_STATUS_INTERRUPTED = "interrupted (:Dline resume)",
  TASK_STATUS_FAILED = "failed",
  TASK_STATUS_DAMAGED = "damaged",
}

---@class dline.Chat
---@field task_id string
---@field buf integer
---@field input_buf integer
---@field blocks table[]   { key = string, lines = string[] }
---@field status string|nil
---@field on_send fun(text: string)|nil

---@return dline.Chat
function M.new(task_id, title)
  local self = setmetatable({ task_id = task_id, title = title or "", blocks = {}, index = {}, tool_message = {}, status = nil, usage = nil }, { __index = M })
  self.buf = H.scratch("dline://chat/" .. task_id, "dline")
  vim.bo[self.buf].syntax = "markdown"
  H.modifiable(self.buf, false)
  self.input_buf = H.scratch("dline://input/" .. task_id, "dline-input")
  vim.b[self.buf].dline_task_id = task_id
  vim.b[self.input_buf].dline_task_id = task_id
  local send = function()
    local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(self.input_buf, 0, -1, false), "\n"))
    if text == "" then return end
    vim.api.nvim_buf_set_lines(self.input_buf, 0, -1, false, {})
    if self.on_send then self.on_send(text) end
  end
  vim.keymap.set("n", "<CR>", send, { buffer = self.input_buf, desc = "Dline: send" })
  vim.keymap.set("i", "<C-s>", function()
    vim.cmd("stopinsert")
    send()
  end, { buffer = self.input_buf, desc = "Dline: send" })
  self.send_input = send
  H.set_block(self, "header", H.header_lines(self))
  return self
end

function H.scratch(name, filetype)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

-- Windows -------------------------------------------------------------------------------

--- Shows the chat and its input in windows laid out per `opts` (see config.chat).
function M.open(self, opts)
  opts = opts or { position = "right", width = 80, height = 20, input_height = 3 }
  local win = self:window()
  if win then
    vim.api.nvim_set_current_win(win)
    return
  end
  if opts.position == "right" then
    vim.cmd("botright vsplit")
    vim.api.nvim_win_set_width(0, opts.width)
  elseif opts.position == "below" then
    vim.cmd("botright split")
    vim.api.nvim_win_set_height(0, opts.height)
  elseif opts.position == "tab" then
    vim.cmd("tabnew")
  end
  vim.api.nvim_win_set_buf(0, self.buf)
  vim.wo.wrap = true
  vim.wo.linebreak = true
  vim.wo.number = false
  vim.cmd("belowright split")
  vim.api.nvim_win_set_buf(0, self.input_buf)
  vim.api.nvim_win_set_height(0, opts.input_height)
  vim.wo.winfixheight = true
end

--- The window showing the chat in the current tab, if any.
function M.window(self)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == self.buf then return win end
  end
end

function M.text(self)
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

-- Blocks --------------------------------------------------------------------------------

--- Replaces (or appends) the block `key` with `lines`, rewriting only its lines.
function H.set_block(self, key, lines)
  local first = 0
  local found
  for i, block in ipairs(self.blocks) do
    if block.key == key then
      found = i
      break
    end
    first = first + #block.lines
  end
  H.modifiable(self.buf, true)
  if found then
    local old = self.blocks[found]
    vim.api.nvim_buf_set_lines(self.buf, first, first + #old.lines, false, lines)
    old.lines = lines
  else
    local block = { key = key, lines = lines }
    table.insert(self.blocks, block)
    if #self.blocks == 1 then
      vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
    else
      vim.api.nvim_buf_set_lines(self.buf, -1, -1, false, lines)
    end
  end
  H.modifiable(self.buf, false)
  H.follow(self)
end

--- Appends streamed text to a plain text block by rewriting only its last text line (and
--- adding lines for newlines), instead of re-rendering the whole message: long answers stay
--- cheap to stream. Returns false when the block is not a plain text message.
function H.append_text(self, key, msg, text)
  local kind = msg.kind or "text"
  if kind ~= "text" or (msg.checkpointId or "") ~= "" then return false end
  local first, block = 0, nil
  for _, b in ipairs(self.blocks) do
    if b.key == key then
      block = b
      break
    end
    first = first + #b.lines
  end
  if not block or #block.lines < 3 then return false end
  local lines = block.lines
  local last = #lines - 1 -- the last text line; the block ends with a blank separator
  local pieces = H.split(text)
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
  H.follow(self)
  return true
end

--- Keeps windows that showed the end of the chat at its end (a window scrolled up to read
--- stays where it is). Cheap when nothing was added: called on every streamed delta.
function H.follow(self)
  local count = vim.api.nvim_buf_line_count(self.buf)
  local before = self.line_count or 0
  self.line_count = count
  if count == before then return end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == self.buf and win ~= vim.api.nvim_get_current_win() then
      if vim.api.nvim_win_get_cursor(win)[1] >= before - 1 then pcall(vim.api.nvim_win_set_cursor, win, { count, 0 }) end
    end
  end
end

-- vim.bo is several times slower than the API call, and this runs once per streamed delta.
function H.modifiable(buf, value)
  vim.api.nvim_buf_set_option(buf, "modifiable", value)
end

--- The whole text of a message entry: streamed pieces are joined only when needed (joining
--- on every delta would copy a long answer once per delta).
function H.flush_text(entry)
  if entry.parts and #entry.parts > 0 then
    entry.msg.text = (entry.msg.text or "") .. table.concat(entry.parts)
    entry.parts = {}
  end
  return entry.msg
end

--- Model text as buffer lines, its control characters made visible.
function H.split(text)
  return vim.split(visible(text or ""), "\n", { plain = true })
end

function H.header_lines(self)
  local status = self.status and (H.status_text[self.status] or self.status) or "…"
  local line = ("# Dline task %s: %s"):format(self.task_id:sub(1, 8), status)
  if self.usage then
    line = line .. ("  (tokens in %s, out %s)"):format(self.usage.tokensIn or "0", self.usage.tokensOut or "0")
  end
  local lines = { line }
  if self.title ~= "" then table.insert(lines, self.title) end
  table.insert(lines, "")
  return lines
end

-- Messages ------------------------------------------------------------------------------

--- The lines of one UiMessage.
function H.message_lines(msg)
  local kind, role, text = msg.kind or "text", msg.role or "", msg.text or ""
  local lines
  if kind == "tool" or kind == "command" then
    local head = kind == "command" and ("### $ " .. visible(text)) or ("### " .. visible(msg.tool or "tool") .. ": " .. visible(text))
    head = head:gsub("\n", "\\n")
    lines = { head }
    local ok, detail = pcall(vim.json.decode, msg.detail or "")
    if ok and type(detail) == "table" and detail.output ~= nil then
      if detail.ok == false then table.insert(lines, "failed:") end
      local out = H.split(tostring(detail.output))
      for i = 1, math.min(#out, 40) do
        table.insert(lines, "    " .. out[i])
      end
      if #out > 40 then table.insert(lines, ("    … %d more lines"):format(#out - 40)) end
    elseif msg.partial then
      table.insert(lines, "    (running)")
    end
  elseif kind == "completion" then
    lines = vim.list_extend({ "## Task completed" }, H.split(text))
  elseif kind == "followup" then
    lines = vim.list_extend({ "## Question" }, H.split(text))
    local ok, detail = pcall(vim.json.decode, msg.detail or "")
    if ok and type(detail) == "table" and type(detail.options) == "table" then
      for i, option in ipairs(detail.options) do
        table.insert(lines, ("  %d. %s"):format(i, (visible(tostring(option)):gsub("\n", " "))))
      end
    end
  elseif kind == "denied" then
    lines = { "## You denied " .. (msg.tool or "the operation") .. (text ~= "" and (": " .. text) or "") }
  elseif kind == "error" then
    lines = vim.list_extend({ "## Error" }, H.split(text))
  elseif kind == "reasoning" then
    lines = { "## Thinking" }
    for _, l in ipairs(H.split(text)) do
      table.insert(lines, "> " .. l)
    end
  elseif kind == "checkpoint" then
    lines = { "--- checkpoint ---" }
  elseif role == "MESSAGE_ROLE_USER" then
    lines = vim.list_extend({ "## You" }, H.split(text))
  else
    lines = vim.list_extend({ "## Dline" }, H.split(text))
  end
  if msg.checkpointId and msg.checkpointId ~= "" then
    table.insert(lines, H.checkpoint_line(msg.checkpointId))
  end
  table.insert(lines, "")
  return lines
end

function H.checkpoint_line(id, kind)
  local name = kind and kind:gsub("^CHECKPOINT_KIND_", ""):lower() or "checkpoint"
  return ("--- checkpoint %s (%s): :Dline compare %s | :Dline restore %s ---"):format(id:sub(1, 8), name, id, id)
end

function H.put_message(self, msg)
  local entry = self.index[msg.id] or { msg = {} }
  H.flush_text(entry)
  entry.msg = vim.tbl_extend("force", entry.msg, msg)
  self.index[msg.id] = entry
  H.set_block(self, "msg:" .. msg.id, H.message_lines(entry.msg))
end

--- Renders the task's messages (GetTask), replacing what is shown.
function M.set_messages(self, messages)
  H.modifiable(self.buf, true)
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  H.modifiable(self.buf, false)
  self.blocks, self.index, self.tool_message = {}, {}, {}
  H.set_block(self, "header", H.header_lines(self))
  for _, msg in ipairs(messages or {}) do
    H.put_message(self, msg)
    -- Complete as stored: deltas of a replayed stream must not append to it again.
    self.index[msg.id].final = not msg.partial
  end
end

function M.set_status(self, status)
  self.status = status
  H.set_block(self, "header", H.header_lines(self))
end

--- Applies one TaskEvent.
function M.apply(self, event)
  if event.messageAdded then
    local msg = event.messageAdded.message
    local entry = self.index[msg.id]
    if entry and entry.final then return end
    H.put_message(self, msg)
  elseif event.messageDelta or event.reasoningDelta then
    -- Reasoning streams into a message of its own (kind "reasoning") the same way.
    local d = event.messageDelta or event.reasoningDelta
    local entry = self.index[d.messageId]
    if entry and entry.final then
      return
    elseif entry then
      if H.append_text(self, "msg:" .. d.messageId, entry.msg, d.text or "") then
        entry.parts = entry.parts or {}
        table.insert(entry.parts, d.text or "")
      else
        H.flush_text(entry)
        entry.msg.text = (entry.msg.text or "") .. (d.text or "")
        H.set_block(self, "msg:" .. d.messageId, H.message_lines(entry.msg))
      end
    else
      H.put_message(self, { id = d.messageId, role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = d.text, partial = true })
    end
  elseif event.messageFinalized then
    local msg = event.messageFinalized.message
    local entry = self.index[msg.id]
    if entry then entry.msg, entry.parts = {}, nil end
    H.put_message(self, msg)
    self.index[msg.id].final = true
  elseif event.toolStarted then
    -- The tool's message (added just before) shows its live output.
    local t = event.toolStarted
    for i = #self.blocks, 1, -1 do
      local key = self.blocks[i].key
      local entry = key:sub(1, 4) == "msg:" and self.index[key:sub(5)]
      if entry and (entry.msg.kind == "tool" or entry.msg.kind == "command") and entry.msg.partial then
        self.tool_message[t.toolCallId] = entry.msg.id
        entry.output = {}
        break
      end
    end
  elseif event.toolOutput then
    local id = self.tool_message[event.toolOutput.toolCallId]
    local entry = id and self.index[id]
    if entry and entry.msg.partial then
      table.insert(entry.output, event.toolOutput.chunk or "")
      local lines = H.message_lines(vim.tbl_extend("force", H.flush_text(entry), { partial = false }))
      table.remove(lines) -- the blank separator
      for _, l in ipairs(H.split(table.concat(entry.output))) do
        table.insert(lines, "    " .. l)
      end
      table.insert(lines, "")
      H.set_block(self, "msg:" .. id, lines)
    end
  elseif event.ask then
    local a = event.ask
    local summary = visible(a.summary or ""):gsub("\n", "\\n")
    local what = a.kind == "ASK_KIND_FOLLOWUP" and ("Question: " .. summary)
      or ("Approve %s: %s? (:Dline approve / :Dline deny)"):format(visible(a.tool or ""), summary)
    self.ask_seq = (self.ask_seq or 0) + 1
    self.ask_key = "ask:" .. self.ask_seq
    H.set_block(self, self.ask_key, { ">> " .. what, "" })
  elseif event.askResolved then
    if self.ask_key then
      local r = event.askResolved
      local verdict = r.approved and "approved" or "denied"
      H.set_block(self, self.ask_key, { (">> %s%s"):format(verdict, (r.text and r.text ~= "") and (": " .. r.text) or ""), "" })
      self.ask_key = nil
    end
  elseif event.checkpointSaved then
    local c = event.checkpointSaved
    H.set_block(self, "cp:" .. c.checkpointId .. ":" .. (event.seq or ""), { H.checkpoint_line(c.checkpointId, c.kind), "" })
  elseif event.statusChanged then
    M.set_status(self, event.statusChanged.status)
  elseif event.usage then
    self.usage = event.usage
    H.set_block(self, "header", H.header_lines(self))
  elseif event.modelRetry or event.modelWaiting then
    -- "retrying in 4 s (attempt 2 of 6)", "waiting for the model: 10 s ...": one line, replaced.
    local r = event.modelRetry or event.modelWaiting
    for _, id in ipairs(r.discardedMessageIds or {}) do
      if self.index[id] then H.set_block(self, "msg:" .. id, {}) end
    end
    local reason = event.modelRetry and r.reason and r.reason ~= "" and (": " .. visible(r.reason):gsub("\n", " ")) or ""
    H.set_block(self, "notice", { "~~ " .. visible(r.message or "") .. reason, "" })
  elseif event.error then
    local e = event.error
    H.set_block(self, "err:" .. (event.seq or tostring(#self.blocks)), { ("## Error (%s)"):format(e.code or "unknown"), e.message or "", "" })
  end
end

--- Closes the chat's buffers.
function M.close(self)
  for _, buf in ipairs({ self.buf, self.input_buf }) do
    if vim.api.nvim_buf_is_valid(buf) then vim.api.nvim_buf_delete(buf, { force = true }) end
  end
end

return M
