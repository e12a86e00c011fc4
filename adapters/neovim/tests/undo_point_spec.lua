-- The checkpoint a file restore saves first (its undo point) holds the files as they were before
-- the restore and follows no message: found through ACP, restoring the conversation to it cut the
-- task back to an older message while its files went forward. :Dline restore of an undo point
-- offers Restore Files Only alone, and once its files were restored, says there is nothing to do.
-- Real sidecar, scripted model server.
local T = require("dline_test")
local S = T.suite()

local function checkpoints_of(s, task_id)
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = task_id }).checkpoints or {}
  table.sort(cps, function(a, b) return tonumber(a.createdAt) < tonumber(b.createdAt) end)
  return cps
end

local function of_kind(cps, kind)
  for _, cp in ipairs(cps) do
    if cp.kind == kind then return cp end
  end
end

S.case(":Dline restore of an undo point offers Restore Files Only alone; once restored to, nothing", function()
  T.fail_on_error_notices()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  local cwd = vim.loop.cwd()
  T.write(cwd .. "/notes.txt", "the person's notes\n")
  T.configure_model(s, {
    { toolCalls = { { name = "write_to_file", input = { path = "made.txt", content = "made by the task\n" } } } },
    { toolCalls = { { name = "attempt_completion", input = { result = "done" } } } },
  })
  local selects = T.script_select(function(items, opts)
    if opts.kind == "dline.approval" then return items[1] end
    for _, item in ipairs(items) do
      if type(item) == "table" and item.mode == "RESTORE_MODE_FILES" then return item end
    end
    return nil
  end)
  vim.cmd("Dline new Make a file")
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil and controller.status == "TASK_STATUS_COMPLETED"
  end, "the task to complete", 30000)
  T.truthy(T.read(cwd .. "/made.txt") ~= nil, "the task made its file")

  local baseline = of_kind(checkpoints_of(s, controller.task_id), "CHECKPOINT_KIND_BASELINE")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return T.read(cwd .. "/made.txt") == nil end, "the restore to delete the task's file")
  local undo_point = of_kind(checkpoints_of(s, controller.task_id), "CHECKPOINT_KIND_BEFORE_RESTORE")
  T.truthy(undo_point ~= nil, "the restore's undo point")

  local before = #selects
  vim.cmd("Dline restore " .. undo_point.id)
  T.wait(function() return #selects > before end, "the restore menu")
  local menu = selects[#selects]
  T.eq(#menu.items, 1, "one option for an undo point: " .. table.concat(menu.labels, " | "))
  T.eq(menu.items[1].mode, "RESTORE_MODE_FILES", "Restore Files Only")
  T.wait(function() return T.read(cwd .. "/made.txt") == "made by the task\n" end, "the files put back")
  T.eq(T.read(cwd .. "/notes.txt"), "the person's notes\n", "the person's file")

  -- Its files were restored and no checkpoint was saved since: nothing to choose, said as a warning.
  local notices = T.capture_notify()
  local shown = #selects
  vim.cmd("Dline restore " .. undo_point.id)
  T.wait(
    function() return #T.notices_with(notices, "nothing to restore") > 0 end,
    "the notice that there is nothing to restore"
  )
  T.eq(#selects, shown, "no menu")
  T.eq(T.read(cwd .. "/made.txt"), "made by the task\n", "nothing changed")
end)

return S
