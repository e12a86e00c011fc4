--- *dline.chat_state* The chat of one task as data: folded from GetTask and the task's events.
---
--- What it does: keeps the conversation's rows (UiMessages, with their tool calls and live
--- output), the pending question, the status, the task's total usage, the one-line notice
--- (retrying, waiting for the model) and the checkpoints' state, and says what each event
--- changed so that a renderer can redraw only that.
--- What it does not do: touch buffers, windows or the sidecar. It is pure: the same events
--- always give the same state, so tests drive it with recorded event streams (Connect JSON).

local M = {}
local H = {}

---@class dline.ChatItem  a UiMessage (Connect JSON) plus what events add
---@field id string
---@field role string|nil
---@field kind string|nil
---@field text string|nil
---@field partial boolean|nil
---@field cutOff boolean|nil    an answer stopped midway (a Cancel, a sidecar that stopped or died)
---@field tool string|nil
---@field detail string|nil
---@field checkpointId string|nil
---@field toolCall table|nil   the ToolCall of a tool or command row
---@field output string|nil    live output of a running call (tool_output chunks)
---@field final boolean|nil    complete as stored: a replayed stream does not change it
---@field checkpointKind string|nil
---@field checkpointRestored boolean|nil  files were restored to it, no checkpoint saved since

---@class dline.ChatState
---@field task_id string
---@field title string
---@field status string|nil         a TaskStatus name
---@field status_reason string
---@field items dline.ChatItem[]
---@field pending_ask table|nil     the Ask waiting for an answer
---@field dropped_ask table|nil     the Ask nobody answered (its sidecar stopped)
---@field usage table               { tokensIn, tokensOut, cost, costUnknown } of the whole task
---@field notice string             "retrying in 4 s ...", "waiting for the model ..." or ""
---@field checkpoints table|nil     { state, message, phase, filesDone, filesTotal }
---@field base_seq number           events up to this seq are in the loaded usage totals
---@field queued string[]           messages sent while the model works, not yet in the conversation

---@class dline.ChatChange  what one event changed
---@field header boolean|nil
---@field items string[]|nil       ids of rows to redraw
---@field delta table|nil          { id, text }: text appended to a row
---@field removed string[]|nil     ids of rows that are gone
---@field ask boolean|nil          the question block changed
---@field notice boolean|nil
---@field queued boolean|nil        the queued messages changed

---@return dline.ChatState
function M.new(task_id, title)
  return {
    task_id = task_id,
    title = title or "",
    status = nil,
    status_reason = "",
    items = {},
    index = {},
    tool_rows = {},
    pending_ask = nil,
    dropped_ask = nil,
    usage = { tokensIn = 0, tokensOut = 0, cost = 0, costUnknown = false },
    notice = "",
    checkpoints = nil,
    base_seq = 0,
    queued = {},
  }
end

--- A message sent while the model works: the core queues it and adds it to the conversation
--- when the turn ends. It shows as queued until then (its row arrives, or a reload).
---@return dline.ChatChange
function M.queue(state, text)
  table.insert(state.queued, text)
  return { queued = true }
end

--- A queued message the core refused (it came back to the input area).
---@return dline.ChatChange
function M.unqueue(state, text)
  for i, queued in ipairs(state.queued) do
    if queued == text then
      table.remove(state.queued, i)
      return { queued = true }
    end
  end
  return {}
end

M.TERMINAL = {
  TASK_STATUS_COMPLETED = true,
  TASK_STATUS_CANCELLED = true,
  TASK_STATUS_FAILED = true,
  TASK_STATUS_INTERRUPTED = true,
  TASK_STATUS_DAMAGED = true,
}

function H.num(v) return tonumber(v) or 0 end

--- Loads a GetTaskResponse (Connect JSON): rows, status, pending question, usage totals.
--- A task marked running or waiting that no sidecar runs (owner pid 0) is interrupted: its
--- sidecar died, and nobody will answer its question.
function M.load(state, res)
  local task = res.task or {}
  -- Connect JSON leaves out an empty title: a task restored to before its first message has
  -- none (the core emptied it), not the one this chat showed before.
  local fresh = M.new(state.task_id, res.task and (task.title or "") or state.title)
  for k, v in pairs(fresh) do
    state[k] = v
  end
  state.status = task.status
  -- Why it stands there, as the core said it last (a restore, a stopped sidecar): "" for none.
  state.status_reason = res.statusReason or ""
  if (state.status == "TASK_STATUS_RUNNING" or state.status == "TASK_STATUS_WAITING") and H.num(res.ownerPid) == 0 then
    state.status = "TASK_STATUS_INTERRUPTED"
  end
  for _, msg in ipairs(res.messages or {}) do
    local item = H.upsert(state, msg)
    -- Complete as stored: deltas of a replayed stream must not append to it again.
    item.final = not msg.partial
  end
  if res.pendingAsk and res.pendingAsk.askId and state.status ~= "TASK_STATUS_INTERRUPTED" then
    state.pending_ask = res.pendingAsk
  end
  state.usage = {
    tokensIn = H.num(task.tokensIn),
    tokensOut = H.num(task.tokensOut),
    cost = tonumber(task.cost) or 0,
    costUnknown = task.costUnknown == true,
  }
  state.base_seq = H.num(res.lastSeq)
  H.with_title(state, {})
  return state
end

--- Joins a row's streamed pieces into its text. Deltas are kept as pieces: joining on every
--- delta would copy a long answer once per delta.
function M.flush(item)
  if item and item.parts then
    item.text = (item.text or "") .. table.concat(item.parts)
    item.parts = nil
  end
  return item
end

--- The row with `id` (its text complete), or nil.
function M.item(state, id) return M.flush(state.index[id]) end

--- The rows, in order, their texts complete.
function M.items(state)
  for _, item in ipairs(state.items) do
    M.flush(item)
  end
  return state.items
end

--- The rows that show tool calls, by tool call id.
function M.tool_item(state, tool_call_id)
  local id = state.tool_rows[tool_call_id]
  return id and state.index[id] or nil
end

function H.upsert(state, msg)
  local item = state.index[msg.id]
  if not item then
    item = {}
    state.index[msg.id] = item
    table.insert(state.items, item)
  end
  M.flush(item)
  local checkpoint, kind, restored, output =
    item.checkpointId, item.checkpointKind, item.checkpointRestored, item.output
  for k in pairs(item) do
    item[k] = nil
  end
  for k, v in pairs(msg) do
    item[k] = v
  end
  -- A finalized row keeps what events added to it: its checkpoint and its live output.
  if (item.checkpointId or "") == "" then item.checkpointId = checkpoint end
  item.checkpointKind = kind
  item.checkpointRestored = restored
  item.output = output
  if item.toolCall and item.toolCall.toolCallId then state.tool_rows[item.toolCall.toolCallId] = item.id end
  return item
end

function H.remove(state, ids)
  local gone = {}
  for _, id in ipairs(ids) do
    if state.index[id] then gone[id] = true end
  end
  if next(gone) == nil then return {} end
  local kept, removed = {}, {}
  for _, item in ipairs(state.items) do
    if gone[item.id] then
      state.index[item.id] = nil
      table.insert(removed, item.id)
    else
      table.insert(kept, item)
    end
  end
  state.items = kept
  return removed
end

--- Applies one TaskEvent (Connect JSON). Returns what changed (dline.ChatChange).
---@return dline.ChatChange
function M.apply(state, event)
  local seq = H.num(event.seq)
  if event.messageAdded then
    local msg = event.messageAdded.message or {}
    local item = state.index[msg.id]
    if item and item.final then return {} end
    H.upsert(state, msg)
    local change = { items = { msg.id } }
    -- A message of the person's, new: the oldest queued one has reached the conversation.
    if not item and msg.role == "MESSAGE_ROLE_USER" and (msg.kind or "text") == "text" and #state.queued > 0 then
      -- The one it is (its text, or the text it was expanded from: #buffer), else the oldest.
      local at = 1
      for i, text in ipairs(state.queued) do
        if text == msg.text or (msg.text or ""):find(text, 1, true) then
          at = i
          break
        end
      end
      table.remove(state.queued, at)
      change.queued = true
    end
    -- A row of the model's (a tool call may be its whole answer): a retry or wait line is over.
    if msg.role ~= "MESSAGE_ROLE_USER" and state.notice ~= "" then
      state.notice = ""
      change.notice = true
    end
    return H.with_title(state, change)
  elseif event.messageDelta or event.reasoningDelta then
    local d = event.messageDelta or event.reasoningDelta
    local item = state.index[d.messageId]
    if item and item.final then return {} end
    -- The answer is coming: a retry or wait line is over.
    local notice = state.notice ~= ""
    state.notice = ""
    if not item then
      H.upsert(state, {
        id = d.messageId,
        role = "MESSAGE_ROLE_ASSISTANT",
        kind = event.reasoningDelta and "reasoning" or "text",
        text = d.text or "",
        partial = true,
      })
      return { items = { d.messageId }, notice = notice }
    end
    item.parts = item.parts or {}
    table.insert(item.parts, d.text or "")
    return { delta = { id = d.messageId, text = d.text or "" }, notice = notice }
  elseif event.messageFinalized then
    local msg = event.messageFinalized.message or {}
    local item = state.index[msg.id]
    if item and item.final then return {} end
    item = H.upsert(state, msg)
    item.final = not msg.partial
    return H.with_title(state, { items = { msg.id } })
  elseif event.toolStarted then
    local t = event.toolStarted
    local id = (t.messageId ~= nil and t.messageId ~= "") and t.messageId or H.last_open_tool_row(state)
    local item = id and state.index[id]
    if not item then return {} end
    state.tool_rows[t.toolCallId] = id
    item.output = ""
    item.running = true
    return { items = { id } }
  elseif event.toolOutput then
    local item = M.tool_item(state, event.toolOutput.toolCallId)
    if not item or not item.running then return {} end
    item.output = (item.output or "") .. (event.toolOutput.chunk or "")
    return { items = { item.id } }
  elseif event.toolFinished then
    local f = event.toolFinished
    local item = M.tool_item(state, f.toolCallId)
    if not item then return {} end
    item.running = false
    item.finished = f
    return { items = { item.id } }
  elseif event.ask then
    state.pending_ask = event.ask
    state.dropped_ask = nil
    return { ask = true, header = true }
  elseif event.askResolved then
    local r = event.askResolved
    if state.pending_ask and (r.askId == nil or r.askId == "" or r.askId == state.pending_ask.askId) then
      if r.dropped then state.dropped_ask = state.pending_ask end
      state.pending_ask = nil
    end
    return { ask = true, header = true }
  elseif event.checkpointSaved then
    local c = event.checkpointSaved
    -- A checkpoint saved after a restore ends the "restored" mark (the core's rule too).
    local changed = H.unmark_restored(state)
    local item = c.messageId and state.index[c.messageId]
    if item then
      item.checkpointId = c.checkpointId
      item.checkpointKind = c.kind
      table.insert(changed, item.id)
      return { items = changed }
    end
    local id = "checkpoint:" .. c.checkpointId
    H.upsert(state, { id = id, kind = "checkpoint", checkpointId = c.checkpointId })
    state.index[id].checkpointKind = c.kind
    table.insert(changed, id)
    return { items = changed }
  elseif event.statusChanged then
    state.status = event.statusChanged.status
    state.status_reason = event.statusChanged.reason or ""
    state.notice = ""
    -- The question block says what became of a question nobody answered, by the status: drawn
    -- again on every change (a restore stops a task as cancelled, then interrupted, then ...).
    local change = { header = true, notice = true, ask = true }
    if state.status ~= "TASK_STATUS_WAITING" and state.pending_ask then
      -- Interrupted while asking: nobody will answer that question any more.
      if state.status == "TASK_STATUS_INTERRUPTED" then state.dropped_ask = state.pending_ask end
      state.pending_ask = nil
    end
    return change
  elseif event.usage then
    -- Per request; GetTask's totals already count the events up to its last seq.
    if seq > 0 and seq <= state.base_seq then return {} end
    local u = event.usage
    state.usage = {
      tokensIn = state.usage.tokensIn + H.num(u.tokensIn),
      tokensOut = state.usage.tokensOut + H.num(u.tokensOut),
      cost = state.usage.cost + (tonumber(u.cost) or 0),
      costUnknown = state.usage.costUnknown or u.costUnknown == true,
    }
    return { header = true }
  elseif event.modelRetry or event.modelWaiting then
    local r = event.modelRetry or event.modelWaiting
    local removed = H.remove(state, r.discardedMessageIds or {})
    local reason = event.modelRetry and r.reason and r.reason ~= "" and (": " .. r.reason) or ""
    state.notice = (r.message or "") .. reason
    return { notice = true, removed = removed }
  elseif event.checkpointStatus then
    local c = event.checkpointStatus
    state.checkpoint_news = (state.checkpoint_news or 0) + 1
    local name = (c.state or ""):gsub("^CHECKPOINT_STATE_", ""):lower()
    state.checkpoints = {
      state = name,
      message = c.message or "",
      phase = c.phase or "",
      filesDone = H.num(c.filesDone),
      filesTotal = H.num(c.filesTotal),
    }
    return { header = true }
  elseif event.filesRestored then
    -- The files are at this checkpoint now (restored in any window): its marker alone says
    -- "restored"; after an Undo (a "before restore" checkpoint, never a marker) none does.
    local target = event.filesRestored.checkpointId or ""
    local ids = {}
    for _, item in ipairs(state.items) do
      local restored = (item.checkpointId or "") ~= "" and item.checkpointId == target or nil
      if restored ~= item.checkpointRestored then
        item.checkpointRestored = restored
        table.insert(ids, item.id)
      end
    end
    return { items = ids }
  elseif event.rewound then
    local after = event.rewound.afterMessageId or ""
    -- A question the restore (here, in another window, from the CLI) took away went with the
    -- conversation after the checkpoint, not with a sidecar that stopped.
    state.dropped_ask = nil
    local ids = {}
    if after ~= "" and not state.index[after] then return { ask = true } end
    for i = #state.items, 1, -1 do
      local item = state.items[i]
      if item.id == after then break end
      table.insert(ids, item.id)
    end
    local removed = H.remove(state, ids)
    state.pending_ask = nil
    local change = { removed = removed, ask = true }
    -- Restored to before its first message: the title was that message; the next one names
    -- the task (the core empties its title too).
    if not H.has_user_message(state) and state.title ~= "" then
      state.title = ""
      change.header = true
    end
    return H.with_title(state, change)
  elseif event.error then
    local e = event.error
    local id = "error:" .. (event.seq or tostring(#state.items + 1))
    H.upsert(state, { id = id, kind = "task_error", text = e.message or "", tool = e.code or "unknown" })
    return { items = { id } }
  end
  return {}
end

function H.unmark_restored(state)
  local ids = {}
  for _, item in ipairs(state.items) do
    if item.checkpointRestored then
      item.checkpointRestored = nil
      table.insert(ids, item.id)
    end
  end
  return ids
end

--- Applies a ListCheckpoints answer (Connect JSON checkpoints) to the rows' checkpoint markers:
--- their kind (GetTask gives a row its checkpoint's id only) and whether the files were restored
--- to it. Returns what changed (dline.ChatChange).
---@return dline.ChatChange
function M.set_checkpoints(state, checkpoints)
  local by_id = {}
  for _, cp in ipairs(checkpoints or {}) do
    by_id[cp.id] = cp
  end
  local ids = {}
  for _, item in ipairs(state.items) do
    local cp = (item.checkpointId or "") ~= "" and by_id[item.checkpointId]
    if cp then
      local kind, restored = cp.kind or item.checkpointKind, cp.restored == true or nil
      if kind ~= item.checkpointKind or restored ~= item.checkpointRestored then
        item.checkpointKind, item.checkpointRestored = kind, restored
        table.insert(ids, item.id)
      end
    elseif item.checkpointRestored then
      item.checkpointRestored = nil
      table.insert(ids, item.id)
    end
  end
  return { items = ids }
end

function H.last_open_tool_row(state)
  for i = #state.items, 1, -1 do
    local item = state.items[i]
    if (item.kind == "tool" or item.kind == "command") and item.partial then return item.id end
  end
end

function H.has_user_message(state)
  for _, item in ipairs(state.items) do
    if item.role == "MESSAGE_ROLE_USER" then return true end
  end
  return false
end

--- Whether the conversation has no message of the person's (a task restored to before its
--- first one): nothing to resume from, a message starts it again.
function M.empty(state) return not H.has_user_message(state) end

function H.with_title(state, change)
  if state.title == "" then
    for _, item in ipairs(state.items) do
      if item.role == "MESSAGE_ROLE_USER" and not item.parts and (item.text or "") ~= "" then
        state.title = item.text:match("^[^\n]*"):sub(1, 80)
        change.header = true
        break
      end
    end
  end
  return change
end

--- The state as plain data for comparisons (tests, recorded streams): rows with their kind,
--- role, text and tool call status, the status, the pending question, the usage.
--- Before a status read (GetStatus): the function returned says whether its answer is still
--- the latest word on the checkpoints of `state`. An event that came meanwhile is newer: a read
--- answered during the baseline ("initializing") must not undo the "ready" that followed it.
function M.checkpoint_read(state)
  local asked = state.checkpoint_news or 0
  return function(current) return current == state and (state.checkpoint_news or 0) == asked end
end

function M.snapshot(state)
  local rows = {}
  for _, item in ipairs(M.items(state)) do
    table.insert(rows, {
      id = item.id,
      role = item.role,
      kind = item.kind,
      text = item.text,
      toolStatus = item.toolCall and item.toolCall.status or nil,
      checkpointId = item.checkpointId,
    })
  end
  return {
    status = state.status,
    rows = rows,
    pendingAskId = state.pending_ask and state.pending_ask.askId or nil,
    usage = state.usage,
    notice = state.notice,
  }
end

return M
