--- *dline.task* Runs tasks from the editor: new task, open a task's chat, answer its
--- questions, send follow-ups, cancel, resume.
---
--- What it does: one controller per open task, which loads the task (GetTask), renders it
--- in a dline.chat, follows its events (Subscribe, resumed with after_seq across sidecar
--- restarts), shows the change an approval is about before asking (dline.preview), reloads
--- the buffers of files a tool changed, tells the core which files the editor has unsaved,
--- and sends the user's words and decisions back (SendMessage, Respond).
--- What it does not do: run the agent (the sidecar does) or write Dline's files.

local chat_mod = require("dline.chat")
local ask = require("dline.ask")
local ids = require("dline.ids")
local visible = require("dline.visible")
local buffers = require("dline.buffers")
local context = require("dline.context")
local checkpoint_notes = require("dline.checkpoint_notes")

local M = {}
local H = {}

H.controllers = {} -- task id -> controller
H.last = nil -- the task id used last
H.history_watch = nil -- WatchHistory, while chats are open: closes chats of deleted tasks

local function dline() return require("dline") end

---@class dline.TaskController
---@field task_id string
---@field chat dline.Chat
---@field watch dline.Watch|nil
---@field status string|nil
---@field pending_ask table|nil
---@field workspace_root string|nil
---@field events integer  events received
---@field preview dline.Preview|nil  the change of the pending approval, on screen

--- The controller of the task shown in the current buffer, else of the last task used.
---@return dline.TaskController|nil
function M.current()
  local id = vim.b.dline_task_id
  if id and H.controllers[id] then return H.controllers[id] end
  local shown = require("dline.sidebar").current()
  if
    vim.api.nvim_get_current_buf() == require("dline.sidebar").input_buffer()
    and shown
    and H.controllers[shown.task_id]
  then
    return H.controllers[shown.task_id]
  end
  return H.last and H.controllers[H.last] or nil
end

function M.get(task_id) return H.controllers[task_id] end

--- The tasks of this editor that run or wait for an answer: { "1a2b3c4d (running)", ... }.
function M.busy()
  local busy = {}
  for id, c in pairs(H.controllers) do
    if c.status == "TASK_STATUS_RUNNING" or c.status == "TASK_STATUS_WAITING" then
      local what = c.status == "TASK_STATUS_RUNNING" and "running" or "waiting for you"
      table.insert(busy, ("%s (%s)"):format(ids.short(id), what))
    end
  end
  table.sort(busy)
  return busy
end

--- Every open controller.
function M.all() return vim.tbl_values(H.controllers) end

--- Whether a failed call failed for want of a model (the core's ErrorDetail reason).
function H.no_model(err)
  local reason = require("dline.connect").reason(err)
  if reason == "ERROR_REASON_NO_MODEL" or reason == "ERROR_REASON_NO_DEFAULT_PROFILE" then return reason end
end

--- No model: offer to set one up (then start the task), and keep the prompt in the input area.
function H.offer_model_setup(prompt, reason, cb)
  local sidebar = require("dline.sidebar")
  vim.api.nvim_buf_set_lines(sidebar.input_buffer(), 0, -1, false, vim.split(prompt, "\n", { plain = true }))
  local what = reason == "ERROR_REASON_NO_MODEL" and "No model is configured" or "No default model profile is chosen"
  require("dline.ui").select(
    { "Set up a model now", "Not now" },
    { prompt = what .. ": your prompt is kept in the chat input.", kind = "dline.no_model" },
    function(choice)
      if choice ~= "Set up a model now" then return cb and cb("no model") end
      require("dline.profile").add(function(err)
        if err then return cb and cb(err) end
        vim.api.nvim_buf_set_lines(sidebar.input_buffer(), 0, -1, false, {})
        M.new_task(prompt, cb)
      end)
    end
  )
end

--- Starts a task with `prompt` (its #buffer / #file: references expanded) in the editor's
--- working directory and opens its chat.
function M.new_task(prompt, cb)
  local text, problem = context.expand(prompt)
  if not text then
    dline().notify(problem, vim.log.levels.ERROR)
    return cb and cb(problem)
  end
  local session = dline().session()
  local config = dline().config()
  local root = (vim.uv or vim.loop).cwd()
  local editor = buffers.editor_state(root)
  session:call(
    "TaskService",
    "NewTask",
    { workspaceRoot = root, text = text, profileId = config.profile_id, editor = editor },
    function(err, res)
      if err then
        local reason = H.no_model(err)
        if reason then return H.offer_model_setup(prompt, reason, cb) end
        dline().notify_error("new task", err)
        return cb and cb(err)
      end
      local controller =
        M.open(res.taskId, { replay = true, workspace_root = root, reported = table.concat(editor.unsavedFiles, "\n") })
      if cb then cb(nil, controller) end
    end
  )
end

--- Opens the chat of task `task_id` and follows its events. `opts.replay`: render from the
--- events (a task just created); otherwise from GetTask, then events after its last seq, and
--- `opts.on_loaded(controller)` once it is loaded.
---@return dline.TaskController
function M.open(task_id, opts)
  opts = opts or {}
  H.last = task_id
  local existing = H.controllers[task_id]
  if existing and vim.api.nvim_buf_is_valid(existing.chat.buf) then
    existing.chat:open(dline().config().chat)
    if opts.on_loaded then opts.on_loaded(existing) end
    return existing
  end
  local controller = setmetatable(
    { task_id = task_id, events = 0, workspace_root = opts.workspace_root, reported = opts.reported },
    { __index = H.Controller }
  )
  controller.chat = chat_mod.new(task_id)
  controller.chat.on_send = function(text, restore)
    controller:send(text, function(err)
      if err and restore then restore() end
    end)
  end
  H.controllers[task_id] = controller
  H.watch_history()
  H.watch_editor()
  require("dline.quit").watch(M.busy)
  context.track()
  controller.chat:open(dline().config().chat)
  controller.chat.on_wipe = function() controller:close() end
  if opts.replay then
    controller:follow("0")
    H.checkpoint_status(controller)
  else
    controller:reload(function(err)
      if err then return end
      H.checkpoint_status(controller)
      if opts.on_loaded then opts.on_loaded(controller) end
    end)
  end
  return controller
end

--- Shows up front when the task's checkpoints are not working (e.g. unavailable in the home
--- folder), instead of only when a checkpoint is asked for; and, once, that the core repaired them.
function H.checkpoint_status(self)
  local latest = require("dline.chat_state").checkpoint_read(self.chat.state)
  dline().session():call("CheckpointService", "GetStatus", { taskId = self.task_id }, function(err, res)
    if err or not res or not vim.api.nvim_buf_is_valid(self.chat.buf) then return end
    -- A repair is news even in an answer a newer event made out of date.
    checkpoint_notes.offer(res)
    if not latest(self.chat.state) then return end
    if res.state and res.state ~= "CHECKPOINT_STATE_READY" then self.chat:set_checkpoint_status(res) end
  end)
end

--- Follows the history index (this and other sidecars) to close the chats of tasks that
--- were deleted, here or by another client.
function H.watch_history()
  if H.history_watch then return end
  local function gone(task_id)
    local controller = H.controllers[task_id]
    if not controller then return end
    dline().notify("task " .. ids.short(task_id) .. " no longer exists")
    controller.chat:close()
  end
  H.history_watch = dline().session():watch({
    service = "HistoryService",
    method = "WatchHistory",
    request = function(after_seq) return { afterSeq = after_seq } end,
    seq = function(msg) return msg.seq end,
    on_message = function(msg)
      for _, id in ipairs(msg.removedTaskIds or {}) do
        gone(id)
      end
      if msg.reload then
        for id in pairs(H.controllers) do
          dline().session():call("TaskService", "GetTask", { taskId = id }, function(err)
            if err and err.code == "not_found" then gone(id) end
          end)
        end
      end
    end,
    on_error = function() H.history_watch = nil end,
  })
end

--- Reports the editor's unsaved files to the tasks that run, whenever a buffer is modified,
--- saved or closed, and again after a sidecar restart (the core keeps them per process).
function H.watch_editor()
  if H.editor_watch then return end
  H.editor_watch = true
  buffers.on_unsaved_change(function()
    for _, c in pairs(H.controllers) do
      H.report_editor(c)
    end
  end)
  dline().session():on(function(event)
    if event ~= "ready" then return end
    for _, c in pairs(H.controllers) do
      c.reported = nil
      H.report_editor(c)
    end
  end)
end

function H.active(self)
  return self.status == "TASK_STATUS_RUNNING" or self.status == "TASK_STATUS_WAITING" or self.status == nil
end

function H.report_editor(self)
  if not H.active(self) or not self.workspace_root then return end
  local unsaved = buffers.editor_state(self.workspace_root).unsavedFiles
  local key = table.concat(unsaved, "\n")
  if key == (self.reported or "") then return end
  self.reported = key
  dline().session():call(
    "TaskService",
    "UpdateEditorState",
    { taskId = self.task_id, editor = { unsavedFiles = unsaved } },
    function(err)
      if err then
        self.reported = nil
        dline().logger():warn("reporting unsaved files: " .. require("dline.connect").format_error(err))
      end
    end
  )
end

H.Controller = {}

--- Loads the task (GetTask), renders it and follows events after its last seq.
function H.Controller.reload(self, cb)
  dline().session():call("TaskService", "GetTask", { taskId = self.task_id }, function(err, res)
    if err then
      dline().notify_error("open task " .. ids.short(self.task_id), err)
      return cb and cb(err)
    end
    local task = res.task or {}
    self.workspace_root = task.workspaceRoot ~= "" and task.workspaceRoot or self.workspace_root
    self.chat:load(res)
    self.status = self.chat.state.status
    self.pending_ask = nil
    -- Follow from the last event this chat saw if that is earlier than GetTask's last seq:
    -- events that happened while GetTask was read are then replayed (the chat ignores what
    -- the stored messages already show) instead of missed; statuses catch up the same way.
    local from = res.lastSeq or "0"
    if self.watch then
      if not self.watch.closed and tonumber(self.watch.last_seq) < tonumber(from) then from = self.watch.last_seq end
      self.watch.close()
    end
    self:follow(from)
    if self.chat.state.pending_ask then H.on_ask(self, self.chat.state.pending_ask) end
    self:refresh_checkpoints()
    if cb then cb(nil) end
  end)
end

--- Reads the task's checkpoints (ListCheckpoints) for the chat's markers: their kinds (a chat
--- read back from GetTask knows only their ids) and which one the files were restored to.
function H.Controller.refresh_checkpoints(self, cb)
  local state = self.chat.state
  dline().session():call("CheckpointService", "ListCheckpoints", { taskId = self.task_id }, function(err, res)
    -- Checkpoints off or not ready: the markers keep what they show.
    if err or not res or self.chat.state ~= state or not vim.api.nvim_buf_is_valid(self.chat.buf) then
      return cb and cb(err)
    end
    self.chat:set_checkpoints(res.checkpoints or {})
    if cb then cb(nil) end
  end)
end

function H.Controller.follow(self, after_seq)
  self.watch = dline().session():watch({
    service = "TaskService",
    method = "Subscribe",
    after_seq = after_seq,
    request = function(seq) return { taskId = self.task_id, afterSeq = seq } end,
    seq = function(msg) return msg.event and msg.event.seq end,
    on_message = function(msg) H.on_event(self, msg.event or {}) end,
    on_error = function(err)
      if err.code == "not_found" then
        -- Deleted (here, or by another client): its chat has nothing left to show.
        if H.controllers[self.task_id] == self then
          dline().notify("task " .. ids.short(self.task_id) .. " no longer exists")
        end
        return self.chat:close()
      end
      dline().notify_error("task " .. ids.short(self.task_id) .. " events", err)
    end,
  })
end

function H.on_event(self, event)
  self.events = self.events + 1
  self.chat:apply(event)
  local state = self.chat.state
  local was = self.status
  self.status = state.status
  if event.ask then H.on_ask(self, event.ask) end
  if event.checkpointStatus then checkpoint_notes.offer(event.checkpointStatus) end
  if self.pending_ask and state.pending_ask ~= self.pending_ask and not event.ask then
    -- Answered (here or by another client), dropped, or no longer waited for.
    self.pending_ask = nil
    H.close_preview(self)
  end
  if event.statusChanged and self.status ~= was then
    if self.status == "TASK_STATUS_INTERRUPTED" then
      -- Said with the core's reason when it is not its sidecar stopping: a restore in another
      -- window or the CLI stopped it, or rewound it to an earlier point. Before, such a stop read
      -- "its sidecar stopped", and a rewind from another window said nothing. A restore made
      -- here says it itself (checkpoints.lua notes when it asked for one).
      local own = self.own_restore_at and vim.loop.now() - self.own_restore_at < 60000
      self.own_restore_at = nil
      if not own then dline().notify(H.interrupted_because(self, event.statusChanged.reason), vim.log.levels.WARN) end
    elseif self.status == "TASK_STATUS_RUNNING" then
      H.report_editor(self)
    end
  end
  if event.toolStarted and event.toolStarted.command then
    -- The files open here that exist as a command starts: those it deletes are told apart
    -- from buffers of files never written.
    self.command_files = self.command_files or {}
    self.command_files[event.toolStarted.toolCallId] = buffers.existing(self.workspace_root)
  end
  if event.toolFinished then H.after_tool(self, event.toolFinished) end
  -- The conversation was restored, maybe from another window or the CLI (its files too): the
  -- unmodified buffers whose files changed show them now, as after a restore made here.
  if event.rewound then buffers.reload_changed(self.workspace_root) end
  -- Files restored (or a restore undone) in another window: the buffers show the files, and the
  -- markers what ListCheckpoints says (which restore Undo is offered for, too).
  if event.filesRestored then
    buffers.reload_changed(self.workspace_root)
    self:refresh_checkpoints()
  end
  for _, fn in ipairs(self.listeners or {}) do
    fn(event)
  end
end

--- After a tool call: the buffers of the files it changed show the new text (a command may
--- change any file), and an edit refused because its file is unsaved here is explained.
function H.after_tool(self, finished)
  local root = self.workspace_root
  local paths = {}
  for _, edit in ipairs(finished.edits or {}) do
    table.insert(paths, edit.path)
  end
  if #paths > 0 then buffers.reload(root, paths, "Dline") end
  local item = require("dline.chat_state").tool_item(self.chat.state, finished.toolCallId)
  local existed = self.command_files and self.command_files[finished.toolCallId]
  if self.command_files then self.command_files[finished.toolCallId] = nil end
  if item and item.kind == "command" then buffers.reload_changed(root, existed) end
  if finished.status == "TOOL_CALL_STATUS_FAILED" and item then
    local call = require("dline.chat_render").tool_call(item)
    local targets = vim.tbl_map(function(e) return e.path end, call.edits or {})
    local ok, input = pcall(vim.json.decode, call.input or "")
    if #targets == 0 and ok and type(input) == "table" and type(input.path) == "string" then
      targets = { input.path }
    end
    for _, path in ipairs(targets) do
      local buf = vim.fn.bufnr(vim.fn.fnamemodify((root or ".") .. "/" .. path, ":p"))
      if buf ~= -1 and vim.bo[buf].modified then
        dline().notify(
          ("Dline did not edit %s: it has unsaved changes here. Save it, then tell Dline to go on."):format(path),
          vim.log.levels.WARN
        )
      end
    end
  end
end

function H.on_ask(self, a)
  self.pending_ask = a
  if not dline().config().prompt_on_ask then return end
  -- After the batch of events in hand: the question may already be answered in it.
  vim.schedule(function()
    if self.pending_ask ~= a then return end
    H.show_preview(self)
    -- The preview and the question in the chat are on screen before a picker (the built-in
    -- one blocks until answered) covers them.
    vim.cmd("redraw")
    ask.prompt(a, function(approve, text)
      if self.pending_ask == a then
        self:respond(approve, text)
      else
        dline().notify("that question is no longer pending", vim.log.levels.WARN)
      end
    end)
  end)
end

--- Shows the change the pending approval is about (diff tabs), once.
function H.show_preview(self)
  local a = self.pending_ask
  if not a or not dline().config().preview or (self.preview and self.preview.ask == a) then return end
  H.close_preview(self)
  local preview = require("dline.preview").open(
    a,
    self.workspace_root,
    function(action) self:answer(action) end,
    { max_tabs = dline().config().compare.max_tabs }
  )
  if preview then
    preview.ask = a
    self.preview = preview
  end
end

function H.close_preview(self)
  if self.preview then
    local preview = self.preview
    self.preview = nil
    preview.close()
  end
end

--- Calls `fn(event)` for every event of this task from now on (tests, integrations).
function H.Controller.on_event(self, fn)
  self.listeners = self.listeners or {}
  table.insert(self.listeners, fn)
end

--- "task X is interrupted: <why>[; <more>]. R … continues it", `why` the core's reason unless
--- it is empty or its sidecar stopping ("its sidecar stopped before it finished").
function H.interrupted_because(self, reason, more)
  local why = reason or ""
  if why == "" or why:find("sidecar", 1, true) then why = "its sidecar stopped before it finished" end
  return ("task %s is interrupted: %s%s. R in its chat (or :Dline resume) continues it"):format(
    ids.short(self.task_id),
    visible(why),
    more and ("; " .. more) or ""
  )
end

--- Answers the pending ask.
function H.Controller.respond(self, approve, text, cb)
  local a = self.pending_ask
  if not a then
    if self.status == "TASK_STATUS_INTERRUPTED" then
      dline().notify(
        H.interrupted_because(self, self.chat.state.status_reason, "nothing waits for an answer"),
        vim.log.levels.WARN
      )
    else
      dline().notify("task " .. ids.short(self.task_id) .. " is not waiting for an answer", vim.log.levels.WARN)
    end
    return cb and cb("not waiting")
  end
  local session = dline().session()
  session:call(
    "TaskService",
    "Respond",
    { taskId = self.task_id, askId = a.askId, approve = approve, text = text or "" },
    function(err)
      if err and err.code == "failed_precondition" then
        -- The task may be open in another window too, whose answer came first (the built-in
        -- picker blocks, so its events had not been read yet): say so instead of an error.
        return session:call("TaskService", "GetTask", { taskId = self.task_id }, function(view_err, view)
          local pending = not view_err and view and view.pendingAsk
          local status = view and view.task and view.task.status
          -- Completed: the other window's answer came first and the task went on to its end.
          local stopped = status
            and status ~= "TASK_STATUS_RUNNING"
            and status ~= "TASK_STATUS_WAITING"
            and status ~= "TASK_STATUS_COMPLETED"
          if not view_err and stopped then
            -- Nobody answered it: the task stopped meanwhile (a restore from another window, say).
            local why = self.chat.state.status_reason
            dline().notify(
              ("task %s: that question is no longer pending: the task stopped%s"):format(
                ids.short(self.task_id),
                (why or "") ~= "" and (" (" .. visible(why) .. ")") or ""
              ),
              vim.log.levels.WARN
            )
          elseif not view_err and (not pending or pending.askId ~= a.askId) then
            dline().notify(
              ("task %s: that question was answered in another window"):format(ids.short(self.task_id)),
              vim.log.levels.WARN
            )
          else
            dline().notify_error("answer", err)
          end
          if cb then cb(err) end
        end)
      end
      if err then dline().notify_error("answer", err) end
      if cb then cb(err) end
    end
  )
end

--- An answer from a keymap (chat or preview): "approve", "deny", or with feedback.
function H.Controller.answer(self, action)
  local a = self.pending_ask
  if a and a.kind == "ASK_KIND_FOLLOWUP" then
    if action == "approve" then
      return ask.prompt(a, function(_, text)
        if self.pending_ask == a then self:respond(true, text) end
      end)
    end
    return dline().notify("answer the question in the input area (or ga to pick an option)", vim.log.levels.WARN)
  end
  if action == "approve" or action == "deny" or not a then return self:respond(action == "approve", "") end
  ask.input("Feedback: ", function(text)
    if self.pending_ask == a then self:respond(action == "approve_feedback", text) end
  end)
end

--- The task has no folder (imported without one) or its folder is not on this machine: offer
--- the editor's working directory or another folder, then `retry(folder)`; `cb(err)` when the
--- person declines.
function H.offer_workspace(self, err, retry, cb)
  local cwd = (vim.uv or vim.loop).cwd()
  local here, other = "Continue in " .. cwd, "Continue in another folder…"
  local prompt = ("Task %s has no folder on this machine to run its tools in"):format(ids.short(self.task_id))
  require("dline.ui").select({ here, other, "Not now" }, { prompt = prompt, kind = "dline.workspace" }, function(choice)
    if choice == here then return retry(cwd) end
    if choice ~= other then
      dline().notify_error("continue", err)
      return cb and cb(err)
    end
    require("dline.ui").input({ prompt = "Folder: ", default = cwd, completion = "dir" }, function(answer)
      local folder = answer and vim.fn.fnamemodify(vim.fn.expand(answer), ":p"):gsub("(.)/$", "%1")
      if not folder or folder == "" or vim.fn.isdirectory(folder) ~= 1 then
        dline().notify(("not a folder: %s"):format(answer or ""), vim.log.levels.ERROR)
        return cb and cb(err)
      end
      retry(folder)
    end)
  end)
end

--- Sends a message: the answer to a pending question, or the next user turn. `#buffer` and
--- `#file:path` are expanded. A task without a folder here asks for one first.
function H.Controller.send(self, text, cb, workspace_root)
  local expanded, problem = context.expand(text)
  if not expanded then
    dline().notify(problem, vim.log.levels.ERROR)
    return cb and cb(problem)
  end
  local editor = buffers.editor_state(workspace_root or self.workspace_root)
  local request = { taskId = self.task_id, text = expanded, editor = editor, workspaceRoot = workspace_root }
  -- While the model works (no question waits), the core queues the message until the turn
  -- ends: it shows as queued at once, not only then.
  local queued = self.status == "TASK_STATUS_RUNNING" and not self.pending_ask
  if queued then self.chat:queue(text) end
  dline().session():call("TaskService", "SendMessage", request, function(err)
    if err and queued then self.chat:unqueue(text) end
    if err and not workspace_root and require("dline.connect").reason(err) == "ERROR_REASON_NO_WORKSPACE" then
      return H.offer_workspace(self, err, function(folder) self:send(text, cb, folder) end, cb)
    end
    if err then
      dline().notify_error("send", err)
    else
      if workspace_root then self.workspace_root = workspace_root end
      self.reported = table.concat(editor.unsavedFiles, "\n")
    end
    if cb then cb(err) end
  end)
end

function H.Controller.cancel(self, cb)
  dline().session():call("TaskService", "Cancel", { taskId = self.task_id }, function(err)
    if err then dline().notify_error("cancel", err) end
    if cb then cb(err) end
  end)
end

--- Continues an interrupted (or cancelled, failed) task. A completed task is continued with a
--- new message instead: resuming it would send the model a request with nothing new.
function H.Controller.resume(self, cb, workspace_root)
  if self.status == "TASK_STATUS_COMPLETED" then
    dline().notify(
      ("task %s is completed: send a message to continue it (the chat input, or :Dline send)"):format(
        ids.short(self.task_id)
      ),
      vim.log.levels.WARN
    )
    return cb and cb("completed")
  end
  dline()
    .session()
    :call("TaskService", "Resume", { taskId = self.task_id, workspaceRoot = workspace_root }, function(err)
      if err and not workspace_root and require("dline.connect").reason(err) == "ERROR_REASON_NO_WORKSPACE" then
        return H.offer_workspace(self, err, function(folder) self:resume(cb, folder) end, cb)
      end
      if err then dline().notify_error("resume", err) end
      if not err then
        if workspace_root then self.workspace_root = workspace_root end
        self.reported = nil
        H.report_editor(self)
      end
      if cb then cb(err) end
    end)
end

function H.Controller.close(self)
  H.close_preview(self)
  if self.watch then self.watch.close() end
  H.controllers[self.task_id] = nil
  if H.last == self.task_id then H.last = nil end
  if next(H.controllers) == nil and H.history_watch then
    H.history_watch.close()
    H.history_watch = nil
  end
end

--- Resumes task `task_id` (a full id or its short form): opens its chat and continues it.
function M.resume(task_id, cb)
  local function go(id)
    -- Once loaded, the controller knows the status: a completed task is not resumed.
    return M.open(id, {
      on_loaded = function(controller) controller:resume(cb) end,
    })
  end
  if H.controllers[task_id] or task_id:find("-", 1, true) then return go(task_id) end
  require("dline.history").list({}, function(err, tasks)
    if err then return dline().notify_error("resume", err) end
    for _, t in ipairs(tasks) do
      if ids.matches(t.id, task_id) then return go(t.id) end
    end
    dline().notify("no task " .. task_id, vim.log.levels.ERROR)
    if cb then cb("not found") end
  end)
end

--- `:Dline resume` with no chat open: the interrupted tasks of this folder (Neovim or the
--- sidecar stopped under them), newest first; the only one is resumed, several are offered.
function M.resume_interrupted_here(cb)
  local root = (vim.uv or vim.loop).cwd()
  local history = require("dline.history")
  history.list({ workspace_root = root }, function(err, tasks)
    if err then return dline().notify_error("resume", err) end
    local interrupted = vim.tbl_filter(function(t) return t.status == "TASK_STATUS_INTERRUPTED" end, tasks)
    if #interrupted == 0 then
      dline().notify(
        "no interrupted task in this folder: start one with :Dline new {prompt} or pick one with :Dline history",
        vim.log.levels.WARN
      )
      return cb and cb("none")
    end
    if #interrupted == 1 then return M.resume(interrupted[1].id, cb) end
    require("dline.ui").select(
      interrupted,
      { prompt = "Resume which interrupted task?", kind = "dline.history", format_item = history.describe },
      function(task)
        if task then return M.resume(task.id, cb) end
        if cb then cb("cancelled") end
      end
    )
  end)
end

--- A keymap of a chat buffer `buf`: see dline.sidebar.KEYS.
function M.chat_action(action, buf)
  local sidebar = require("dline.sidebar")
  local id = vim.b[buf].dline_task_id
  local controller = id and H.controllers[id]
  if action == "close" then return sidebar.close() end
  if action == "help" then
    local lines = {}
    for _, key in ipairs(sidebar.KEYS) do
      table.insert(lines, ("%-6s %s"):format(key[1], key[3]))
    end
    return vim.notify(table.concat(lines, "\n"), vim.log.levels.INFO)
  end
  if action == "next_ask" or action == "prev_ask" then return sidebar.jump_ask(action == "next_ask") end
  if action == "input" then
    local _, input_win = sidebar.windows()
    if not input_win and controller then
      controller.chat:open(dline().config().chat)
      _, input_win = sidebar.windows()
    end
    if input_win then
      vim.api.nvim_set_current_win(input_win)
      vim.cmd("startinsert")
    end
    return
  end
  if not controller then return dline().notify("this chat's task is not open", vim.log.levels.WARN) end
  if action == "preview" then
    if not controller.pending_ask then return dline().notify("nothing waits for approval", vim.log.levels.WARN) end
    if controller.preview then controller.preview.close() end
    controller.preview = nil
    return H.show_preview(controller)
  elseif action == "resume" then
    return controller:resume()
  elseif action == "cancel" then
    return controller:cancel()
  elseif action == "compare" or action == "restore" then
    local cp = require("dline.chat_render").checkpoint_on_line(vim.api.nvim_get_current_line())
    local cps = require("dline.checkpoints")
    return cps.pick(
      controller.task_id,
      cp,
      action == "compare" and "Compare with checkpoint" or "Restore checkpoint",
      function(chosen)
        if action == "compare" then return cps.compare(controller.task_id, chosen, controller.workspace_root) end
        cps.restore(controller.task_id, chosen, controller.workspace_root)
      end
    )
  end
  controller:answer(action)
end

return M
