-- The checkpoint list, Compare and Restore wait while another Dline window (another sidecar)
-- holds the workspace's checkpoint repository (its baseline of a large workspace, a restore), up
-- to two minutes: Neovim showed nothing, and cut the call off after request_timeout_ms (30 s).
-- Now the core's sentence, naming that window's process, is an information notice, once, and
-- the call waits as long as the core does. The other window is a separate node process holding
-- the real repository lock (test/checkpoints/fixtures/save-driver.ts).
local T = require("dline_test")
local S = T.suite()

local DONE = { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "done" } } } }
local WAITING = "Checkpoints are waiting for another Dline window using this workspace's checkpoints (process %d)."

--- A completed task of this Neovim's (the current one), with its checkpoints.
local function completed_task(s)
  T.configure_model(s, { DONE })
  vim.cmd("Dline new One")
  local task
  T.wait(function()
    task = require("dline.task").current()
    return task ~= nil and task.status == "TASK_STATUS_COMPLETED"
  end, "the task to complete", 30000)
  T.truthy(#(T.call(s, "CheckpointService", "ListCheckpoints", { taskId = task.task_id }).checkpoints or {}) > 0)
  return task
end

S.case(
  ":Dline checkpoints while another window holds them says once, as information, that it waits for that process, then lists them",
  function()
    T.fail_on_error_notices()
    -- Shorter than the other window's hold below: the list is not cut off by it.
    require("dline").setup({ chat = { position = "current" }, request_timeout_ms = 3000 })
    local s = require("dline").session()
    T.defer(function() s:stop() end)
    completed_task(s)
    local holder = T.hold_checkpoints(vim.loop.cwd())
    local notices = T.capture_notify()
    local selects = T.script_select(function() return nil end)

    vim.cmd("Dline checkpoints")
    local said = "(dline) " .. WAITING:format(holder.pid)
    T.wait(function() return #T.notices_with(notices, said) > 0 end, "the wait to be told")
    T.eq(T.notices_with(notices, said)[1].level, vim.log.levels.INFO, "as information")
    T.eq(T.notices_with(notices, said)[1].msg, said, "the core's sentence")
    T.eq(#selects, 0, "the list waits")
    -- Past request_timeout_ms, the call still waits for the other window (no error: it would fail the wait).
    vim.wait(4000, function() return #selects > 0 end, 50)
    T.eq(#selects, 0, "the list still waits")

    holder.kill()
    T.wait(function() return #selects > 0 end, "the checkpoint list")
    T.eq(selects[1].opts.prompt, "Checkpoints", "the list")
    T.eq(#T.notices_with(notices, "waiting for another Dline window"), 1, "told once")
  end,
  { timeout = 120000 }
)

S.case(
  ":Dline restore whose restore waits for another window says so once, then restores; nothing is said when none holds them",
  function()
    T.fail_on_error_notices()
    require("dline").setup({ chat = { position = "current" } })
    local s = require("dline").session()
    T.defer(function() s:stop() end)
    completed_task(s)
    local notices = T.capture_notify()
    local holder
    T.script_select(function(items, opts)
      if opts.kind == "dline.checkpoint" then return items[#items] end -- the oldest: the baseline
      -- The menu of restores: another window takes the checkpoints before the restore is sent.
      holder = T.hold_checkpoints(vim.loop.cwd())
      return items[1]
    end)
    local restored
    local cps = require("dline.checkpoints")
    local task_id = require("dline.task").current().task_id
    cps.pick(task_id, nil, "Restore checkpoint", function(cp)
      cps.restore(task_id, cp, vim.loop.cwd(), function(err, res) restored = { err = err, res = res } end)
    end)
    T.wait(function() return holder ~= nil end, "the restore menu")
    local said = "(dline) " .. WAITING:format(holder.pid)
    T.wait(function() return #T.notices_with(notices, said) > 0 end, "the wait to be told")
    T.eq(restored, nil, "the restore waits")

    holder.kill()
    T.wait(function() return restored ~= nil end, "the restore")
    T.eq(restored.err, nil, "restored")
    T.eq(#T.notices_with(notices, "waiting for another Dline window"), 1, "told once")

    -- Nobody holds them now: a compare says nothing of another window.
    local cp = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = task_id }).checkpoints[1]
    T.await(function(cb) cps.compare(task_id, cp, vim.loop.cwd(), cb) end, "the compare")
    T.eq(#T.notices_with(notices, "waiting for another Dline window"), 1, "nothing more said")
  end,
  { timeout = 120000 }
)

return S
