-- The chat fold (dline.chat_state) against the event streams recorded from the real sidecar in
-- test/conformance/fold/fixtures: each must fold to the chat state the core itself has at the
-- end of it, directly and through the chat buffer that draws it (the same fixtures the VS Code
-- and Kotlin folds pass).
local T = require("dline_test")
local S = T.suite()

local function fixtures()
  local dir = T.repo_root() .. "/test/conformance/fold/fixtures"
  local list = {}
  for _, file in ipairs(vim.fn.globpath(dir, "*.json", false, true)) do
    table.insert(list, vim.json.decode(T.read(file)))
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

--- The state reduced to what every client's fold is compared on (Connect JSON leaves out
--- default values: an absent field is its default here).
local function view(state)
  local chat_state = require("dline.chat_state")
  local messages = {}
  for _, m in ipairs(chat_state.items(state)) do
    local v = {
      id = m.id,
      role = m.role or "MESSAGE_ROLE_UNSPECIFIED",
      kind = m.kind or "",
      text = m.text or "",
      partial = m.partial == true,
      checkpointId = m.checkpointId or "",
    }
    if m.toolCall then
      local edits = {}
      for _, e in ipairs(m.toolCall.edits or {}) do
        table.insert(edits, ("%s %s"):format(e.path or "", e.status or "FILE_STATUS_UNSPECIFIED"))
      end
      v.toolCall = {
        toolCallId = m.toolCall.toolCallId or "",
        status = m.toolCall.status or "TOOL_CALL_STATUS_UNSPECIFIED",
        edits = edits,
      }
    end
    table.insert(messages, v)
  end
  return {
    status = state.status or "TASK_STATUS_UNSPECIFIED",
    pendingAskId = state.pending_ask and state.pending_ask.askId or "",
    messages = messages,
  }
end

local function check(fixture, got, how)
  local expected = fixture.expected
  T.eq(got.status, expected.status, fixture.name .. " (" .. how .. "): status")
  T.eq(got.pendingAskId, expected.pendingAskId, fixture.name .. " (" .. how .. "): pending question")
  for i, m in ipairs(expected.messages) do
    T.eq(got.messages[i], m, ("%s (%s): message %d"):format(fixture.name, how, i))
  end
  T.eq(#got.messages, #expected.messages, fixture.name .. " (" .. how .. "): message count")
end

S.case("the recorded fixtures are all there", function()
  local names = {}
  for _, f in ipairs(fixtures()) do
    table.insert(names, f.name)
  end
  T.eq(names, {
    "approvals-with-edits",
    "compaction",
    "denial-with-feedback",
    "restore-with-rewind",
    "sidecar-restart-interrupted",
    "streaming",
  }, "fixtures")
end)

S.case("dline.chat_state folds every recorded stream to the core's own view of the task", function()
  local chat_state = require("dline.chat_state")
  for _, fixture in ipairs(fixtures()) do
    local state = chat_state.new("fold-" .. fixture.name)
    for _, event in ipairs(fixture.events) do
      chat_state.apply(state, event)
    end
    check(fixture, view(state), "fold")
  end
end)

S.case(
  "the chat buffer draws every recorded stream from the same fold, removing what a restore or retry dropped",
  function()
    require("dline").setup({})
    for _, fixture in ipairs(fixtures()) do
      local chat = require("dline.chat").new("fold-" .. fixture.name)
      chat:open({ position = "current", width = 80, height = 20, input_height = 3 })
      for _, event in ipairs(fixture.events) do
        chat:apply(event)
      end
      check(fixture, view(chat.state), "chat buffer")
      -- Every answer left is drawn.
      local text = chat:text()
      for _, m in ipairs(fixture.expected.messages) do
        if m.kind == "text" and m.text ~= "" then
          T.contains(text, vim.split(m.text, "\n", { plain = true })[1], fixture.name .. ": drawn")
        end
      end
      chat:close()
    end
  end
)

S.case("a restore removes the cut messages from the chat buffer", function()
  require("dline").setup({})
  local fixture
  for _, f in ipairs(fixtures()) do
    if f.name == "restore-with-rewind" then fixture = f end
  end
  local chat = require("dline.chat").new("fold-restore")
  chat:open({ position = "current", width = 80, height = 20, input_height = 3 })
  for _, event in ipairs(fixture.events) do
    chat:apply(event)
  end
  local text = chat:text()
  T.contains(text, "Writing one.", "kept: the first turn")
  T.truthy(not text:find("Writing two.", 1, true), "gone: the second turn")
  T.truthy(not text:find("Both written.", 1, true), "gone: the completion")
end)

return S
