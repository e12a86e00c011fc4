-- The conformance scenario played through the Neovim plugin, the way a user would: commands,
-- and vim.ui.select / vim.ui.input answered by a script. Run by drivers/neovim-driver.ts in a
-- headless Neovim (cwd: the workspace) with DLINE_CONFORMANCE_* variables; writes its result
-- as JSON to DLINE_CONFORMANCE_OUT and exits 0, or prints the error and exits 1.
local T = require("dline_test")

local env = vim.env
local scenario = vim.json.decode(T.read(env.DLINE_CONFORMANCE_SCENARIO))
local phase = env.DLINE_CONFORMANCE_PHASE

local notices = {}
vim.notify = function(msg, level)
  table.insert(notices, { msg = msg, level = level })
  io.stderr:write(msg .. "\n")
end

local function wait_notice(pattern, what)
  T.wait(function()
    for _, n in ipairs(notices) do
      if n.level == vim.log.levels.ERROR then T.fail(n.msg) end
      if n.msg:find(pattern) then return true end
    end
  end, what, 60000)
  notices = {}
end

local function play()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  -- The profile the CLI derives from OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY.
  T.call(s, "SettingsService", "UpsertProfile", {
    profile = {
      id = "env-openai",
      name = "OpenAI-compatible (from environment)",
      provider = "openai",
      baseUrl = env.DLINE_CONFORMANCE_MODEL_URL,
      model = scenario.model,
      contextWindow = "128000",
    },
  })
  T.call(s, "SettingsService", "SetSecret", { profileId = "env-openai", name = "api_key", value = scenario.testKey })
  require("dline").config().profile_id = "env-openai"

  T.script_select(function(items, opts)
    if opts.kind == "dline.approval" then return "Approve" end
    if opts.kind == "dline.followup" then return items[1] end
    if opts.kind == "dline.checkpoint" then
      for _, cp in ipairs(items) do
        if cp.kind == "CHECKPOINT_KIND_BASELINE" then return cp end
      end
    end
    if opts.kind == "dline.restore" then
      for _, o in ipairs(items) do
        if o.label == "Restore Files Only" then return o end
      end
    end
    if opts.kind == "dline.edit_message" then return items[#items] end
    if opts.kind == "dline.edit_mode" then
      for _, o in ipairs(items) do
        if o.label == "Restore All" then return o end
      end
    end
    -- Restore All's confirmation (the files it overwrites and deletes): go ahead.
    if opts.kind == "dline.restore_all" then return items[1] end
  end)
  T.script_input(function()
    return scenario.editedAnswer
  end)

  vim.cmd("Dline new " .. scenario.prompt)
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil and controller.status == "TASK_STATUS_COMPLETED"
  end, "the task to complete", 60000)
  local task_id = controller.task_id

  vim.cmd("Dline compare")
  T.wait(function()
    return vim.fn.getqflist({ title = 1 }).title == "Changes since snapshot"
  end, "the compare")
  local compare = {}
  local cwd = vim.loop.cwd()
  for _, item in ipairs(vim.fn.getqflist()) do
    local name = vim.api.nvim_buf_get_name(item.bufnr)
    local rel = name:sub(1, #cwd + 1) == cwd .. "/" and name:sub(#cwd + 2) or name
    table.insert(compare, { path = rel, status = (item.text:match("^(%a+)")) })
  end
  table.sort(compare, function(a, b)
    return a.path < b.path
  end)
  vim.cmd("tabonly")

  vim.cmd("Dline restore")
  wait_notice("^%(dline%) Restore Files Only:", "the restore")
  vim.cmd("Dline edit")
  wait_notice("^%(dline%) Restore All:", "the edit")
  return { taskId = task_id, compare = compare }
end

local function delete()
  local task_id = env.DLINE_CONFORMANCE_TASK
  T.script_select(function(items, opts)
    if opts.kind == "dline.history" then
      for _, t in ipairs(items) do
        if t.id == task_id then return t end
      end
    end
    if opts.kind == "dline.history_action" then return "Delete" end
    if opts.kind == "dline.confirm" then return "Delete" end
  end)
  vim.cmd("Dline history")
  wait_notice("^%(dline%) deleted 1 task", "the deletion")
  return { deleted = task_id }
end

local ok, result = xpcall(phase == "delete" and delete or play, debug.traceback)
require("dline").session():stop()
if ok then
  T.write(env.DLINE_CONFORMANCE_OUT, vim.json.encode(result))
  -- Let the sidecar see its stdin close and flush before this process exits.
  vim.wait(300)
  vim.cmd("qall!")
else
  io.stderr:write(tostring(result) .. "\n")
  vim.cmd("cquit 1")
end
