-- A person in Neovim opens a task that runs in another editor's sidecar and answers its
-- question there: the plugin starts its own sidecar over the same roots, opens the task's chat
-- (GetTask, then Subscribe after its last seq), and the approval prompt is answered by a script.
-- Run by follow-clients.test.ts in a headless Neovim; writes what it saw as JSON to
-- DLINE_FOLLOW_OUT and exits 0, or prints the error and exits 1.
local T = require("dline_test")

local env = vim.env

local function play()
  -- The sidecar's debug log is what the test shows when this fails.
  require("dline").setup({ chat = { position = "current" }, core_args = { "--log-level", "debug" } })
  local s = require("dline").session()
  local health = T.call(s, "SystemService", "Health", {})
  -- DLINE_FOLLOW_ANSWER=none: the question is shown and left unanswered (DLINE_FOLLOW_READY
  -- says it was shown, so that the test can act then).
  local notices = {}
  local notify = vim.notify
  vim.notify = function(msg, level, opts)
    table.insert(notices, { msg = msg, level = level })
    return notify(msg, level, opts)
  end
  local prompts = T.script_select(function(_, opts)
    if opts.kind ~= "dline.approval" then return nil end
    if env.DLINE_FOLLOW_READY then T.write(env.DLINE_FOLLOW_READY, "asked") end
    if env.DLINE_FOLLOW_ANSWER == "none" then return nil end
    return "Approve"
  end)
  if env.DLINE_FOLLOW_ANSWER == "late" then
    -- Like the built-in picker (inputlist): nothing else runs, no event is read, until the
    -- person picks, which happens once DLINE_FOLLOW_GO exists (after another window answered).
    vim.ui.select = function(items, opts, on_choice)
      table.insert(prompts, opts)
      if opts.kind ~= "dline.approval" then return on_choice(nil, nil) end
      T.write(env.DLINE_FOLLOW_READY, "asked")
      local waited = 0
      while not vim.loop.fs_stat(env.DLINE_FOLLOW_GO) and waited < 60000 do
        vim.loop.sleep(20)
        waited = waited + 20
      end
      for i, item in ipairs(items) do
        if item == "Approve" then return on_choice(item, i) end
      end
    end
  end

  local controller = require("dline.task").open(env.DLINE_FOLLOW_TASK)
  local seqs, statuses = {}, {}
  controller:on_event(function(event)
    table.insert(seqs, event.seq)
    if event.statusChanged then table.insert(statuses, event.statusChanged.status) end
  end)
  -- Within the test's own time limit, so that a failure reports what Neovim saw.
  T.wait(function()
    return controller.status == env.DLINE_FOLLOW_UNTIL
  end, "the task to reach " .. env.DLINE_FOLLOW_UNTIL, 40000)
  if env.DLINE_FOLLOW_ANSWER == "late" then
    T.wait(function()
      for _, n in ipairs(notices) do
        if n.msg:find("answer") then return true end
      end
      return false
    end, "what Neovim says about its late answer", 60000)
  end
  return {
    pid = health.pid,
    seqs = seqs,
    statuses = statuses,
    prompts = #prompts,
    notices = notices,
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
