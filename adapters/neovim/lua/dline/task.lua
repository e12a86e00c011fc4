--- *dline.task* Runs tasks from the editor: new task, open a task's chat, answer its
--- questions, send follow-ups, cancel, resume.
---
--- What it does: one controller per open task, which loads the task (GetTask), renders it
--- in a dline.chat, follows its events (Subscribe, resumed with after_seq across sidecar
--- restarts) and sends the user's words and decisions back (SendMessage, Respond).
--- What it does not do: run the agent (the sidecar does) or write Dline's files.

local chat_mod = require("dline.chat")
local ask = require("dline.ask")

local M = {}
local H = {}

H.controllers = {} -- task id -> controller
H.last = nil -- the task id used last
H.history_watch = nil -- WatchHistory, while chats are open: closes chats of deleted tasks

local function dline()
  return require("dline")
end

---@class dline.TaskController
---@field task_id string
---@field chat dline.Chat
---@field watch dline.Watch|nil
---@field status string|nil
---@field pending_ask table|nil
---@field workspace_root string|nil
---@field events integer  events received

--- The controller of the task shown in the current buffer, else of the last task used.
---@return dline.TaskController|nil
function M.current()
  local id = vim.b.dline_task_id
  if id and H.controllers[id] then return H.controllers[id] end
  return H.last and H.controllers[H.last] or nil
end

function M.get(task_id)
  return H.controllers[task_id]
end

--- Starts a task with `prompt` in the editor's working directory and opens its chat.
function M.new_task(prompt, cb)
  local session = dline().session()
  local config = dline().config()
  session:call("TaskService", "NewTask", {
    workspaceRoot = (vim.uv or vim.loop).cwd(),
    text = prompt,
    profileId = config.profile_id,
  }, function(err, res)
    if err then
      dline().notify_error("new task", err)
      return cb and cb(err)
    end
    local controller = M.open(res.taskId, { replay = true })
    if cb then cb(nil, controller) end
  end)
end

--- Opens the chat of task `task_id` and follows its events. `opts.replay`: render from the
--- events (a task just created); otherwise from GetTask, then events after its last seq.
---@return dline.TaskController
function M.open(task_id, opts)
  opts = opts or {}
  H.last = task_id
  local existing = H.controllers[task_id]
  if existing and vim.api.nvim_buf_is_valid(existing.chat.buf) then
    existing.chat:open(dline().config().chat)
    return existing
  end
  local controller = setmetatable({ task_id = task_id, events = 0 }, { __index = H.Controller })
  controller.chat = chat_mod.new(task_id)
  controller.chat.on_send = function(text)
    controller:send(text)
  end
  H.controllers[task_id] = controller
  H.watch_history()
  controller.chat:open(dline().config().chat)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = controller.chat.buf,
    once = true,
    callback = function()
      controller:close()
    end,
  })
  if opts.replay then
    controller:follow("0")
  else
    controller:reload()
  end
  return controller
end

--- Follows the history index (this and other sidecars) to close the chats of tasks that
--- were deleted, here or by another client.
function H.watch_history()
  if H.history_watch then return end
  local function gone(task_id)
    local controller = H.controllers[task_id]
    if not controller then return end
    dline().notify("task " .. task_id:sub(1, 8) .. " no longer exists")
    controller.chat:close()
  end
  H.history_watch = dline().session():watch({
    service = "HistoryService",
    method = "WatchHistory",
    request = function(after_seq)
      return { afterSeq = after_seq }
    end,
    seq = function(msg)
      return msg.seq
    end,
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
    on_error = function()
      H.history_watch = nil
    end,
  })
end

H.Controller = {}

--- Loads the task (GetTask), renders its messages and follows events after its last seq.
function H.Controller.reload(self, cb)
  dline().session():call("TaskService", "GetTask", { taskId = self.task_id }, function(err, res)
    if err then
      dline().notify_error("open task " .. self.task_id, err)
      return cb and cb(err)
    end
    local task = res.task or {}
    self.workspace_root = task.workspaceRoot
    self.chat.title = task.title or ""
    self.chat.status = task.status
    self.status = task.status
    self.chat:set_messages(res.messages or {})
    -- Follow from the last event this chat saw if that is earlier than GetTask's last seq:
    -- events that happened while GetTask was read are then replayed (the chat ignores what
    -- the stored messages already show) instead of missed; statuses catch up the same way.
    local from = res.lastSeq or "0"
    if self.watch then
      if not self.watch.closed and tonumber(self.watch.last_seq) < tonumber(from) then from = self.watch.last_seq end
      self.watch.close()
    end
    self:follow(from)
    if res.pendingAsk and res.pendingAsk.askId then H.on_ask(self, res.pendingAsk) end
    if cb then cb(nil) end
  end)
end

function H.Controller.follow(self, after_seq)
  self.watch = dline().session():watch({
    service = "TaskService",
    method = "Subscribe",
    after_seq = after_seq,
    request = function(seq)
      return { taskId = self.task_id, afterSeq = seq }
    end,
    seq = function(msg)
      return msg.event and msg.event.seq
    end,
    on_message = function(msg)
      H.on_event(self, msg.event or {})
    end,
    on_error = function(err)
      if err.code == "not_found" then
        -- Deleted (here, or by another client): its chat has nothing left to show.
        if H.controllers[self.task_id] == self then dline().notify("task " .. self.task_id:sub(1, 8) .. " no longer exists") end
        return self.chat:close()
      end
      dline().notify_error("task " .. self.task_id .. " events", err)
    end,
  })
end

function H.on_event(self, event)
  self.events = self.events + 1
  self.chat:apply(event)
  if event.statusChanged then self.status = event.statusChanged.status end
  if event.ask then H.on_ask(self, event.ask) end
  if event.askResolved then self.pending_ask = nil end
  for _, fn in ipairs(self.listeners or {}) do
    fn(event)
  end
end

function H.on_ask(self, a)
  self.pending_ask = a
  if not dline().config().prompt_on_ask then return end
  -- After the batch of events in hand: the question may already be answered in it.
  vim.schedule(function()
    if self.pending_ask ~= a then return end
    ask.prompt(a, function(approve, text)
      if self.pending_ask == a then self:respond(approve, text) end
    end)
  end)
end

--- Calls `fn(event)` for every event of this task from now on (tests, integrations).
function H.Controller.on_event(self, fn)
  self.listeners = self.listeners or {}
  table.insert(self.listeners, fn)
end

--- Answers the pending ask.
function H.Controller.respond(self, approve, text, cb)
  local a = self.pending_ask
  if not a then
    dline().notify("task " .. self.task_id:sub(1, 8) .. " is not waiting for an answer", vim.log.levels.WARN)
    return cb and cb("not waiting")
  end
  dline().session():call("TaskService", "Respond", { taskId = self.task_id, askId = a.askId, approve = approve, text = text or "" }, function(err)
    if err then dline().notify_error("answer", err) end
    if cb then cb(err) end
  end)
end

--- Sends a message: the answer to a pending question, or the next user turn.
function H.Controller.send(self, text, cb)
  dline().session():call("TaskService", "SendMessage", { taskId = self.task_id, text = text }, function(err)
    if err then dline().notify_error("send", err) end
    if cb then cb(err) end
  end)
end

function H.Controller.cancel(self, cb)
  dline().session():call("TaskService", "Cancel", { taskId = self.task_id }, function(err)
    if err then dline().notify_error("cancel", err) end
    if cb then cb(err) end
  end)
end

function H.Controller.resume(self, cb)
  dline().session():call("TaskService", "Resume", { taskId = self.task_id }, function(err)
    if err then dline().notify_error("resume", err) end
    if cb then cb(err) end
  end)
end

function H.Controller.close(self)
  if self.watch then self.watch.close() end
  H.controllers[self.task_id] = nil
  if H.last == self.task_id then H.last = nil end
  if next(H.controllers) == nil and H.history_watch then
    H.history_watch.close()
    H.history_watch = nil
  end
end

--- Resumes task `task_id`: opens its chat and asks the sidecar to continue it.
function M.resume(task_id, cb)
  local controller = M.open(task_id)
  controller:resume(cb)
  return controller
end

return M
