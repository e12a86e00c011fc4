--- *dline.checkpoints* A task's checkpoints: list, compare in diff mode, restore.
---
--- What it does: lists checkpoints (ListCheckpoints), opens "Changes since snapshot"
--- (Compare: the checkpoint's content against the current file, one diff tab per changed
--- file, every file in the quickfix list), and restores with the menu of the checkpoints
--- docs/checkpoints.md (vim.ui.select), then reloads buffers whose files the restore changed.
--- What it does not do: touch the shadow repository (the sidecar owns it).

local M = {}
local H = {}

local function dline() return require("dline") end

--- A checkpoint call of task `task_id`: said once while it waits for another Dline window.
local function checkpoint_call(task_id, method, request, cb)
  -- A restore made here says itself what it did, the task's stop included: the task's own
  -- "interrupted" notice is for restores made elsewhere (task.lua).
  if (method == "Restore" or method == "EditMessage") and not request.dryRun then
    local controller = require("dline.task").get(task_id)
    if controller then controller.own_restore_at = vim.loop.now() end
  end
  require("dline.checkpoint_wait").call(task_id, method, request, cb)
end

--- The restore menu: option, menu text, mode (docs/checkpoints.md, "Restoring a checkpoint").
M.RESTORE_OPTIONS = {
  {
    label = "Restore Files & Task",
    description = "Revert files and clear messages after this point",
    mode = "RESTORE_MODE_FILES_AND_TASK",
  },
  { label = "Restore Files Only", description = "Revert files to this checkpoint", mode = "RESTORE_MODE_FILES" },
  { label = "Restore Task Only", description = "Clear messages after this point", mode = "RESTORE_MODE_TASK" },
}

--- The options offered for `checkpoint`: only "Task Only" without a file snapshot or for a
--- compaction checkpoint; only "Files Only" for a restore's undo point (it follows no message:
--- the core refuses the conversation); no "Files Only" once its files were restored.
function M.restore_options(checkpoint)
  if checkpoint.hasFiles == false or checkpoint.kind == "CHECKPOINT_KIND_COMPACTION" then
    return { M.RESTORE_OPTIONS[3] }
  end
  if checkpoint.kind == "CHECKPOINT_KIND_BEFORE_RESTORE" then
    return checkpoint.restored and {} or { M.RESTORE_OPTIONS[2] }
  end
  if checkpoint.restored then return { M.RESTORE_OPTIONS[1], M.RESTORE_OPTIONS[3] } end
  return vim.deepcopy(M.RESTORE_OPTIONS)
end

function H.kind_name(kind) return (((kind or ""):gsub("^CHECKPOINT_KIND_", "")):lower():gsub("_", " ")) end

--- A message's text as a short quoted excerpt on one line.
function H.excerpt(text, max) return '"' .. H.cut(text, max or 40) .. '"' end

--- `text` on one line (blanks folded, control characters shown), at most `max` characters.
function H.cut(text, max)
  local line = vim.trim(((text or ""):gsub("%s+", " ")))
  if vim.fn.strchars(line) > max then line = vim.fn.strcharpart(line, 0, max - 1) .. "…" end
  return require("dline.chat_render").one_line(line)
end

--- What the checkpoint follows, in words: "after your message \"…\"", "after write_to_file
--- a.js", "after $ npm test", "after the completion \"…\"" (nil when the message is unknown).
function H.anchor(cp, messages)
  if cp.kind == "CHECKPOINT_KIND_BASELINE" then return "before the task's first change" end
  -- An undo point holds the files as they were before a restore: it follows no step of the
  -- task's (its message is the one of the checkpoint restored to, the baseline's too).
  if cp.kind == "CHECKPOINT_KIND_BEFORE_RESTORE" then return nil end
  local msg = (cp.messageId or "") ~= "" and messages and messages[cp.messageId]
  if not msg then return nil end
  local kind, text = msg.kind or "text", msg.text or ""
  if kind == "command" then
    local call = msg.toolCall or {}
    local command = call.command and call.command.command or text
    return "after $ " .. H.cut(command, 40)
  elseif kind == "tool" then
    return "after " .. H.cut(text ~= "" and text or msg.tool or "a tool step", 50)
  elseif kind == "completion" then
    if cp.kind == "CHECKPOINT_KIND_COMPLETION" then return H.excerpt(text) end
    return "after the completion " .. H.excerpt(text)
  elseif kind == "followup" then
    return "after the question " .. H.excerpt(text)
  elseif kind == "compaction" then
    return "after the conversation was summarized"
  elseif msg.role == "MESSAGE_ROLE_USER" then
    return "after your message " .. H.excerpt(text)
  elseif text ~= "" then
    return "after Dline's answer " .. H.excerpt(text)
  end
  return "after a " .. kind .. " step"
end

--- The files the task edited there: "1 file edited: a.js", "3 files edited: a.js, b.js, …".
function H.edited(cp)
  local paths = cp.editedPaths or {}
  if #paths == 0 then return nil end
  local names = {}
  for i = 1, math.min(#paths, 2) do
    table.insert(names, (require("dline.visible")(paths[i]):gsub("\n", "\\n")))
  end
  return ("%d file%s %s: %s%s"):format(
    #paths,
    #paths == 1 and "" or "s",
    cp.kind == "CHECKPOINT_KIND_BEFORE_RESTORE" and "the restore changed" or "edited",
    table.concat(names, ", "),
    #paths > 2 and ", …" or ""
  )
end

--- When: the time of day for today's checkpoints, else the date too.
function H.when(cp)
  local seconds = cp.createdAt and math.floor((tonumber(cp.createdAt) or 0) / 1000)
  if not seconds or seconds == 0 then return "" end
  if os.date("%Y-%m-%d", seconds) == os.date("%Y-%m-%d") then return os.date("%H:%M:%S", seconds) end
  return os.date("%Y-%m-%d %H:%M", seconds)
end

--- A picker entry: "082bb435  15:43:00  turn after write_to_file hello.js · 1 file edited:
--- hello.js (restored)". `messages`: the task's messages by id (for what it follows).
function H.describe(cp, messages)
  local flags = {}
  if cp.restored then table.insert(flags, "restored") end
  if cp.undoAvailable then table.insert(flags, ":Dline undo restores it") end
  if cp.hasFiles == false then table.insert(flags, "no files") end
  local what = { H.kind_name(cp.kind) }
  local anchor = H.anchor(cp, messages)
  if anchor then what[1] = what[1] .. " " .. anchor end
  table.insert(what, H.edited(cp))
  return ("%s  %s  %s%s"):format(
    cp.id:sub(1, 8),
    H.when(cp),
    table.concat(what, " · "),
    #flags > 0 and (" (" .. table.concat(flags, ", ") .. ")") or ""
  )
end
M.describe = H.describe

--- Lists the checkpoints of `task_id`, newest first: `cb(err, checkpoints)`.
function M.list(task_id, cb)
  checkpoint_call(task_id, "ListCheckpoints", { taskId = task_id }, function(err, res)
    if err then return cb(err) end
    local list = res.checkpoints or {}
    table.sort(list, function(a, b) return tonumber(a.createdAt or "0") > tonumber(b.createdAt or "0") end)
    cb(nil, list)
  end)
end

--- Picks a checkpoint of `task_id` with vim.ui.select (or takes `checkpoint_id`).
function M.pick(task_id, checkpoint_id, prompt, cb)
  M.list(task_id, function(err, list)
    if err then return dline().notify_error("checkpoints", err) end
    if #list == 0 then
      return dline().notify(
        "task " .. require("dline.ids").short(task_id) .. " has no checkpoints yet",
        vim.log.levels.WARN
      )
    end
    if checkpoint_id and checkpoint_id ~= "" then
      for _, cp in ipairs(list) do
        if cp.id == checkpoint_id or cp.id:sub(1, #checkpoint_id) == checkpoint_id then return cb(cp) end
      end
      return dline().notify(
        "no checkpoint " .. checkpoint_id .. " in task " .. require("dline.ids").short(task_id),
        vim.log.levels.ERROR
      )
    end
    -- What each checkpoint follows comes from the task's messages (a checkpoint names only its
    -- message's id): without them, the entries still show kind, time and files.
    dline().session():call("TaskService", "GetTask", { taskId = task_id }, function(task_err, task)
      local messages = {}
      for _, m in ipairs((not task_err and task and task.messages) or {}) do
        messages[m.id] = m
      end
      require("dline.ui").select(list, {
        prompt = prompt,
        format_item = function(cp) return H.describe(cp, messages) end,
        kind = "dline.checkpoint",
      }, function(cp)
        if cp then cb(cp) end
      end)
    end)
  end)
end

-- Compare -------------------------------------------------------------------------------

H.compare_tabs = {} -- task id -> { tab, path, buf (the file's buffer, when the tab loaded it) }

--- Closes the compare tabs opened for `task_id` (after a restore they show what is no longer
--- so), and wipes a file buffer one of them loaded whose file is gone (`:w` would make it
--- again, empty). Returns how many tabs it closed, and how many stayed open: without
--- 'hidden', a tab whose window shows a buffer with unsaved changes (yours, typed in the
--- compare tab) cannot close (E37), and your text stays on screen.
function M.close_compare(task_id)
  local closed, stayed = 0, 0
  for _, opened in ipairs(H.compare_tabs[task_id] or {}) do
    if vim.api.nvim_tabpage_is_valid(opened.tab) and #vim.api.nvim_list_tabpages() > 1 then
      if pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(opened.tab)) then
        closed = closed + 1
      else
        stayed = stayed + 1
      end
    end
    local buf = opened.buf
    if
      buf
      and vim.api.nvim_buf_is_valid(buf)
      and not vim.bo[buf].modified
      and #vim.fn.win_findbuf(buf) == 0
      and not (vim.uv or vim.loop).fs_stat(opened.path)
    then
      vim.api.nvim_buf_delete(buf, { force = true })
    end
  end
  H.compare_tabs[task_id] = nil
  return closed, stayed
end

function H.absolute(root, path)
  if path:sub(1, 1) == "/" then return path end
  return (root or (vim.uv or vim.loop).cwd()) .. "/" .. path
end

function H.scratch(name, text, crlf)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  -- An empty text leaves the buffer with no lines (see dline.diff_sides).
  require("dline.diff_sides").set_text(buf, text, crlf)
  vim.bo[buf].modifiable = false
  return buf
end

--- Opens the changes since checkpoint `cp` of task `task_id`: a tab per changed file with the
--- checkpoint's content (left) against the current file (right) in diff mode, and the
--- quickfix list of all changed files titled "Changes since snapshot".
function M.compare(task_id, cp, workspace_root, cb)
  checkpoint_call(task_id, "Compare", { taskId = task_id, checkpointId = cp.id }, function(err, res)
    if err then
      dline().notify_error("compare", err)
      return cb and cb(err)
    end
    local files = res.files or {}
    if #files == 0 then
      dline().notify("no changes since checkpoint " .. cp.id:sub(1, 8))
      return cb and cb(nil, { tabs = 0, files = files })
    end
    local qf = {}
    local tabs = 0
    local max_tabs = dline().config().compare.max_tabs
    -- What a files restore to this checkpoint would change (the core's answer): the person's own
    -- later changes are not among them, and read as such, not as the task's.
    local restored = {}
    for _, p in ipairs(res.restorePaths or {}) do
      restored[p] = true
    end
    local left_alone = 0
    for _, file in ipairs(files) do
      local path = H.absolute(workspace_root, file.path)
      local status = ((file.status or ""):gsub("^FILE_STATUS_", "")):lower()
      local note = status
      if file.binary then note = note .. ", binary" end
      if file.tooLarge then note = note .. ", too large to show" end
      -- Left out by the checkpoints (an ignored .env, build/): its earlier content is unknown,
      -- so no diff (an empty checkpoint side would read as an empty file), only the line.
      if file.notTracked then note = note .. ", not tracked by checkpoints: not compared or restored" end
      local mode_changed = (file.modeBefore or "") ~= ""
      if mode_changed then note = ("%s, permissions %s -> %s"):format(note, file.modeBefore, file.modeAfter) end
      if not file.notTracked and not restored[file.path] then
        note = note .. ", a files restore leaves it as it is"
        left_alone = left_alone + 1
      end
      table.insert(qf, { filename = path, lnum = 1, text = note })
      -- Its permissions alone changed: the line says it; a tab would show two equal sides.
      local same_text = mode_changed and (file.before or "") == (file.after or "")
      if not file.binary and not file.tooLarge and not file.notTracked and not same_text and tabs < max_tabs then
        tabs = tabs + 1
        vim.cmd("tabnew")
        local opened = { tab = vim.api.nvim_get_current_tabpage(), path = path }
        local placeholder, before_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
        local sides = require("dline.diff_sides")
        local dos
        if file.status == "FILE_STATUS_DELETED" then
          vim.cmd("rightbelow vsplit")
          vim.api.nvim_win_set_buf(0, H.scratch("dline://deleted/" .. file.path, ""))
        else
          local loaded = vim.fn.bufloaded(path) == 1
          vim.cmd("rightbelow vsplit " .. vim.fn.fnameescape(path))
          -- A buffer this tab loaded goes when the tab is closed after a restore deleted its file.
          if not loaded then opened.buf = vim.api.nvim_get_current_buf() end
          dos = vim.bo.fileformat == "dos"
        end
        -- The checkpoint's text as Neovim shows a CRLF file (no ^M on each line) when the file's
        -- buffer is read that way too: only the lines that changed differ.
        local before = H.scratch(
          ("dline://checkpoint/%s/%s"):format(cp.id:sub(1, 8), file.path),
          file.before or "",
          sides.both_crlf(file.before, nil, dos)
        )
        vim.api.nvim_win_set_buf(before_win, before)
        -- The checkpoint side gets the current file's filetype (same highlighting).
        if vim.bo.filetype ~= "" then vim.bo[before].filetype = vim.bo.filetype end
        -- tabnew's empty buffer, shown nowhere now: not left in the buffer list.
        if vim.api.nvim_buf_is_valid(placeholder) and #vim.fn.win_findbuf(placeholder) == 0 then
          pcall(vim.api.nvim_buf_delete, placeholder, { force = true })
        end
        vim.api.nvim_win_call(before_win, function() vim.cmd("diffthis") end)
        vim.cmd("diffthis")
        -- A file made since the checkpoint, or deleted: every line added / removed, blank ones
        -- too (Neovim 0.7 diffs no text as one empty line).
        if (file.before or "") == "" then
          sides.mark(before_win, vim.api.nvim_get_current_win(), vim.fn.getfsize(path) ~= 0)
        elseif file.status == "FILE_STATUS_DELETED" then
          sides.mark(vim.api.nvim_get_current_win(), before_win, true)
        end
        vim.t.dline_compare = file.path
        H.compare_tabs[task_id] = H.compare_tabs[task_id] or {}
        table.insert(H.compare_tabs[task_id], opened)
      end
    end
    vim.fn.setqflist({}, " ", { title = "Changes since snapshot", items = qf })
    -- Said once: how many changed, how many a restore leaves, and where the ones without a tab are.
    local parts = { ("%d file(s) changed since checkpoint %s"):format(#files, cp.id:sub(1, 8)) }
    if left_alone > 0 then table.insert(parts, ("%d a files restore leaves as they are"):format(left_alone)) end
    table.insert(
      parts,
      tabs < #files and ("%d in diff tabs, all of them in the quickfix list (:copen)"):format(tabs)
        or ("%d in diff tabs"):format(tabs)
    )
    dline().notify("compare: " .. table.concat(parts, "; "))
    if cb then cb(nil, { tabs = tabs, files = files }) end
  end)
end

-- Restore -------------------------------------------------------------------------------

--- Re-reads loaded buffers of files the restore rewrote, wipes those of files it deleted; a
--- buffer with unsaved changes is kept (marked when its file is gone): returns the warning
--- that says what became of them (nil when nothing needs saying). `why`: what changed the
--- files ("The restore", the default; "The undo").
function M.reload_buffers(root, paths, why)
  local _, _, warning = require("dline.buffers").reload(root, paths, why or "The restore", { quiet = true })
  return warning
end

--- Shows a restore's summary and its warnings as one message: a warning shown on its own
--- would be replaced at once by the summary (it would be only in :messages). With warnings,
--- the whole message is a warning, the summary first.
function H.tell(summary, warnings, level)
  warnings = vim.tbl_filter(function(w) return w and w ~= "" end, warnings or {})
  if #warnings == 0 then return dline().notify(summary) end
  dline().notify(summary .. "\n" .. table.concat(warnings, "\n"), level or vim.log.levels.WARN)
end

local kept_reasons = {
  KEPT_REASON_TOO_LARGE = "too large to snapshot",
  KEPT_REASON_NOT_TRACKED = "not tracked by checkpoints",
  KEPT_REASON_BEYOND_LINK = "a folder on its way is a link now",
}

--- Kept files a restore's notice names; past it, "kept as is: ...and N more".
M.KEPT_SHOWN = 20

--- The files a restore left as they were, a line each: "kept as is: <why>: <path>" (a command
--- may have changed many files the checkpoints do not track: the first KEPT_SHOWN, then a count).
--- `incomplete`: more changed files the checkpoints do not track than `kept` names may exist (the
--- core's look stopped at its limit in a large ignored folder, or could not tell all of a folder's
--- changes). Said only beside named files: a large node_modules stops the look on every restore.
function M.kept_lines(kept, incomplete)
  local lines = {}
  for i, k in ipairs(kept) do
    if i > M.KEPT_SHOWN then
      table.insert(lines, ("kept as is: ...and %d more"):format(#kept - M.KEPT_SHOWN))
      break
    end
    table.insert(
      lines,
      ("kept as is: %s: %s"):format(
        kept_reasons[k.reason] or "not restored",
        (require("dline.visible")(k.path):gsub("\n", "\\n"))
      )
    )
  end
  if incomplete and #kept > 0 then
    table.insert(lines, "kept as is: more files the checkpoints do not track may have changed too")
  end
  return table.concat(lines, "\n")
end

--- Restores checkpoint `cp` after choosing the mode with vim.ui.select.
function M.restore(task_id, cp, workspace_root, cb)
  local options = M.restore_options(cp)
  if #options == 0 then
    dline().notify(
      "checkpoint "
        .. cp.id:sub(1, 8)
        .. ": its files were already restored and no checkpoint was saved since: nothing to restore",
      vim.log.levels.WARN
    )
    return cb and cb("nothing to restore")
  end
  require("dline.ui").select(options, {
    prompt = "Restore checkpoint " .. cp.id:sub(1, 8),
    kind = "dline.restore",
    format_item = function(o) return o.label .. ": " .. o.description end,
  }, function(choice)
    if not choice then return cb and cb("cancelled") end
    checkpoint_call(
      task_id,
      "Restore",
      { taskId = task_id, checkpointId = cp.id, mode = choice.mode },
      function(err, res)
        if err then
          dline().notify_error("restore", err)
          return cb and cb(err)
        end
        H.report_files(choice.label, res, workspace_root, task_id)
        -- The chat shows the checkpoint restored to (a reload reads the markers again too).
        local controller = require("dline.task").get(task_id)
        if controller and res.conversationRestored then
          controller:reload()
        elseif controller then
          controller:refresh_checkpoints()
        end
        if cb then cb(nil, res, choice) end
      end
    )
  end)
end

--- The error of a restore whose file part failed. Files & Task (and Restore All) restore the
--- conversation all the same: said first. The core's text says why ("Restoring files failed: …").
function H.file_error(file_error, conversation_restored)
  local conversation = conversation_restored and "the conversation was restored to the checkpoint, but not the files. "
    or ""
  return conversation .. file_error
end

--- Reloads the buffers a restore changed and says what it did: the counts, the conversation,
--- how to undo it (files restored over the workspace's), and the files kept as they were.
function H.report_files(label, res, workspace_root, task_id, why)
  local changed = vim.list_extend(vim.deepcopy(res.restoredPaths or {}), res.deletedPaths or {})
  local unsaved = M.reload_buffers(workspace_root, changed, why)
  local tabs, stayed = 0, 0
  if #changed > 0 then
    tabs, stayed = M.close_compare(task_id)
  end
  if res.fileError and res.fileError ~= "" then
    local failed = H.file_error(res.fileError, res.conversationRestored)
    return dline().notify(failed .. (unsaved and ("\n" .. unsaved) or ""), vim.log.levels.ERROR)
  end
  local kept = res.keptPaths or {}
  -- Restore Task Only restores no file: its counts (always 0) said nothing.
  local done = {}
  if res.filesRestored then
    table.insert(
      done,
      ("%d file(s) restored, %d deleted%s"):format(
        #(res.restoredPaths or {}),
        #(res.deletedPaths or {}),
        #kept > 0 and (", %d kept as they were"):format(#kept) or ""
      )
    )
  end
  if res.conversationRestored then table.insert(done, "conversation restored") end
  H.tell(
    ("%s%s: %s%s%s"):format(
      label,
      res.runStopped and " (the task was running: stopped first)" or "",
      #done > 0 and table.concat(done, ", ") or "nothing to restore",
      (res.undoCheckpointId or "") ~= "" and #changed > 0 and " (:Dline undo puts them back as they were)" or "",
      H.tabs_closed(tabs)
    ),
    {
      unsaved,
      stayed > 0 and ("%d compare tab(s) stay open: they show your unsaved changes"):format(stayed) or nil,
      #kept > 0 and M.kept_lines(kept, res.keptPathsIncomplete) or nil,
      (res.repositoryNote or "") ~= "" and require("dline.visible")(res.repositoryNote) or nil,
    }
  )
end

function H.tabs_closed(n)
  if n == 0 then return "" end
  return ("; its %d compare tab(s) closed, out of date (:Dline compare opens them again)"):format(n)
end

--- Undoes the task's last file restore: restores (files only) the "before restore" checkpoint
--- it saved, while no checkpoint was saved since and it was not undone already.
function M.undo(task_id, workspace_root, cb)
  M.list(task_id, function(err, list)
    if err then
      dline().notify_error("undo", err)
      return cb and cb(err)
    end
    local undo
    for _, cp in ipairs(list) do
      if cp.undoAvailable then undo = cp end
    end
    if not undo then
      dline().notify("no restore to undo (or a checkpoint was saved since)", vim.log.levels.WARN)
      return cb and cb("nothing to undo")
    end
    checkpoint_call(
      task_id,
      "Restore",
      { taskId = task_id, checkpointId = undo.id, mode = "RESTORE_MODE_FILES" },
      function(restore_err, res)
        if restore_err then
          dline().notify_error("undo", restore_err)
          return cb and cb(restore_err)
        end
        res.undoCheckpointId = "" -- an undo is not undone in turn
        H.report_files("Undo restore", res, workspace_root, task_id, "The undo")
        local controller = require("dline.task").get(task_id)
        if controller then controller:refresh_checkpoints() end
        if cb then cb(nil, res) end
      end
    )
  end)
end

-- Editing a sent message --------------------------------------------------------------

--- Restore All does not send the edited text: it goes in the chat's input area (shown), for
--- the person to send (<CR>) or change, as VS Code keeps it in its message input.
function H.keep_in_input(task_id, text)
  local sidebar = require("dline.sidebar")
  local controller = require("dline.task").get(task_id) or require("dline.task").open(task_id)
  local chat_win = sidebar.windows()
  if not chat_win or sidebar.current() ~= controller.chat then controller.chat:open(dline().config().chat) end
  vim.api.nvim_buf_set_lines(sidebar.input_buffer(), 0, -1, false, vim.split(text, "\n", { plain = true }))
end

--- The choices after editing a sent message (docs/checkpoints.md, "Editing a sent message").
M.EDIT_OPTIONS = {
  {
    label = "Restore Chat",
    description = "Rewind the conversation to just before this message and continue with the edited text",
    mode = "EDIT_MESSAGE_MODE_RESTORE_CHAT",
  },
  {
    label = "Restore All",
    description = "Restore the conversation and the workspace files to this message's checkpoint",
    mode = "EDIT_MESSAGE_MODE_RESTORE_ALL",
  },
}

--- At most this many paths of each kind in the Restore All confirmation ("and N more").
H.SHOWN_PATHS = 3

--- `paths` as a short list: "a.js, b.js, c.js and 4 more" (control characters made visible).
function H.names(paths, max)
  local names = {}
  for i = 1, math.min(#paths, max or #paths) do
    table.insert(names, (require("dline.visible")(paths[i]):gsub("\n", "\\n")))
  end
  local text = table.concat(names, ", ")
  if max and #paths > max then text = text .. (" and %d more"):format(#paths - max) end
  return text
end

function H.files(n) return ("%d file%s"):format(n, n == 1 and "" or "s") end

--- The Restore All confirmation's question: what it overwrites and deletes (from the dry run
--- `dry`), and which of those files have unsaved buffers (`unsaved`: { buf, path } each).
--- `max`: paths shown of each kind (nil: all).
function M.restore_all_prompt(dry, unsaved, max, running)
  local writes, deletes = dry.restoredPaths or {}, dry.deletedPaths or {}
  -- The task runs: the core stops it first; what its command writes until then is undone too,
  -- and cannot be named now.
  local first = running
      and "The task is running: it is stopped first (its command too), and what its command changes until then is undone too. "
    or ""
  local parts = {}
  if #writes > 0 then table.insert(parts, ("overwrites %s (%s)"):format(H.files(#writes), H.names(writes, max))) end
  if #deletes > 0 then table.insert(parts, ("deletes %s (%s)"):format(H.files(#deletes), H.names(deletes, max))) end
  local text = first
    .. ("Restore All resets the files to checkpoint %s: it %s."):format(
      (dry.checkpointId or ""):sub(1, 8),
      table.concat(parts, " and ")
    )
  local kept = vim.tbl_map(function(k) return k.path end, dry.keptPaths or {})
  if #kept > 0 then
    text = text
      .. (" %s the checkpoints cannot restore %s left as %s: %s."):format(
        H.files(#kept),
        #kept == 1 and "is" or "are",
        #kept == 1 and "it is" or "they are",
        H.names(kept, max)
      )
  end
  if #unsaved > 0 then
    local paths = vim.tbl_map(function(u) return u.path end, unsaved)
    text = text
      .. (" %s unsaved changes in Neovim: %s."):format(
        #unsaved == 1 and "1 of them has" or (#unsaved .. " of them have"),
        H.names(paths, max)
      )
  end
  return text
end

--- The confirmation's choices: with unsaved buffers among the files, save them first (the
--- restore's undo point then holds your text) or keep them as they are (not reloaded).
function M.restore_all_choices(dry, unsaved)
  local writes, deletes = #(dry.restoredPaths or {}), #(dry.deletedPaths or {})
  local choices = {}
  if #unsaved == 0 then
    table.insert(
      choices,
      { label = "Restore All (:Dline undo puts the files back as they are now)", action = "restore" }
    )
  else
    table.insert(choices, {
      label = "Save my unsaved buffers, then Restore All (:Dline undo puts back what they had)",
      action = "save",
    })
    table.insert(choices, {
      label = "Restore All, keep my unsaved buffers as they are (:e! loads the restored file)",
      action = "keep",
    })
  end
  if writes > H.SHOWN_PATHS or deletes > H.SHOWN_PATHS or #unsaved > H.SHOWN_PATHS then
    table.insert(choices, { label = ("List all %s, then choose"):format(H.files(writes + deletes)), action = "list" })
  end
  table.insert(choices, { label = "Cancel", action = "cancel" })
  return choices
end

--- Asks the core what Restore All of the edited message would do (a dry run: nothing changes),
--- then confirms with the files it names. `proceed(notice)` runs the restore: no confirmation
--- when it changes no file (`notice` says so); unsaved buffers among the files are saved first
--- when the person chose so. `cb("cancelled")` when not confirmed.
function H.confirm_restore_all(task_id, workspace_root, msg, text, proceed, cb)
  checkpoint_call(
    task_id,
    "EditMessage",
    { taskId = task_id, messageId = msg.id, text = text, mode = "EDIT_MESSAGE_MODE_RESTORE_ALL", dryRun = true },
    function(err, dry)
      if err then
        dline().notify_error("edit message", err)
        return cb and cb(err)
      end
      local paths = vim.list_extend(vim.deepcopy(dry.restoredPaths or {}), dry.deletedPaths or {})
      if #paths == 0 then
        -- Nothing of the workspace's changes: as Restore Chat, without sending the text.
        return proceed(
          (dry.checkpointId or "") == "" and "the task has no checkpoint with files: no file restored"
            or ("no file to restore: they are as at checkpoint %s"):format(dry.checkpointId:sub(1, 8))
        )
      end
      local unsaved = require("dline.buffers").modified(workspace_root, paths)
      local controller = require("dline.task").get(task_id)
      local running = controller ~= nil
        and (controller.status == "TASK_STATUS_RUNNING" or controller.status == "TASK_STATUS_WAITING")
      local function ask()
        require("dline.ui").select(M.restore_all_choices(dry, unsaved), {
          prompt = M.restore_all_prompt(dry, unsaved, H.SHOWN_PATHS, running),
          kind = "dline.restore_all",
          format_item = function(c) return c.label end,
        }, function(choice)
          -- Cancelled: nothing changed, and nothing said (as the plugin's other menus).
          if not choice or choice.action == "cancel" then return cb and cb("cancelled") end
          if choice.action == "list" then
            -- After Neovim's own select, below the answer typed, not on its line.
            dline().show_whole(H.file_list(dry, unsaved), require("dline.ui").builtin(vim.ui.select))
            return vim.schedule(ask)
          end
          if choice.action == "save" then
            local save_err, buf = require("dline.buffers").save(vim.tbl_map(function(u) return u.buf end, unsaved))
            if save_err then
              dline().notify(
                ("%s could not be saved (%s): nothing was restored"):format(
                  vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":~:."),
                  save_err
                ),
                vim.log.levels.ERROR
              )
              return cb and cb(save_err)
            end
          end
          proceed()
        end)
      end
      ask()
    end
  )
end

--- Every file Restore All would change, a line each (for "List all").
function H.file_list(dry, unsaved)
  local modified = {}
  for _, u in ipairs(unsaved) do
    modified[u.path] = true
  end
  local lines = {
    ("Restore All resets the files to checkpoint %s: it overwrites %s and deletes %s:"):format(
      (dry.checkpointId or ""):sub(1, 8),
      H.files(#(dry.restoredPaths or {})),
      H.files(#(dry.deletedPaths or {}))
    ),
  }
  local function add(paths, what)
    for _, p in ipairs(paths or {}) do
      table.insert(
        lines,
        ("  %s  %s%s"):format(what, H.names({ p }), modified[p] and "  (unsaved changes in Neovim)" or "")
      )
    end
  end
  add(dry.restoredPaths, "overwrite")
  add(dry.deletedPaths, "delete   ")
  if #(dry.keptPaths or {}) > 0 then table.insert(lines, M.kept_lines(dry.keptPaths, dry.keptPathsIncomplete)) end
  return table.concat(lines, "\n")
end

--- Edits one of the user's messages of task `task_id`: pick the message, change its text
--- (vim.ui.input), then choose Restore Chat or Restore All. Restore All first asks the core
--- which files it would overwrite and delete (a dry run) and confirms with them.
function M.edit_message(task_id, workspace_root, cb)
  dline().session():call("TaskService", "GetTask", { taskId = task_id }, function(err, res)
    if err then return dline().notify_error("edit message", err) end
    local mine = {}
    for _, m in ipairs(res.messages or {}) do
      if m.role == "MESSAGE_ROLE_USER" and (m.kind or "text") == "text" and (m.text or "") ~= "" then
        table.insert(mine, m)
      end
    end
    if #mine == 0 then
      return dline().notify(
        "task " .. require("dline.ids").short(task_id) .. " has no message of yours to edit",
        vim.log.levels.WARN
      )
    end
    require("dline.ui").select(mine, {
      prompt = "Edit which message?",
      kind = "dline.edit_message",
      format_item = function(m) return (m.text:gsub("\n", " ")):sub(1, 80) end,
    }, function(msg)
      if not msg then return end
      require("dline.ui").input({ prompt = "Edited message: ", default = msg.text }, function(text)
        if not text then return end
        if text == msg.text then return dline().notify("the text is unchanged: nothing to restore") end
        require("dline.ui").select(M.EDIT_OPTIONS, {
          prompt = "Apply the edit",
          kind = "dline.edit_mode",
          format_item = function(o) return o.label .. ": " .. o.description end,
        }, function(choice)
          if not choice then return end
          local function apply(notice) H.apply_edit(task_id, workspace_root, msg, text, choice, notice, cb) end
          if choice.mode ~= "EDIT_MESSAGE_MODE_RESTORE_ALL" then return apply() end
          H.confirm_restore_all(task_id, workspace_root, msg, text, apply, cb)
        end)
      end)
    end)
  end)
end

--- Sends the edit (`choice`: one of M.EDIT_OPTIONS), reloads the buffers it changed and says
--- what it did (`notice`: what the confirmation found, e.g. no file to restore).
function H.apply_edit(task_id, workspace_root, msg, text, choice, notice, cb)
  checkpoint_call(
    task_id,
    "EditMessage",
    { taskId = task_id, messageId = msg.id, text = text, mode = choice.mode },
    function(edit_err, edit_res)
      if edit_err then
        dline().notify_error("edit message", edit_err)
        return cb and cb(edit_err)
      end
      local warnings = {}
      if edit_res.fileError and edit_res.fileError ~= "" then
        table.insert(warnings, H.file_error(edit_res.fileError, edit_res.restored))
      end
      -- The buffers of the files it changed (an unsaved one is kept: said), then every
      -- other unmodified buffer whose file changed is re-read.
      local changed = vim.list_extend(vim.deepcopy(edit_res.restoredPaths or {}), edit_res.deletedPaths or {})
      table.insert(warnings, M.reload_buffers(workspace_root, changed))
      -- What Restore All left as it was (too large, not tracked by checkpoints), as a restore says it.
      local left = edit_res.keptPaths or {}
      if #left > 0 then table.insert(warnings, M.kept_lines(left, edit_res.keptPathsIncomplete)) end
      require("dline.buffers").reload_changed(workspace_root)
      local tabs, stayed = 0, 0
      if #changed > 0 then
        tabs, stayed = M.close_compare(task_id)
      end
      if stayed > 0 then
        table.insert(warnings, ("%d compare tab(s) stay open: they show your unsaved changes"):format(stayed))
      end
      local controller = require("dline.task").get(task_id)
      if controller then controller:reload() end
      local kept = ""
      if choice.mode == "EDIT_MESSAGE_MODE_RESTORE_ALL" then
        H.keep_in_input(task_id, text)
        kept = ". The edited message is in the chat's input area, not sent: <CR> there sends it"
      end
      H.tell(
        ("%s: %s%s%s%s%s"):format(
          choice.label .. (edit_res.runStopped and " (the task was running: stopped first)" or ""),
          edit_res.restored and "done" or "nothing restored",
          notice and #changed == 0 and (" (%s)"):format(notice) or "",
          (edit_res.undoCheckpointId or "") ~= ""
              and #changed > 0
              and (" (%d file(s) restored, %d deleted%s; :Dline undo puts them back as they were)"):format(
                #(edit_res.restoredPaths or {}),
                #(edit_res.deletedPaths or {}),
                #left > 0 and (", %d kept as they were"):format(#left) or ""
              )
            or "",
          H.tabs_closed(tabs),
          kept
        ),
        warnings,
        (edit_res.fileError or "") ~= "" and vim.log.levels.ERROR or nil
      )
      if cb then cb(nil, edit_res, choice) end
    end
  )
end

return M
