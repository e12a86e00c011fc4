-- :Dline import-cline against the real sidecar: a legacy Cline task in HOME's ~/.cline/data
-- is discovered, confirmed with vim.ui.select, imported and listed by HistoryService.
local T = require("dline_test")
local S = T.suite()

local T0 = 1717000000000

local function write_legacy_task(task_id, task)
  local dir = vim.env.HOME .. "/.cline/data/tasks/" .. task_id
  local usage =
    vim.json.encode({ request = "...", tokensIn = 100, tokensOut = 20, cacheWrites = 5, cacheReads = 7, cost = 0.01 })
  T.write(
    dir .. "/ui_messages.json",
    vim.json.encode({
      { ts = T0, type = "say", say = "task", text = task },
      { ts = T0 + 1, type = "say", say = "api_req_started", text = usage },
      { ts = T0 + 2, type = "say", say = "text", text = "Working on it." },
      { ts = T0 + 3, type = "say", say = "completion_result", text = "The test passes now." },
    })
  )
  T.write(
    dir .. "/api_conversation_history.json",
    vim.json.encode({
      { role = "user", content = { { type = "text", text = "<task>\n" .. task .. "\n</task>" } } },
      {
        role = "assistant",
        content = { { type = "text", text = "The test passes now." } },
        modelInfo = { modelId = "claude-sonnet-4-5", providerId = "anthropic", mode = "act" },
      },
    })
  )
  return dir
end

local function capture_notify()
  local messages = {}
  vim.notify = function(msg, level) table.insert(messages, { msg = msg, level = level }) end
  return messages
end

S.case(":Dline import-cline imports a legacy Cline task after confirmation, read-only", function()
  local dir = write_legacy_task(tostring(T0), "Make the tests pass")
  local ui_before = T.read(dir .. "/ui_messages.json")
  local answer = nil -- first run: cancel
  local calls = T.script_select(function(items) return answer and items[1] or nil end)
  local messages = capture_notify()
  local s = require("dline").session()

  local err = T.await(function(cb) require("dline.import").run(cb) end, "a cancelled import")
  T.eq(err, "cancelled", "cancelled")
  T.eq(calls[1].items, { "Import 1 Cline task(s)", "Cancel" }, "confirmation")
  T.eq(#(T.call(s, "HistoryService", "ListTasks", {}).tasks or {}), 0, "nothing imported when cancelled")

  answer = true
  vim.cmd("Dline import-cline")
  T.wait(function()
    for _, m in ipairs(messages) do
      if m.msg:find("import-cline: ", 1, true) then return true end
    end
    return false
  end, "the import's report")
  T.eq(messages[#messages].msg, "(dline) import-cline: 1 imported", "report")
  local tasks = T.call(s, "HistoryService", "ListTasks", {}).tasks
  T.eq(#tasks, 1, "one task listed")
  T.eq(tasks[1].title, "Make the tests pass", "title")
  T.eq(tasks[1].source, "cline-import:legacy:" .. T0, "source")
  T.eq(T.read(dir .. "/ui_messages.json"), ui_before, "Cline's file untouched")

  -- Again: nothing left to import, no question asked.
  local before = #calls
  vim.cmd("Dline import-cline")
  T.wait(function() return messages[#messages].msg:find("nothing to import", 1, true) ~= nil end, "nothing to import")
  T.eq(#calls, before, "no confirmation")
  s:stop()
end)

return S
