--- *dline.history* The task history: pick a task, then open, resume, favourite or delete it.
---
--- What it does: lists tasks (HistoryService.ListTasks, newest first, every workspace) in
--- vim.ui.select, then offers the actions for the chosen task.
--- What it does not do: keep its own index (the sidecar's taskHistory.db is the only one).

local M = {}
local H = {}

local function dline() return require("dline") end

M.ACTIONS = { "Open", "Resume", "Toggle favourite", "Delete" }

--- Statuses a task can be resumed from; a completed one is continued with a new message.
M.RESUMABLE = { TASK_STATUS_INTERRUPTED = true, TASK_STATUS_CANCELLED = true, TASK_STATUS_FAILED = true }

--- The actions offered for `task`: no Resume for a completed (or running) task.
function M.actions(task)
  return vim.tbl_filter(function(a) return a ~= "Resume" or M.RESUMABLE[task.status] == true end, M.ACTIONS)
end

--- One line naming `task` in a picker: its id, title, status, date and folder.
function M.describe(task) return H.describe(task) end

function H.describe(task)
  local status = ((task.status or ""):gsub("^TASK_STATUS_", "")):lower()
  local when = task.updatedAt and os.date("%Y-%m-%d %H:%M", math.floor(tonumber(task.updatedAt) / 1000)) or ""
  local id = require("dline.ids").short(task.id)
  return ("%s%s  %s  [%s]  %s  %s"):format(
    task.favorite and "★ " or "",
    id,
    (task.title or "") ~= "" and task.title or "(untitled task)",
    status,
    when,
    task.workspaceRoot or ""
  )
end

--- Lists tasks: `cb(err, tasks)`. `opts`: query, favorites_only, workspace_root.
function M.list(opts, cb)
  opts = opts or {}
  dline().session():call("HistoryService", "ListTasks", {
    query = opts.query or "",
    favoritesOnly = opts.favorites_only or false,
    workspaceRoot = opts.workspace_root or "",
    pageSize = opts.page_size or 200,
    sort = "TASK_SORT_NEWEST",
  }, function(err, res)
    if err then return cb(err) end
    cb(nil, res.tasks or {})
  end)
end

function M.set_favorite(task, favorite, cb)
  dline().session():call("HistoryService", "SetFavorite", { taskId = task.id, favorite = favorite }, function(err)
    if err then dline().notify_error("favourite", err) end
    if cb then cb(err) end
  end)
end

function M.delete(task_ids, cb)
  for _, id in ipairs(task_ids) do
    -- Stop following it first: its stream ends with not_found once it is gone.
    local controller = require("dline.task").get(id)
    if controller and controller.watch then controller.watch.close() end
  end
  dline()
    .session()
    :call("TaskService", "DeleteTasks", { taskIds = task_ids, mode = "DELETE_MODE_SELECTED" }, function(err, res)
      if err then
        dline().notify_error("delete", err)
        return cb and cb(err)
      end
      for _, id in ipairs(res.deletedTaskIds or {}) do
        local controller = require("dline.task").get(id)
        if controller then controller.chat:close() end
      end
      dline().notify(("deleted %d task(s)"):format(#(res.deletedTaskIds or {})))
      if cb then cb(nil, res.deletedTaskIds or {}) end
    end)
end

--- Runs one action on `task`.
function M.act(task, action, cb)
  local task_mod = require("dline.task")
  if action == "Open" then
    task_mod.open(task.id)
    if cb then cb(nil) end
  elseif action == "Resume" then
    task_mod.resume(task.id, cb)
  elseif action == "Toggle favourite" then
    M.set_favorite(task, not task.favorite, cb)
  elseif action == "Delete" then
    require("dline.ui").select(
      { "Delete", "Cancel" },
      { prompt = "Delete task " .. ((task.title or "") ~= "" and task.title or task.id) .. "?", kind = "dline.confirm" },
      function(choice)
        if choice == "Delete" then
          M.delete({ task.id }, cb)
        elseif cb then
          cb("cancelled")
        end
      end
    )
  end
end

--- :Dline history [query]
function M.open(query, cb)
  M.list({ query = query }, function(err, tasks)
    if err then return dline().notify_error("history", err) end
    if #tasks == 0 then
      return dline().notify("no tasks" .. (query and query ~= "" and (" matching " .. query) or ""))
    end
    require("dline.ui").select(
      tasks,
      { prompt = "Dline history", format_item = H.describe, kind = "dline.history" },
      function(task)
        if not task then return end
        require("dline.ui").select(
          M.actions(task),
          { prompt = H.describe(task), kind = "dline.history_action" },
          function(action)
            if action then M.act(task, action, cb) end
          end
        )
      end
    )
  end)
end

return M
