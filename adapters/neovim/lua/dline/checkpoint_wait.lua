--- *dline.checkpoint_wait* Says once that a checkpoint call waits for another Dline window.
---
--- What it does: a checkpoint call (the list, Compare, Restore, Undo, Restore All) waits while
--- another Dline window (another sidecar) holds the workspace's checkpoint repository (its
--- baseline of a large workspace, a restore), up to two minutes; the person saw nothing happen.
--- While such a call has not answered, GetStatus is asked every second; once it names the other
--- window's process (waitingForPid, answered at once), the core's sentence is shown once, as
--- information. The call is not cut off by request_timeout_ms while the core still waits: the
--- core answers with its own sentence when it gives up.
--- What it does not do: hurry or stop the other window.

local M = {}

--- How long a call runs before GetStatus is asked, and how often after.
M.ASK_EVERY_MS = 1000

--- A status read gives up after this (the next one asks again).
M.ASK_TIMEOUT_MS = 5000

--- How long a checkpoint call may take: the core waits up to two minutes for another window's
--- lock (core/src/checkpoints/repo-lock.ts), then answers why; a little more for its work.
M.CALL_TIMEOUT_MS = 150000

--- The core's sentence (MESSAGES.waitingForLock in core/src/checkpoints/workspace-guard.ts).
function M.sentence(pid)
  return ("Checkpoints are waiting for another Dline window using this workspace's checkpoints (process %d)."):format(
    pid
  )
end

--- Calls CheckpointService `method` for task `task_id` as session:call does (`cb(err, res)`),
--- saying once, while it waits, that another window holds the checkpoints.
function M.call(task_id, method, request, cb)
  local dline = require("dline")
  local session = dline.session()
  local answered, told = false, false
  local timer = (vim.uv or vim.loop).new_timer()
  local function stop()
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
  -- Asked again every second, not one at a time: a status read that came while the other
  -- window's hold was still short waits for it as the call does (the core's skip list).
  timer:start(
    M.ASK_EVERY_MS,
    M.ASK_EVERY_MS,
    vim.schedule_wrap(function()
      if answered or told then return end
      session:call("CheckpointService", "GetStatus", { taskId = task_id }, function(err, res)
        local pid = (not err and res and tonumber(res.waitingForPid)) or 0
        if answered or told or pid == 0 then return end
        told = true
        stop()
        dline.notify(M.sentence(pid), vim.log.levels.INFO)
      end, { timeout_ms = M.ASK_TIMEOUT_MS })
    end)
  )
  local timeout = math.max(dline.config().request_timeout_ms or 0, M.CALL_TIMEOUT_MS)
  session:call("CheckpointService", method, request, function(err, res)
    answered = true
    stop()
    cb(err, res)
  end, { timeout_ms = timeout })
end

return M
