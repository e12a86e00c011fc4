-- Checkpoints the core repaired (a damaged index rebuilt, a damaged HEAD put back, a repository
-- set aside and started again) are ready with a sentence of their own, naming where the damaged
-- files were kept. The plugin showed nothing for a ready status, so the person was never told:
-- now the sentence is an information notice, once per sentence in a Neovim session.
local T = require("dline_test")
local S = T.suite()

local DONE = { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "done" } } } }
local INDEX_REBUILT = "The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. "
  .. "The damaged files were kept aside in "

--- Records the GetStatus answers the plugin reads through session `s`: { [task id] = message }.
local function record_status_reads(s)
  local answers = {}
  local call = s.call
  s.call = function(self, service, method, request, cb, opts)
    if method ~= "GetStatus" then return call(self, service, method, request, cb, opts) end
    return call(self, service, method, request, function(err, res)
      cb(err, res)
      answers[request.taskId] = err and "error" or res.message
    end, opts)
  end
  return answers
end

local function wait_completed(s, task_id)
  T.wait(function()
    local res = T.call(s, "TaskService", "GetTask", { taskId = task_id })
    return res.task.status == "TASK_STATUS_COMPLETED"
  end, "task " .. task_id .. " to complete", 30000)
end

S.case("only a ready status with a sentence of its own is a repair to tell", function()
  local notes = require("dline.checkpoint_notes")
  local note = INDEX_REBUILT .. "/docs/checkpoints/1a2b/.git/index.corrupt-2026-12-05T04-53-04-113Z."
  T.eq(notes.note({ state = "CHECKPOINT_STATE_READY", message = note }), note, "a stream event's")
  T.eq(notes.note({ state = "CHECKPOINT_STATE_READY", message = "Checkpoints are ready." }), nil, "plain ready")
  T.eq(notes.note({ state = "CHECKPOINT_STATE_READY" }), nil, "ready with no sentence")
  T.eq(notes.note({ state = "CHECKPOINT_STATE_FAILED", message = "boom" }), nil, "failed: the chat header says it")
  T.eq(
    notes.note({ state = "CHECKPOINT_STATE_INITIALIZING", message = "Checkpoints are initializing." }),
    nil,
    "initializing"
  )
end)

S.case(
  "a task in a workspace whose checkpoint index was damaged tells once, as information, where the damaged files are",
  function()
    T.fail_on_error_notices()
    require("dline").setup({ chat = { position = "current" } })
    local s = require("dline").session()
    T.defer(function() s:stop() end)
    T.configure_model(s, { DONE, DONE, DONE })
    local root = vim.loop.cwd()

    -- A first task, in another window's sidecar, makes the workspace's shadow repository.
    local other = require("dline.session").new(require("dline").config(), require("dline").logger())
    T.defer(function() other:stop() end)
    local first =
      T.call(other, "TaskService", "NewTask", { workspaceRoot = root, text = "First", profileId = "scripted" })
    wait_completed(other, first.taskId)
    local pid = other.sidecar:pid()
    other:stop()
    T.wait(function() return not T.alive(pid) end, "the other window's sidecar to stop")
    local indexes = vim.fn.glob(vim.env.DLINE_DOCS_DIR .. "/checkpoints/*/.git/index", false, true)
    T.eq(#indexes, 1, "one shadow repository with an index")
    T.write(indexes[1], "not an index")

    local notices = T.capture_notify()
    local reads = record_status_reads(s)
    vim.cmd("Dline new Second")
    local second
    T.wait(function()
      second = require("dline.task").current()
      return second ~= nil and second.status == "TASK_STATUS_COMPLETED" and #T.notices_with(notices, INDEX_REBUILT) > 0
    end, "the second task to complete and the repair to be told", 30000)
    local told = T.notices_with(notices, INDEX_REBUILT)
    T.eq(#told, 1, "told once")
    T.eq(told[1].level, vim.log.levels.INFO, "as information")
    local aside = told[1].msg:match("kept aside in (.-)%.$")
    T.matches(aside, "/%.git/index%.corrupt%-", "the folder the damaged files were kept in")
    T.eq(vim.fn.isdirectory(aside), 1, "and it is there")

    -- The core says it again (GetStatus, for every task of the workspace): not told again.
    local note = told[1].msg:gsub("^%(dline%) ", "")
    vim.cmd("Dline new Third")
    local third
    T.wait(function()
      third = require("dline.task").current()
      return third ~= second and third.status == "TASK_STATUS_COMPLETED" and reads[third.task_id] ~= nil
    end, "the third task to complete and the plugin to read its checkpoints' status")
    T.eq(reads[third.task_id], note, "the third task's status repeats the sentence")
    T.eq(#T.notices_with(notices, INDEX_REBUILT), 1, "still told once")
    T.eq(#T.notices_with(notices, "Checkpoints are ready"), 0, "plain ready is not told")
  end,
  { timeout = 120000 }
)

return S
