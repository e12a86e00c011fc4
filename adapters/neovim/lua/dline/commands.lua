--- *dline.commands* `:Dline {subcommand} [args]`: parsing, dispatch and completion.

local M = {}
local H = {}

local function dline() return require("dline") end

local function task_mod() return require("dline.task") end

--- The current task's controller, or a warning.
function H.current()
  local controller = task_mod().current()
  if not controller then
    dline().notify("no task: start one with :Dline new {prompt} or pick one with :Dline history", vim.log.levels.WARN)
  end
  return controller
end

--- Runs `fn(task_id, workspace_root)` for the current task.
function H.with_task(fn)
  local controller = H.current()
  if controller then fn(controller.task_id, controller.workspace_root) end
end

H.subcommands = {
  new = {
    desc = "start a task: :[range]Dline new [prompt] (#buffer, #file:path)",
    run = function(args, opts)
      local context = require("dline.context")
      local buf = vim.api.nvim_get_current_buf()
      local prompt = table.concat(args, " ")
      -- #buffer means the buffer the command was given in.
      if prompt ~= "" then return task_mod().new_task(context.with_range(prompt, opts, buf)) end
      require("dline.ui").input({ prompt = "Dline task: " }, function(text)
        if text and vim.trim(text) ~= "" then task_mod().new_task(context.with_range(text, opts, buf)) end
      end)
    end,
  },
  chat = {
    desc = "open the chat of the current task",
    run = function()
      local controller = H.current()
      if controller then controller.chat:open(dline().config().chat) end
    end,
  },
  toggle = {
    desc = "open or close the chat sidebar",
    run = function()
      local controller = task_mod().current()
      require("dline.sidebar").toggle(controller and controller.chat or nil)
    end,
  },
  send = {
    desc = "send a message to the current task: :[range]Dline send {text}",
    run = function(args, opts)
      local controller = H.current()
      local text = require("dline.context").with_range(table.concat(args, " "), opts)
      if controller and text ~= "" then controller:send(text) end
    end,
  },
  add = {
    desc = "add lines to the message being written: :[range]Dline add (the chat input)",
    run = function(_, opts)
      local context = require("dline.context")
      local sidebar = require("dline.sidebar")
      local buf = vim.api.nvim_get_current_buf()
      local first, last = opts.line1, opts.line2
      if (opts.range or 0) == 0 then
        first, last = 1, vim.api.nvim_buf_line_count(buf)
      end
      local block = context.range_block(buf, first, last)
      local input = sidebar.input_buffer()
      local lines = vim.api.nvim_buf_get_lines(input, 0, -1, false)
      if #lines == 1 and lines[1] == "" then lines = {} end
      if #lines > 0 then table.insert(lines, "") end
      vim.list_extend(lines, vim.split(block, "\n", { plain = true }))
      vim.api.nvim_buf_set_lines(input, 0, -1, false, lines)
      local controller = task_mod().current()
      if controller then controller.chat:open(dline().config().chat) end
      dline().notify(("added %d line(s) to the message in the chat input"):format(last - first + 1))
    end,
  },
  profile = {
    desc = "model profiles: :Dline profile add | list | rm {id}",
    run = function(args)
      local profile = require("dline.profile")
      local sub = args[1] or "list"
      if sub == "add" then return profile.add() end
      if sub == "list" then return profile.open() end
      if sub == "rm" and args[2] then return profile.remove(args[2]) end
      dline().notify("usage: :Dline profile add | list | rm {id}", vim.log.levels.ERROR)
    end,
  },
  approve = {
    desc = "approve the pending request: :Dline approve [feedback]",
    run = function(args)
      local controller = H.current()
      if controller then controller:respond(true, table.concat(args, " ")) end
    end,
  },
  deny = {
    desc = "deny the pending request: :Dline deny [feedback]",
    run = function(args)
      local controller = H.current()
      if controller then controller:respond(false, table.concat(args, " ")) end
    end,
  },
  cancel = {
    desc = "cancel the running task",
    run = function()
      local controller = H.current()
      if controller then controller:cancel() end
    end,
  },
  resume = {
    desc = "resume a task: :Dline resume [task id]",
    run = function(args)
      if args[1] then return task_mod().resume(args[1]) end
      local controller = task_mod().current()
      if controller then return controller:resume() end
      -- A Neovim started again after it (or the sidecar) stopped under a task: no chat is open.
      task_mod().resume_interrupted_here()
    end,
  },
  messages = {
    desc = "the plugin's recent messages in full (a notice shows its first line only)",
    run = function() require("dline").show_notices() end,
  },
  history = {
    desc = "pick a task to open, resume, favourite or delete: :Dline history [query]",
    run = function(args) require("dline.history").open(table.concat(args, " ")) end,
  },
  checkpoints = {
    desc = "list the current task's checkpoints, then compare or restore one",
    run = function()
      H.with_task(function(task_id, root)
        local cps = require("dline.checkpoints")
        cps.pick(task_id, nil, "Checkpoints", function(cp)
          require("dline.ui").select(
            { "Compare", "Restore" },
            { prompt = "Checkpoint " .. cp.id:sub(1, 8) },
            function(action)
              if action == "Compare" then cps.compare(task_id, cp, root) end
              if action == "Restore" then cps.restore(task_id, cp, root) end
            end
          )
        end)
      end)
    end,
  },
  compare = {
    desc = "changes since a checkpoint, in diff mode: :Dline compare [checkpoint id]",
    run = function(args)
      H.with_task(function(task_id, root)
        local cps = require("dline.checkpoints")
        cps.pick(task_id, args[1], "Compare with checkpoint", function(cp) cps.compare(task_id, cp, root) end)
      end)
    end,
  },
  restore = {
    desc = "restore a checkpoint (files, task, or both): :Dline restore [checkpoint id]",
    run = function(args)
      H.with_task(function(task_id, root)
        local cps = require("dline.checkpoints")
        cps.pick(task_id, args[1], "Restore checkpoint", function(cp) cps.restore(task_id, cp, root) end)
      end)
    end,
  },
  undo = {
    desc = "undo the current task's last file restore (its files as they were before it)",
    run = function()
      H.with_task(function(task_id, root) require("dline.checkpoints").undo(task_id, root) end)
    end,
  },
  edit = {
    desc = "edit a message you sent, then Restore Chat or Restore All",
    run = function()
      H.with_task(function(task_id, root) require("dline.checkpoints").edit_message(task_id, root) end)
    end,
  },
  settings = {
    desc = "edit the global settings (JSON; :write saves)",
    run = function() require("dline.settings").open() end,
  },
  capabilities = {
    desc = "list rules, workflows, skills, subagents, hooks and MCP servers; toggle one in this workspace",
    run = function() require("dline.capabilities").open() end,
  },
  trust = {
    desc = "trust this workspace (after a confirmation): its hooks and MCP servers may run",
    run = function() require("dline.capabilities").set_trust(true) end,
  },
  untrust = {
    desc = "stop trusting this workspace: its hooks and MCP servers do not run",
    run = function() require("dline.capabilities").set_trust(false) end,
  },
  ["import-cline"] = {
    desc = "import Cline's tasks (read-only)",
    run = function() require("dline.import").run() end,
  },
  restart = {
    desc = "restart the sidecar (also after it gave up); asks first while a task runs (! does not)",
    run = function(_, opts) H.restart((opts or {}).bang) end,
  },
  log = {
    desc = "open the plugin's log file",
    run = function() vim.cmd("split " .. vim.fn.fnameescape(dline().config().log_file)) end,
  },
}
H.subcommands.task = H.subcommands.new

--- The choices of the restart confirmation (the first restarts).
M.RESTART_CHOICES = { "Restart: stop them (R or :Dline resume continues each)", "Keep the sidecar running" }

--- Restarts the sidecar; while tasks of this editor run or wait for an answer, only after a
--- confirmation that names them (a restart stops them: they stand interrupted), unless `forced`.
function H.restart(forced)
  local function restart()
    local err = dline().session():restart()
    if err then dline().notify(err, vim.log.levels.ERROR) end
  end
  local busy = task_mod().busy()
  if forced or #busy == 0 then return restart() end
  require("dline.ui").select(M.RESTART_CHOICES, {
    prompt = ("Restart the sidecar? It stops %s %s."):format(
      #busy == 1 and "task" or "tasks",
      table.concat(busy, ", ")
    ),
    kind = "dline.confirm",
  }, function(_, index)
    if index == 1 then restart() end
  end)
end

function M.names()
  local names = vim.tbl_keys(H.subcommands)
  table.sort(names)
  return names
end

--- Handler of :Dline (opts from nvim_create_user_command).
function M.run(opts)
  local args = vim.split(vim.trim(opts.args or ""), "%s+", { trimempty = true })
  local name = table.remove(args, 1)
  local ranged = { new = true, task = true, send = true, add = true }
  if (opts.range or 0) > 0 and name and not ranged[name] then
    return dline().notify(("%s takes no range (only new, send and add do)"):format(name), vim.log.levels.ERROR)
  end
  if not name then
    local controller = task_mod().current()
    if controller then return controller.chat:open(dline().config().chat) end
    return H.subcommands.new.run({})
  end
  local sub = H.subcommands[name]
  if not sub then
    return dline().notify(
      ("unknown command '%s'; one of: %s"):format(name, table.concat(M.names(), ", ")),
      vim.log.levels.ERROR
    )
  end
  local ok, err = pcall(sub.run, args, opts)
  if not ok then dline().notify(name .. ": " .. tostring(err), vim.log.levels.ERROR) end
end

function M.complete(arg_lead, cmd_line)
  local words = vim.split(cmd_line, "%s+", { trimempty = true })
  local function starting(list)
    return vim.tbl_filter(function(n) return n:sub(1, #arg_lead) == arg_lead end, list)
  end
  -- The subcommand is the word after "Dline" (a range may come before it).
  local at = 1
  for i, w in ipairs(words) do
    if w:match("Dline$") then at = i end
  end
  local count = #words - at
  if count == 0 or (count == 1 and arg_lead ~= "") then return starting(M.names()) end
  if words[at + 1] == "profile" and (count == 1 or (count == 2 and arg_lead ~= "")) then
    return starting({ "add", "list", "rm" })
  end
  return {}
end

return M
