-- A person in Neovim opens a task that runs in another editor's sidecar and answers its
-- question there: the plugin starts its own sidecar over the same roots, opens the task's chat
-- (GetTask, then Subscribe after its last seq), and the approval prompt is answered by a script.
-- Run by follow-clients.test.ts in a headless Neovim; writes what it saw as JSON to
-- DLINE_FOLLOW_OUT and exits 0, or prints the error and exits 1.
local T = require("dline_test")

local env = vim.env

local function play()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  local health = T.call(s, "SystemService", "Health", {})
  -- DLINE_FOLLOW_ANSWER=none: the question is shown and left unanswered (DLINE_FOLLOW_READY
  -- says it was shown, so that the test can act then).
  local prompts = T.script_select(function(items, opts)
    if opts.kind ~= "dline.approval" then return nil end
    if env.DLINE_FOLLOW_READY then T.write(env.DLINE_FOLLOW_READY, "asked") end
    if env.DLINE_FOLLOW_ANSWER == "none" then return nil end
    return "Approve"
  end)

  local controller = require("dline.task").open(env.DLINE_FOLLOW_TASK)
  local seqs, statuses = {}, {}
  controller:on_event(function(event)
    table.insert(seqs, event.seq)
    if event.statusChanged then table.insert(statuses, event.statusChanged.status) end
  end)
  T.wait(function()
    return controller.status == env.DLINE_FOLLOW_UNTIL
  end, "the task to reach " .. env.DLINE_FOLLOW_UNTIL, 60000)
  return {
    pid = health.pid,
    seqs = seqs,
    statuses = statuses,
    prompts = #prompts,
    chat = T.buffer_text(controller.chat.buf),
  }
end

local ok, result = xpcall(play, debug.traceback)
require("dline").session():stop()
if ok then
  T.write(env.DLINE_FOLLOW_OUT, vim.json.encode(result))
  vim.wait(300)
  vim.cmd("qall!")
else
  io.stderr:write(tostring(result) .. "\n")
  vim.cmd("cquit 1")
end
