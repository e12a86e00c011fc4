--- *dline.chat_render* The lines the chat buffer shows for a dline.chat_state.
---
--- What it does: turns the header, each row, the notice and the pending question into buffer
--- lines. Model text has its control characters made visible. Tool output lines start with
--- `M.OUTPUT_PREFIX`, which the chat window folds (`foldexpr`), so long output stays closed
--- until opened with `zo`.
--- What it does not do: write buffers (dline.chat does).

local visible = require("dline.visible")
local ids = require("dline.ids")
local fence = require("dline.fence")

local M = {}
local H = {}

--- Tool output lines start with this; the chat folds them.
M.OUTPUT_PREFIX = "  │ "
--- Lines of tool output shown at most (the rest: a count; the command log has it all).
M.MAX_OUTPUT_LINES = 200
--- The line after an answer stopped midway (a Cancel, a sidecar that stopped or died): its text
--- ends where the stream stopped, not where the model meant it to. Highlighted DlineCutOff.
M.CUT_OFF_LINE = "— answer cut off here"

M.STATUS_TEXT = {
  TASK_STATUS_RUNNING = "running",
  TASK_STATUS_WAITING = "waiting for you",
  TASK_STATUS_COMPLETED = "completed",
  TASK_STATUS_CANCELLED = "cancelled",
  TASK_STATUS_INTERRUPTED = "interrupted",
  TASK_STATUS_FAILED = "failed",
  TASK_STATUS_DAMAGED = "damaged",
}

H.tool_status = {
  TOOL_CALL_STATUS_PENDING = "waiting for approval",
  TOOL_CALL_STATUS_RUNNING = "running",
  TOOL_CALL_STATUS_DONE = "done",
  TOOL_CALL_STATUS_FAILED = "failed",
  TOOL_CALL_STATUS_DENIED = "denied",
  TOOL_CALL_STATUS_INTERRUPTED = "interrupted",
}

--- The line breaks that end `text` (an answer often ends with "\n"): they draw no lines, as the
--- blank line after every row already ends it. A streamed row holds them back until text
--- follows them (dline.chat), so it shows the same lines as the row drawn whole.
function M.unshown_end(text) return (text or ""):match("[\r\n]*$") end

--- Model text as buffer lines, its control characters made visible, its ending line breaks
--- left out (M.unshown_end).
function M.split(text)
  text = text or ""
  text = text:sub(1, #text - #M.unshown_end(text))
  return vim.split(visible(text), "\n", { plain = true })
end

--- One line: newlines shown as \n.
function M.one_line(text) return (visible(text or ""):gsub("\n", "\\n")) end

function H.tokens(n)
  n = tonumber(n) or 0
  if n >= 1e6 then return ("%.1fM"):format(n / 1e6) end
  if n >= 1e4 then return ("%.0fk"):format(n / 1e3) end
  if n >= 1e3 then return ("%.1fk"):format(n / 1e3) end
  return tostring(math.floor(n))
end

--- "1.2k in, 90 out, $0.0123" (or "cost unknown") of the whole task.
function M.usage_text(usage)
  if not usage or (usage.tokensIn == 0 and usage.tokensOut == 0) then return nil end
  local cost
  if usage.costUnknown and usage.cost == 0 then
    cost = "cost unknown"
  else
    cost = ("$%.4f%s"):format(usage.cost or 0, usage.costUnknown and " + unknown" or "")
  end
  return ("%s in, %s out, %s"):format(H.tokens(usage.tokensIn), H.tokens(usage.tokensOut), cost)
end

--- The checkpoints' state as one line, when it is worth showing.
function M.checkpoint_text(c)
  if not c or c.state == "ready" or c.state == "" then return nil end
  if c.state == "initializing" or c.state == "slow" or c.state == "slow_initialization" then
    local progress = ""
    if c.phase == "staging" and c.filesTotal > 0 then
      progress = (": staging %d of %d files"):format(c.filesDone, c.filesTotal)
    elseif c.phase ~= "" then
      progress = ": " .. c.phase
    end
    local slow = (c.state ~= "initializing") and (" (" .. M.one_line(c.message) .. ")") or ""
    return "checkpoints initializing" .. progress .. slow
  end
  return ("checkpoints %s: %s"):format(c.state, M.one_line(c.message))
end

--- Stopped part-way: the word the header says before how to continue (Resume works for all).
H.stopped = {
  TASK_STATUS_INTERRUPTED = "Interrupted",
  TASK_STATUS_CANCELLED = "Cancelled",
  TASK_STATUS_FAILED = "Failed",
}

function M.header_lines(state)
  local status = state.status and (M.STATUS_TEXT[state.status] or state.status) or "…"
  local parts = { "# Dline " .. ids.short(state.task_id), status }
  local usage = M.usage_text(state.usage)
  if usage then table.insert(parts, usage) end
  local lines = { table.concat(parts, " · ") }
  if state.title ~= "" then
    table.insert(lines, M.one_line(state.title))
  elseif state.status then
    -- No first message names it (restored to before it), as the history lists it.
    table.insert(lines, "(untitled task)")
  end
  local cp = M.checkpoint_text(state.checkpoints)
  if cp then table.insert(lines, cp) end
  local stopped = H.stopped[state.status or ""]
  if stopped and require("dline.chat_state").empty(state) then
    -- Resume has nothing to go on from (the core refuses it): a message starts the task again.
    table.insert(lines, "Restored to before its first message: send a message to start it again.")
  elseif stopped then
    -- With the core's reason when it gave one ("the conversation was restored to an earlier
    -- point"): "Interrupted" alone after a restore the person made read like a fault.
    local why = M.one_line(state.status_reason or "")
    if why ~= "" and why:lower() ~= stopped:lower() then
      stopped = ("%s: %s"):format(stopped, (why:gsub("[.!?]$", "")))
    end
    table.insert(lines, stopped .. ". R (or :Dline resume) continues it.")
  end
  table.insert(lines, "")
  return lines
end

-- Rows ----------------------------------------------------------------------------------

--- The ToolCall of a row: the proto field, or (older rows) what its detail JSON holds.
function M.tool_call(item)
  if item.toolCall then return item.toolCall end
  local ok, detail = pcall(vim.json.decode, item.detail or "")
  if not ok or type(detail) ~= "table" then return {} end
  local status = detail.status and ("TOOL_CALL_STATUS_" .. detail.status:upper())
    or (detail.ok == false and "TOOL_CALL_STATUS_FAILED" or (detail.output ~= nil and "TOOL_CALL_STATUS_DONE" or nil))
  return {
    status = status,
    output = detail.output ~= nil and tostring(detail.output) or nil,
    edits = detail.edits,
    command = detail.command,
    feedback = detail.feedback,
    reason = detail.reason,
  }
end

--- "2,000 bytes" of a byte count (an int64 field: a string in JSON).
function M.bytes(n)
  n = math.floor(tonumber(n or 0) or 0)
  local digits = tostring(n):reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (digits:gsub("^(-?),", "%1")) .. (n == 1 and " byte" or " bytes")
end

--- What an edit whose texts are left out changes, by size, as the CLI says it: "binary, 2,000
--- bytes now, not shown; 21 bytes after" ("new file; …", "…; deleted"). nil for a row of an
--- earlier version, which knows no sizes.
function M.edit_sizes(edit)
  local before, after = tonumber(edit.originalSize or 0) or 0, tonumber(edit.proposedSize or 0) or 0
  if before == 0 and after == 0 then return nil end
  local now = edit.status == "FILE_STATUS_ADDED" and "new file"
    or ((edit.originalBinary and "binary, " or "") .. M.bytes(before) .. " now, not shown")
  local later = edit.status == "FILE_STATUS_DELETED" and "deleted" or (M.bytes(after) .. " after")
  return now .. "; " .. later
end

--- The lines an edit writes when the file as it is was left out (binary, or too large to read)
--- but the core sent what the edit writes (`proposedText` with `truncated`); nil otherwise.
function M.written_lines(edit)
  if not edit.truncated or (edit.diff or "") ~= "" or (edit.proposedText or "") == "" then return nil end
  local lines = vim.split(edit.proposedText, "\n", { plain = true })
  if lines[#lines] == "" then table.remove(lines) end
  return lines
end

--- "+3 -1" of one FileEdit.
function M.edit_stat(edit)
  if edit.truncated and (edit.diff or "") ~= "" then
    -- A file too large to send whole: its numbers from the core's unified diff.
    local added, removed, in_hunks = 0, 0, false
    for _, line in ipairs(vim.split(edit.diff, "\n", { plain = true })) do
      local first = line:sub(1, 1)
      if first == "@" then
        in_hunks = true
      elseif in_hunks and first == "+" then
        added = added + 1
      elseif in_hunks and first == "-" then
        removed = removed + 1
      end
    end
    return ("(+%d -%d, large: diff only)"):format(added, removed)
  end
  if edit.truncated then
    -- Rows of earlier versions know no sizes.
    local sizes = M.edit_sizes(edit)
    if not sizes then return "(not shown: binary or large)" end
    local written = M.written_lines(edit)
    if not written then return "(" .. sizes .. ")" end
    return ("(%s, +%d line%s)"):format(sizes, #written, #written == 1 and "" or "s")
  end
  local what = edit.status == "FILE_STATUS_ADDED" and "new" or edit.status == "FILE_STATUS_DELETED" and "deleted" or nil
  -- A row read back without its texts: what happened to the file, not numbers of nothing.
  if (edit.originalText or "") == "" and (edit.proposedText or "") == "" then
    return what and ("(" .. what .. ")") or ""
  end
  local before, after = edit.originalText or "", edit.proposedText or ""
  local added, removed = 0, 0
  local ok, hunks = pcall(vim.diff, before, after, { result_type = "indices" })
  if ok and type(hunks) == "table" then
    for _, h in ipairs(hunks) do
      removed = removed + h[2]
      added = added + h[4]
    end
  end
  return ("(%s+%d -%d)"):format(what and (what .. ", ") or "", added, removed)
end

function H.tool_lines(item)
  local call = M.tool_call(item)
  local status = H.tool_status[call.status] or (item.partial and "running" or "")
  if item.running then status = "running" end
  local head
  if item.kind == "command" then
    local command = call.command and call.command.command or item.text or ""
    head = "### $ " .. M.one_line(command)
  else
    -- The summary names the tool already ("write_to_file notes.txt").
    head = "### " .. M.one_line(item.text ~= "" and item.text or item.tool or "tool")
  end
  local lines = { head .. (status ~= "" and ("  [" .. status .. "]") or "") }
  for _, edit in ipairs(call.edits or {}) do
    local stat = M.edit_stat(edit)
    table.insert(lines, "  " .. M.one_line(edit.path) .. (stat ~= "" and (" " .. stat) or ""))
  end
  if (call.feedback or "") ~= "" then table.insert(lines, "  feedback: " .. M.one_line(call.feedback)) end
  if (call.reason or "") ~= "" and call.status ~= "TOOL_CALL_STATUS_DONE" then
    table.insert(lines, "  " .. M.one_line(call.reason))
  end
  local reason_shown = (call.reason or "") ~= "" and call.status ~= "TOOL_CALL_STATUS_DONE"
  local output = item.running and item.output or call.output or item.output
  -- A finished command's result as the core words it for the model: its output (folded) and
  -- how it ended, shown apart; one with no output says so (not "2 lines of output").
  local body, ending
  if item.kind == "command" and not item.running and call.output and call.output ~= "" then
    body, ending = M.command_result(call.output)
  end
  if body then
    local ended = (ending ~= "" and not (reason_shown and vim.trim(ending) == vim.trim(call.reason))) and ending or nil
    if body == "" then
      table.insert(lines, "  no output" .. (ended and (" · " .. M.one_line(ended)) or ""))
      return lines
    end
    output = body
    if ended then
      H.output_lines(lines, output)
      table.insert(lines, "  " .. M.one_line(ended))
      return lines
    end
  end
  if output and output ~= "" and not ((call.reason or "") ~= "" and vim.trim(output) == vim.trim(call.reason)) then
    H.output_lines(lines, output)
  end
  return lines
end

--- A finished command's result ("Output:\n<text>\n<how it ended>", or "No output.\n<how it
--- ended>"): its text ("" for none) and how it ended ("Exit code: 0"); nil for another text.
function M.command_result(output)
  local ending = output:match("^No output%.\n([^\n]*)\n?$")
  if ending then return "", ending end
  local body, last = output:match("^Output:\n(.-)\n?\n([^\n]*)\n?$")
  if body then return body, last end
end

--- Appends `output` to `lines` as folded output lines (at most M.MAX_OUTPUT_LINES).
function H.output_lines(lines, output)
  local out = M.split(output)
  if out[#out] == "" then table.remove(out) end
  for i = 1, math.min(#out, M.MAX_OUTPUT_LINES) do
    table.insert(lines, M.OUTPUT_PREFIX .. out[i])
  end
  if #out > M.MAX_OUTPUT_LINES then
    table.insert(lines, M.OUTPUT_PREFIX .. ("… %d more lines"):format(#out - M.MAX_OUTPUT_LINES))
  end
end

--- The lines of one row (a blank separator last), and the highlights among them:
--- { [line index] = group } (the cut-off marker's).
function M.item_lines(item)
  local kind, role, text = item.kind or "text", item.role or "", item.text or ""
  local lines, highlights, answer
  if kind == "tool" or kind == "command" then
    lines = H.tool_lines(item)
  elseif kind == "completion" then
    lines = vim.list_extend({ "## Task completed" }, M.split(text))
  elseif kind == "followup" then
    lines = vim.list_extend({ "## Question" }, M.split(text))
    local ok, detail = pcall(vim.json.decode, item.detail or "")
    if ok and type(detail) == "table" and type(detail.options) == "table" then
      for i, option in ipairs(detail.options) do
        table.insert(lines, ("  %d. %s"):format(i, M.one_line(tostring(option))))
      end
    end
  elseif kind == "denied" then
    lines = { "## You denied " .. (item.tool or "the operation") .. (text ~= "" and (": " .. M.one_line(text)) or "") }
  elseif kind == "error" then
    lines = vim.list_extend({ "## Error" }, M.split(text))
  elseif kind == "task_error" then
    lines = vim.list_extend({ ("## Error (%s)"):format(item.tool or "unknown") }, M.split(text))
  elseif kind == "reasoning" then
    lines = { "## Thinking" }
    for _, l in ipairs(M.split(text)) do
      table.insert(lines, "> " .. l)
    end
  elseif kind == "checkpoint" then
    lines = {}
  elseif kind == "notice" then
    lines = { "~~ " .. M.one_line(text) }
  elseif kind == "plan" then
    lines = vim.list_extend({ "## Plan" }, M.split(text))
  elseif kind == "compaction" then
    lines = vim.list_extend({ "## Conversation summarized" }, M.split(text))
  elseif role == "MESSAGE_ROLE_USER" then
    lines = vim.list_extend({ "## You" }, M.split(text))
  else
    lines = vim.list_extend({ "## Dline" }, M.split(text))
    answer = true
  end
  -- A row still streaming may close its code block yet; one that ended (or was cut off in the
  -- middle of one) closes it here, or the rows after it would show as code.
  local closing = (not item.partial or item.cutOff) and fence.closing(lines)
  if closing then table.insert(lines, closing) end
  if answer and item.cutOff then
    table.insert(lines, M.CUT_OFF_LINE)
    highlights = { [#lines] = "DlineCutOff" }
  end
  if item.checkpointId and item.checkpointId ~= "" then
    table.insert(lines, M.checkpoint_line(item.checkpointId, item.checkpointKind, item.checkpointRestored))
  end
  table.insert(lines, "")
  return lines, highlights
end

--- A short checkpoint marker (gc compares with it, gs restores it, cursor on the line).
--- `restored`: the files were restored to it (and no checkpoint was saved since).
function M.checkpoint_line(id, kind, restored)
  local words = {}
  -- A chat read back from GetTask knows the checkpoint, not its kind, until ListCheckpoints
  -- answers (dline.task): the id alone then.
  if kind and kind ~= "" then table.insert(words, (kind:gsub("^CHECKPOINT_KIND_", ""):lower():gsub("_", " "))) end
  if restored then table.insert(words, "restored") end
  if #words == 0 then return "── checkpoint " .. id:sub(1, 8) end
  return ("── checkpoint %s (%s)"):format(id:sub(1, 8), table.concat(words, ", "))
end

--- The checkpoint id prefix on a marker line, or nil.
function M.checkpoint_on_line(line) return line and line:match("^── checkpoint (%x+)") or nil end

-- The question --------------------------------------------------------------------------

--- What the pending question (or the one nobody answered) shows at the end of the chat.
function M.ask_lines(state)
  local a = state.pending_ask
  if not a then
    if state.dropped_ask and state.status == "TASK_STATUS_INTERRUPTED" then
      return { ">> Not answered: the sidecar stopped. R resumes the task.", "" }
    end
    return {}
  end
  local lines
  if a.kind == "ASK_KIND_FOLLOWUP" then
    lines = { ">> Question: " .. M.one_line(a.summary), "   answer in the input below, or ga to pick an option" }
  elseif a.kind == "ASK_KIND_RESUME" then
    lines = { ">> " .. M.one_line(a.summary), "   ga resumes, gr does not" }
  elseif a.kind == "ASK_KIND_COMMAND_APPROVAL" then
    local c = a.command or {}
    lines = { ">> Run this command?  ga approve · gr deny · gA / gR with feedback" }
    for _, l in ipairs(M.split(c.command ~= nil and c.command ~= "" and c.command or a.summary)) do
      table.insert(lines, "   $ " .. l)
    end
    if (c.workingDirectory or "") ~= "" then table.insert(lines, "   in " .. M.one_line(c.workingDirectory)) end
  else
    lines =
      { ">> Approve " .. M.one_line(a.summary) .. "?  ga approve · gr deny · gA / gR with feedback · gp preview" }
    for _, edit in ipairs(a.edits or {}) do
      table.insert(lines, ("   %s %s"):format(M.one_line(edit.path), M.edit_stat(edit)))
    end
  end
  -- Asked again (its file changed on disk while it waited): why, under the question.
  if (a.askedAgainBecause or "") ~= "" then table.insert(lines, "   " .. M.one_line(a.askedAgainBecause)) end
  table.insert(lines, "")
  return lines
end

--- The messages sent while the model works, each as it will show once the turn ends.
function M.queued_lines(state)
  local lines = {}
  for _, text in ipairs(state.queued or {}) do
    table.insert(lines, "## You (queued: sent when the current turn ends)")
    vim.list_extend(lines, M.split(text))
    table.insert(lines, "")
  end
  return lines
end

function M.notice_lines(state)
  if (state.notice or "") == "" then return {} end
  return { "~~ " .. M.one_line(state.notice), "" }
end

return M
