-- Task flows through the real sidecar and the scripted model server: a new task with
-- streamed text, approvals through vim.ui.select, a follow-up answer, denial with feedback,
-- a follow-up message from the input buffer, cancel, a sidecar killed mid-task and the
-- stream resumed, resume, history (favourite, delete), compare in diff mode, restore.
local T = require("dline_test")
local ask = require("dline.ask")
local S = T.suite()

local TERMINAL = {
  TASK_STATUS_COMPLETED = true,
  TASK_STATUS_CANCELLED = true,
  TASK_STATUS_FAILED = true,
  TASK_STATUS_INTERRUPTED = true,
}

local function session()
  T.fail_on_error_notices()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  return s
end

--- Approves every approval and answers follow-ups with `answer` (default the first option).
local function approve_all(answer)
  return T.script_select(function(items, opts)
    if opts.kind == "dline.approval" then return ask.APPROVE end
    if opts.kind == "dline.followup" then return answer or items[1] end
    return nil
  end)
end

--- Starts a task with :Dline new and returns its controller once created.
local function new_task(prompt)
  local before = require("dline.task").current()
  vim.cmd("Dline new " .. prompt)
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil and controller ~= before
  end, "the task to be created")
  return controller
end

local function wait_status(controller, status, timeout)
  local ok, err = pcall(
    T.wait,
    function() return controller.status == status end,
    "status " .. status,
    timeout or 30000
  )
  if not ok then
    T.fail(("%s (status now %s); the chat:\n%s"):format(err, tostring(controller.status), controller.chat:text()))
  end
end

local function wait_terminal(controller)
  T.wait(
    function() return TERMINAL[controller.status] ~= nil end,
    "the task to end (now " .. tostring(controller.status) .. ")",
    30000
  )
end

local function edit_turns()
  return {
    {
      text = "I will update the greeting.",
      toolCalls = {
        {
          name = "replace_in_file",
          input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      },
    },
    {
      toolCalls = {
        { name = "ask_followup_question", input = { question = "Which greeting?", options = { "formal", "casual" } } },
      },
    },
    { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting updated." } } } },
  }
end

local function workspace_file(name, text)
  local path = vim.loop.cwd() .. "/" .. name
  T.write(path, text)
  return path
end

--- A completed task that edited hello.txt ("hello" to "hello, world"), every call approved.
local function greeted_task()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, edit_turns())
  approve_all()
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  return s, file, controller
end

S.case(
  "a new task streams text, asks approval with vim.ui.select, edits the file, takes a follow-up answer and completes",
  function()
    local s = session()
    local file = workspace_file("hello.txt", "hello\n")
    local server = T.configure_model(s, edit_turns())
    local selects = approve_all("casual")
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    T.eq(T.read(file), "hello, world\n", "the file was edited")
    local text = controller.chat:text()
    T.contains(text, "## You\nGreet the world", "the prompt")
    T.contains(text, "I will update the greeting.", "streamed text")
    T.contains(
      text,
      "### replace_in_file hello.txt  [done]\n  hello.txt (+1 -1)",
      "the tool call, named once, with its change"
    )
    T.contains(text, "## Question\nWhich greeting?", "the question")
    T.contains(text, "## Task completed\nGreeting updated.", "the completion")
    T.contains(text, "── checkpoint ", "a checkpoint marker")
    T.matches(vim.api.nvim_buf_get_lines(controller.chat.buf, 0, 1, false)[1], "completed", "header status")
    T.eq(selects[1].opts.kind, "dline.approval", "first prompt")
    T.eq(
      selects[1].opts.prompt,
      "Dline wants to: replace_in_file hello.txt (+1 -1)",
      "approval prompt: the tool named once, the change"
    )
    T.eq(
      selects[1].labels,
      { "Approve", "Approve with feedback…", "Deny", "Deny with feedback…" },
      "approval choices"
    )
    T.eq(selects[2].labels, { "formal", "casual", "Answer in my own words…" }, "follow-up choices")
    -- The answer reached the model.
    local requests = T.model_requests(server)
    T.contains(vim.json.encode(requests[3].body), "casual", "the answer in the next request")
  end
)

S.case("words sent from the chat input that the sidecar refuses come back to the input", function()
  -- No fail_on_error_notices here: the refusal is an error notice on purpose.
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  T.configure_model(
    s,
    { { text = "Hi.", toolCalls = { { name = "attempt_completion", input = { result = "greeted" } } } } }
  )
  local controller = new_task("Say hi")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  -- Deleted meanwhile (from another editor): the next message is refused (not found).
  T.call(s, "TaskService", "DeleteTasks", { taskIds = { controller.task_id }, mode = "DELETE_MODE_SELECTED" })
  local input = require("dline.sidebar").input_buffer()
  vim.api.nvim_buf_set_lines(input, 0, -1, false, { "my long, carefully", "written message" })
  controller.chat:send_input()
  T.wait(
    function() return vim.api.nvim_buf_get_lines(input, 0, -1, false)[1] ~= "" end,
    "the words back in the input",
    20000
  )
  T.eq(
    vim.api.nvim_buf_get_lines(input, 0, -1, false),
    { "my long, carefully", "written message" },
    "the words, as typed"
  )
end)

S.case("a task whose folder is not on this machine asks for one, then continues there", function()
  local s = session()
  T.configure_model(s, {
    { text = "Hi.", toolCalls = { { name = "attempt_completion", input = { result = "greeted" } } } },
    {
      text = "Noting it.",
      toolCalls = { { name = "write_to_file", input = { path = "NOTES.md", content = "notes\n" } } },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "continued" } } } },
  })
  -- A task made in a folder that is gone since (a laptop's path, a deleted clone).
  local gone = T.base() .. "/gone-project"
  vim.fn.mkdir(gone, "p")
  local res = T.call(s, "TaskService", "NewTask", { workspaceRoot = gone, text = "Say hi" })
  local controller = require("dline.task").open(res.taskId, {})
  wait_status(controller, "TASK_STATUS_COMPLETED")
  vim.fn.delete(gone, "rf")
  local selects = T.script_select(function(items, opts)
    if opts.kind == "dline.workspace" then return items[1] end
    if opts.kind == "dline.approval" then return ask.APPROVE end
  end)
  local err = T.await(function(cb) controller:send("Take notes", cb) end, "the message to be taken")
  T.eq(err, nil, "the message was taken once a folder was chosen")
  T.eq(selects[1] and selects[1].opts.kind, "dline.workspace", "the folder was asked for first")
  local cwd = vim.loop.cwd()
  T.wait(
    function() return T.read(cwd .. "/NOTES.md") ~= nil and controller.status == "TASK_STATUS_COMPLETED" end,
    "the task to continue and complete",
    30000
  )
  T.eq(selects[1].labels[1], "Continue in " .. cwd, "the editor's folder offered")
  T.eq(T.read(cwd .. "/NOTES.md"), "notes\n", "the tool ran in the chosen folder")
  T.eq(
    T.call(s, "TaskService", "GetTask", { taskId = res.taskId }).task.workspaceRoot,
    cwd,
    "the task keeps its new folder"
  )
  T.eq(vim.fn.isdirectory(gone), 0, "nothing was made in the old folder")
end)

S.case("denying with feedback leaves the file alone, shows the denial, and the model answers it", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, { edit_turns()[1], { text = "Understood: hello.txt stays as it is." } })
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then return ask.DENY_FEEDBACK end
  end)
  T.script_input(function() return "not like that" end)
  local controller = new_task("Greet the world")
  wait_terminal(controller)
  T.eq(controller.status, "TASK_STATUS_COMPLETED", "the run went on to the model's answer")
  T.eq(T.read(file), "hello\n", "the file is unchanged")
  T.contains(controller.chat:text(), "## You denied replace_in_file: not like that", "the denial")
  T.contains(controller.chat:text(), "Understood: hello.txt stays as it is.", "the model's answer to it")
end)

S.case("a message from the input buffer starts the next turn; :Dline approve answers without the prompt", function()
  local s = session()
  workspace_file("notes.txt", "one\n")
  T.configure_model(s, {
    {
      text = "Nothing to do yet.",
      toolCalls = { { name = "attempt_completion", input = { result = "Waiting for details." } } },
    },
    {
      text = "Adding a line.",
      toolCalls = { { name = "write_to_file", input = { path = "notes.txt", content = "one\ntwo\n" } } },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "Added two." } } } },
  })
  require("dline").config().prompt_on_ask = false
  local controller = new_task("Wait for details")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  vim.api.nvim_set_current_buf(controller.chat.input_buf)
  vim.api.nvim_buf_set_lines(controller.chat.input_buf, 0, -1, false, { "Add a line two" })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  wait_status(controller, "TASK_STATUS_WAITING")
  T.eq(controller.pending_ask.tool, "write_to_file", "the pending approval")
  vim.cmd("Dline approve")
  T.wait(function() return T.read(vim.loop.cwd() .. "/notes.txt") == "one\ntwo\n" end, "the write")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.contains(controller.chat:text(), "## You\nAdd a line two", "the message")
  T.contains(controller.chat:text(), "## Task completed\nAdded two.", "the second completion")
end)

--- The lines of `controller`'s chat that show the cut-off marker, each with its highlight group.
local function cut_off_marks(controller)
  local render = require("dline.chat_render")
  local buf = controller.chat.buf
  -- The chat's highlights (0.7 cannot list every namespace's).
  local ns = vim.api.nvim_create_namespace("dline_chat")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local marks = {}
  for i, line in ipairs(lines) do
    if line == render.CUT_OFF_LINE then
      local groups = {}
      for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, { i - 1, 0 }, { i - 1, -1 }, { details = true })) do
        if mark[4].hl_group then table.insert(groups, mark[4].hl_group) end
      end
      table.insert(marks, { line = i, above = lines[i - 1], groups = groups })
    end
  end
  return marks
end

S.case(":Dline cancel stops a task while it streams; the chat marks where the answer was cut, reopened too", function()
  local s = session()
  T.configure_model(s, {
    -- A few deltas, then the model stalls with the connection open: the task is mid-stream.
    { text = string.rep("slow text ", 20), textChunkChars = 5, interrupt = { afterFrames = 8, mode = "stall" } },
    { text = "Picking up where I stopped." },
  })
  local controller = new_task("Talk slowly")
  T.wait(function() return controller.chat:text():find("slow text slow text", 1, true) ~= nil end, "streamed text")
  T.eq(#cut_off_marks(controller), 0, "no marker while the answer streams")
  vim.cmd("Dline cancel")
  wait_status(controller, "TASK_STATUS_CANCELLED")
  T.wait(function() return #cut_off_marks(controller) > 0 end, "the cut-off marker")
  local marks = cut_off_marks(controller)
  T.eq(#marks, 1, "one marker")
  T.matches(marks[1].above, "^slow text slow text", "right under the text the answer stopped at")
  T.eq(marks[1].groups, { "DlineCutOff" }, "highlighted quietly")
  T.eq(vim.fn.synIDtrans(vim.fn.hlID("DlineCutOff")), vim.fn.hlID("Comment"), "as a comment")

  -- The next answer finishes: it is not marked, the cut one still is.
  T.await(function(cb) controller:send("go on", cb) end, "the message to be taken")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.contains(controller.chat:text(), "Picking up where I stopped.", "the next answer")
  marks = cut_off_marks(controller)
  T.eq(#marks, 1, "only the cut answer is marked")
  T.matches(marks[1].above, "^slow text slow text", "still under the cut answer")
  T.eq(marks[1].groups, { "DlineCutOff" }, "still highlighted")

  -- Reopened from history (its messages from GetTask): the same.
  local task_id = controller.task_id
  controller.chat:close()
  T.script_select(function(items, opts)
    if opts.kind == "dline.history" then
      for _, t in ipairs(items) do
        if t.id == task_id then return t end
      end
    end
    if opts.kind == "dline.history_action" then return "Open" end
  end)
  vim.cmd("Dline history")
  local reopened
  T.wait(function()
    reopened = require("dline.task").get(task_id)
    return reopened ~= nil
      and reopened ~= controller
      and reopened.chat:text():find("Picking up where I stopped.", 1, true) ~= nil
  end, "the task reopened")
  marks = cut_off_marks(reopened)
  T.eq(#marks, 1, "reopened: one marker")
  T.matches(marks[1].above, "^slow text slow text", "reopened: under the cut answer")
  T.eq(marks[1].groups, { "DlineCutOff" }, "reopened: highlighted")
end)

S.case(
  "a sidecar killed mid-task is restarted, the task stream resumes without gaps or duplicates, and :Dline resume finishes it",
  function()
    local s = session()
    local file = workspace_file("hello.txt", "hello\n")
    local replace = {
      name = "replace_in_file",
      input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
    }
    T.configure_model(s, {
      { text = "I will update the greeting.", toolCalls = { replace } },
      -- After the resume the model is asked again and repeats its call.
      { text = "Trying again.", toolCalls = { replace } },
      { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting updated." } } } },
    })
    require("dline").config().prompt_on_ask = false
    local controller = new_task("Greet the world")
    local seqs = {}
    controller:on_event(function(event) table.insert(seqs, tonumber(event.seq)) end)
    wait_status(controller, "TASK_STATUS_WAITING")
    local before_kill = #seqs
    local old_pid = s.sidecar:pid()
    local opens = controller.watch.opens
    vim.loop.kill(old_pid, "sigkill")
    T.wait(
      function() return s.ready and s.sidecar:pid() ~= old_pid and controller.watch.opens > opens end,
      "the restarted sidecar and the re-opened stream"
    )
    -- The run died with its sidecar: resume it, then approve.
    approve_all()
    require("dline").config().prompt_on_ask = true
    vim.cmd("Dline resume")
    wait_status(controller, "TASK_STATUS_COMPLETED", 40000)
    T.eq(T.read(file), "hello, world\n", "the edit happened after the resume")
    -- Every event logged after the restart reached the chat once, in order: the log replayed
    -- from the start is the reference (seqs jump where a new sidecar reserved a new block).
    T.truthy(before_kill > 0, "events before the kill")
    for i = 2, #seqs do
      if seqs[i] <= seqs[i - 1] then T.fail("events repeated or out of order: " .. vim.inspect(seqs)) end
    end
    local last_seq = seqs[#seqs]
    local logged = {}
    local stream = s.client:stream("TaskService", "Subscribe", { taskId = controller.task_id, afterSeq = "0" }, {
      on_message = function(msg) table.insert(logged, tonumber(msg.event.seq)) end,
      on_end = function() end,
    })
    T.wait(function() return #logged > 0 and logged[#logged] >= last_seq end, "the whole log")
    stream.cancel()
    local after_restart = vim.list_slice(seqs, before_kill + 1)
    local logged_after = vim.tbl_filter(function(seq) return seq > seqs[before_kill] end, logged)
    T.eq(after_restart, logged_after, "the events the chat received after the restart")
  end,
  { timeout = 120000 }
)

S.case("history lists the task; favourite and delete work from the picker", function()
  local s = session()
  workspace_file("hello.txt", "hello\n")
  T.configure_model(s, edit_turns())
  approve_all()
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local task_id = controller.task_id
  local function pick(action)
    T.script_select(function(items, opts)
      if opts.kind == "dline.history" then
        for _, t in ipairs(items) do
          if t.id == task_id then return t end
        end
      end
      if opts.kind == "dline.history_action" then return action end
      if opts.kind == "dline.confirm" then return "Delete" end
    end)
  end
  pick("Toggle favourite")
  vim.cmd("Dline history")
  T.wait(function()
    local res = T.call(s, "HistoryService", "ListTasks", { favoritesOnly = true })
    return res.tasks and #res.tasks == 1 and res.tasks[1].id == task_id
  end, "the favourite")
  pick("Delete")
  vim.cmd("Dline history")
  T.wait(function()
    local res = T.call(s, "HistoryService", "ListTasks", {})
    return not res.tasks or #res.tasks == 0
  end, "the deletion")
  T.wait(function() return not vim.api.nvim_buf_is_valid(controller.chat.buf) end, "its chat to close")
  local err = T.call_err(s, "TaskService", "GetTask", { taskId = task_id })
  T.eq(err.code, "not_found", "gone")
end)

S.case("a task deleted by another client closes its chat with a notice", function()
  local s = session()
  T.configure_model(
    s,
    { { text = "Nothing to do.", toolCalls = { { name = "attempt_completion", input = { result = "Done." } } } } }
  )
  local controller = new_task("Say done")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local notices = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notices, msg)
    notify(msg, level)
  end
  -- Another client (the CLI, another editor) deletes it through its own sidecar call.
  T.call(s, "TaskService", "DeleteTasks", { taskIds = { controller.task_id }, mode = "DELETE_MODE_SELECTED" })
  T.wait(function() return not vim.api.nvim_buf_is_valid(controller.chat.buf) end, "the chat to close")
  T.contains(table.concat(notices, "\n"), "no longer exists", "notice")
end)

S.case(":Dline edit changes a sent message and Restore Chat continues the task with it", function()
  local s = session()
  workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    {
      toolCalls = {
        { name = "ask_followup_question", input = { question = "Which tone?", options = { "formal", "casual" } } },
      },
    },
    { text = "Formal it is.", toolCalls = { { name = "attempt_completion", input = { result = "First answer." } } } },
    { text = "Casual then.", toolCalls = { { name = "attempt_completion", input = { result = "Second answer." } } } },
  })
  approve_all("formal")
  local controller = new_task("Pick a tone")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.contains(controller.chat:text(), "First answer.", "first completion")
  local edit_items
  T.script_select(function(items, opts, entry)
    if opts.kind == "dline.edit_message" then
      edit_items = entry.labels
      return items[#items]
    end
    if opts.kind == "dline.edit_mode" then return items[1] end
  end)
  local inputs = T.script_input(function() return "casual, please" end)
  vim.cmd("Dline edit")
  T.wait(function()
    local text = controller.chat:text()
    return text:find("Second answer.", 1, true) ~= nil and controller.status == "TASK_STATUS_COMPLETED"
  end, "the task to continue with the edited message")
  T.eq(edit_items, { "Pick a tone", "formal" }, "your messages")
  T.eq(inputs[1].default, "formal", "the edit starts from the sent text")
  local text = controller.chat:text()
  T.contains(text, "casual, please", "the edited message")
  T.truthy(not text:find("First answer.", 1, true), "the rewound part is gone")
end)

S.case(
  "compare opens the checkpoint against the current file in diff mode; restore files only reverts and reloads the buffer",
  function()
    local _, file, controller = greeted_task()
    T.eq(T.read(file), "hello, world\n", "edited")
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    local file_buf = vim.api.nvim_get_current_buf()
    T.eq(vim.api.nvim_buf_get_lines(file_buf, 0, -1, false), { "hello, world" }, "the buffer shows the edit")
    vim.b[file_buf].dline_task_id = nil
    require("dline.task").open(controller.task_id)

    -- :Dline checkpoints lists them, newest first (dismissed here).
    local listed
    T.script_select(function(_, opts, entry)
      if opts.kind == "dline.checkpoint" then listed = entry.labels end
    end)
    vim.cmd("Dline checkpoints")
    T.wait(function() return listed ~= nil end, "the checkpoint list")
    T.matches(listed[1], "completion", "the newest is the completion's")
    T.matches(listed[#listed], "baseline", "the oldest is the baseline")

    local restore_labels
    T.script_select(function(items, opts, entry)
      if opts.kind == "dline.checkpoint" then
        for _, cp in ipairs(items) do
          if cp.kind == "CHECKPOINT_KIND_BASELINE" then return cp end
        end
      end
      if opts.kind == "dline.restore" then
        restore_labels = entry.labels
        for _, o in ipairs(items) do
          if o.label == "Restore Files Only" then return o end
        end
      end
    end)
    local tabs = #vim.api.nvim_list_tabpages()
    vim.cmd("Dline compare")
    T.wait(function() return #vim.api.nvim_list_tabpages() > tabs end, "a diff tab")
    local wins = vim.api.nvim_tabpage_list_wins(0)
    T.eq(#wins, 2, "two windows")
    local names, contents = {}, {}
    for _, win in ipairs(wins) do
      T.eq(vim.wo[win].diff, true, "diff mode")
      local buf = vim.api.nvim_win_get_buf(win)
      table.insert(names, vim.api.nvim_buf_get_name(buf))
      table.insert(contents, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    end
    T.matches(names[1], "^dline://checkpoint/.*/hello%.txt$", "the checkpoint side")
    T.eq(contents[1], { "hello" }, "the checkpoint's content")
    T.eq(names[2], file, "the current file")
    T.eq(contents[2], { "hello, world" }, "the current content")
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    T.eq(qf.title, "Changes since snapshot", "quickfix title")
    T.eq(#qf.items, 1, "one changed file")

    vim.cmd("Dline restore")
    T.wait(function() return T.read(file) == "hello\n" end, "the file restored")
    T.eq(restore_labels, {
      "Restore Files & Task: Revert files and clear messages after this point",
      "Restore Files Only: Revert files to this checkpoint",
      "Restore Task Only: Clear messages after this point",
    }, "the restore menu of the spec")
    T.wait(
      function() return vim.api.nvim_buf_get_lines(file_buf, 0, -1, false)[1] == "hello" end,
      "the buffer reloaded"
    )
    T.contains(controller.chat:text(), "## Task completed", "files only: the conversation is kept")
  end
)

S.case("compare lists a change the checkpoints do not track in the quickfix list, with no diff tab", function()
  local env = workspace_file(".env", "API_KEY=original\n")
  local _, file, controller = greeted_task()
  -- Changed after the task's baseline (as a command would): the checkpoints leave .env out.
  T.write(env, "API_KEY=changed\n")
  require("dline.task").open(controller.task_id)
  T.script_select(function(items, opts)
    if opts.kind == "dline.checkpoint" then
      for _, cp in ipairs(items) do
        if cp.kind == "CHECKPOINT_KIND_BASELINE" then return cp end
      end
    end
  end)
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Dline compare")
  T.wait(function() return #vim.fn.getqflist() == 2 end, "both changes listed")
  local items = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    items[vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ":t")] = item.text
  end
  T.eq(items, {
    ["hello.txt"] = "modified",
    [".env"] = "modified, not tracked by checkpoints: not compared or restored",
  }, "the quickfix lines")
  T.eq(#vim.api.nvim_list_tabpages(), tabs + 1, "a diff tab for hello.txt only")
  T.eq(T.read(file), "hello, world\n", "nothing restored")
end)

S.case("compare names a change of permissions alone in the quickfix list, with no diff tab", function()
  local key = workspace_file("id.key", "private\n")
  local script = workspace_file("run.sh", "echo run\n")
  vim.loop.fs_chmod(key, tonumber("600", 8))
  local _, _, controller = greeted_task()
  -- After the task's baseline (as a command would): the key opened to all, the script made executable.
  vim.loop.fs_chmod(key, tonumber("644", 8))
  vim.loop.fs_chmod(script, tonumber("755", 8))
  require("dline.task").open(controller.task_id)
  T.script_select(function(items, opts)
    if opts.kind == "dline.checkpoint" then
      for _, cp in ipairs(items) do
        if cp.kind == "CHECKPOINT_KIND_BASELINE" then return cp end
      end
    end
  end)
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Dline compare")
  T.wait(function() return #vim.fn.getqflist() == 3 end, "the three changes listed")
  local items = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    items[vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ":t")] = item.text
  end
  T.eq(items, {
    ["hello.txt"] = "modified",
    ["id.key"] = "modified, permissions 600 -> 644",
    -- The person's chmod +x, made after the baseline: no files restore takes it back (the core's
    -- restore_paths), and the line says so, as the CLI's Compare does.
    ["run.sh"] = "modified, permissions 644 -> 755, a files restore leaves it as it is",
  }, "the quickfix lines")
  T.eq(#vim.api.nvim_list_tabpages(), tabs + 1, "a diff tab for hello.txt only")
end)

--- The task's baseline checkpoint.
local function baseline_of(s, controller)
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
  return vim.tbl_filter(function(cp) return cp.kind == "CHECKPOINT_KIND_BASELINE" end, cps)[1]
end

--- The task's baseline checkpoint, waited for (it may still be being saved while an approval waits).
local function wait_baseline(s, controller)
  local baseline
  T.wait(function()
    local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
    baseline = vim.tbl_filter(function(cp) return cp.kind == "CHECKPOINT_KIND_BASELINE" end, cps or {})[1]
    return baseline ~= nil
  end, "the baseline checkpoint")
  return baseline
end

--- Another Neovim (its own sidecar, the same folders) restores `controller`'s task to `checkpoint`.
local function restore_in_other_window(controller, checkpoint, mode)
  local other = require("dline.session").new(require("dline").config(), require("dline").logger())
  T.defer(function() other:stop() end)
  return T.call(other, "CheckpointService", "Restore", {
    taskId = controller.task_id,
    checkpointId = checkpoint.id,
    mode = mode,
  })
end

--- Answers the restore menu with the option labelled `label`; other pickers go to `others`.
local function choose_restore(label, others)
  T.script_select(function(items, opts, entry)
    if opts.kind == "dline.restore" then
      for _, o in ipairs(items) do
        if o.label == label then return o end
      end
    end
    if others then return others(items, opts, entry) end
  end)
end

--- Collects what vim.notify shows ({ msg, level } each) until the returned function is called.
local function capture_notices()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(messages, { msg = msg, level = level })
    return notify(msg, level)
  end
  return messages, function() vim.notify = notify end
end

S.case(
  "a question a restore in another window took away is not said to be unanswered because the sidecar stopped",
  function()
    local s = session()
    local file = workspace_file("hello.txt", "hello\n")
    T.configure_model(s, edit_turns())
    -- The approval is left waiting here (the picker dismissed).
    local asked = false
    T.script_select(function(_, opts)
      if opts.kind == "dline.approval" then asked = true end
      return nil
    end)
    local controller = new_task("Greet the world")
    T.wait(function() return asked and controller.pending_ask ~= nil end, "the approval to wait")
    local seen = {}
    controller:on_event(function(event)
      local status = event.statusChanged
      if status then
        table.insert(seen, { status = status.status, reason = status.reason or "", chat = controller.chat:text() })
      end
    end)
    -- The baseline may still be being saved while the approval waits.
    local baseline = wait_baseline(s, controller)
    -- Another Neovim (its own sidecar, the same folders) restores the task to its baseline.
    local messages, stop_capture = capture_notices()
    restore_in_other_window(controller, baseline, "RESTORE_MODE_FILES_AND_TASK")
    T.wait(function()
      for _, change in ipairs(seen) do
        if change.reason:find("restored", 1, true) then return true end
      end
    end, "the status the restore left it in")
    -- This window says why the task stopped: before, nothing did (the reason was only stored).
    T.wait(function()
      for _, m in ipairs(messages) do
        if m.msg:find("is interrupted: the conversation was restored to an earlier point", 1, true) then return true end
      end
    end, "the notice with the reason")
    stop_capture()
    for _, change in ipairs(seen) do
      T.truthy(
        not change.chat:find("the sidecar stopped", 1, true),
        ("the chat once %s (%s) says the sidecar stopped:\n%s"):format(change.status, change.reason, change.chat)
      )
    end
    T.eq(controller.pending_ask, nil, "nothing waits for an answer")
    T.eq(T.read(file), "hello\n", "the file as it was")
  end
)

--- A task whose edit waits for approval, its picker left open (no answer): the session, the
--- task's controller and the question.
local function approval_left_open()
  local s = session()
  workspace_file("hello.txt", "hello\n")
  T.configure_model(s, edit_turns())
  local asked = false
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then asked = true end
    return nil
  end)
  local controller = new_task("Greet the world")
  T.wait(function() return asked and controller.pending_ask ~= nil end, "the approval to wait")
  return s, controller, controller.pending_ask
end

--- Answers `stale` as a picker left open would (a built-in picker blocks Neovim: its answer comes
--- as if the question were still pending); returns what the answer's notices said.
local function answer_stale(controller, stale, approve)
  controller.pending_ask = stale
  local messages, stop_capture = capture_notices()
  local done = false
  controller:respond(approve, "", function() done = true end)
  T.wait(function() return done end, "the answer's end")
  stop_capture()
  return table.concat(vim.tbl_map(function(m) return m.msg end, messages), "\n")
end

S.case(":Dline restart names the waiting task and asks first: kept when declined, restarted when confirmed", function()
  local s, controller = approval_left_open()
  local asked = {}
  T.script_select(function(items, opts)
    if opts.kind ~= "dline.confirm" then return nil end
    table.insert(asked, opts.prompt)
    return items[#asked == 1 and 2 or 1]
  end)
  local pid = s.sidecar:pid()
  vim.cmd("Dline restart")
  T.wait(function() return #asked == 1 end, "the confirmation")
  -- Before: the sidecar was stopped at once, and the task with it.
  T.contains(asked[1], "It stops task " .. controller.task_id:sub(-8) .. " (waiting for you)", "names the task")
  vim.wait(300, function() return false end)
  T.eq(s.sidecar:pid(), pid, "declined: the same sidecar")
  T.eq(controller.status, "TASK_STATUS_WAITING", "declined: the task still waits")

  vim.cmd("Dline restart")
  T.wait(function() return s.ready and s.sidecar:pid() ~= nil and s.sidecar:pid() ~= pid end, "a new sidecar")
  wait_status(controller, "TASK_STATUS_INTERRUPTED")
  T.eq(#asked, 2, "asked again")
end)

S.case(":Dline! restart restarts without asking; :Dline restart asks nothing once no task runs", function()
  local s, controller = approval_left_open()
  local asked = 0
  T.script_select(function(_, opts)
    if opts.kind == "dline.confirm" then asked = asked + 1 end
    return nil
  end)
  local function restarted(command)
    local pid = s.sidecar:pid()
    vim.cmd(command)
    T.wait(function() return s.ready and s.sidecar:pid() ~= nil and s.sidecar:pid() ~= pid end, command)
  end
  restarted("Dline! restart")
  wait_status(controller, "TASK_STATUS_INTERRUPTED")
  restarted("Dline restart")
  T.eq(asked, 0, "never asked")
end)

S.case(":Dline resume with no chat open resumes this folder's interrupted task, and offers several", function()
  local s, first = approval_left_open()
  local second_id = T.call(s, "TaskService", "NewTask", {
    workspaceRoot = (vim.uv or vim.loop).cwd(),
    text = "Greet again",
  }).taskId
  T.wait(function()
    local t = T.call(s, "TaskService", "GetTask", { taskId = second_id })
    return t.task.status == "TASK_STATUS_WAITING"
  end, "the second task to wait for an answer")
  -- Neovim stops under the task: a new sidecar, and no chat open (as in a Neovim started again).
  vim.cmd("Dline! restart")
  wait_status(first, "TASK_STATUS_INTERRUPTED")
  first:close()
  T.eq(require("dline.task").current(), nil, "no chat open")
  local offered = {}
  T.script_select(function(items, opts, entry)
    if opts.kind ~= "dline.history" then return nil end
    offered = entry.labels
    for _, item in ipairs(items) do
      if item.id == first.task_id then return item end
    end
  end)
  vim.cmd("Dline resume")
  -- Before: "no task: start one with :Dline new {prompt} or pick one with :Dline history".
  local resumed
  T.wait(function()
    resumed = require("dline.task").get(first.task_id)
    return resumed ~= nil and resumed.status ~= nil and resumed.status ~= "TASK_STATUS_INTERRUPTED"
  end, "the picked task resumed")
  T.truthy(#offered >= 1, "the interrupted tasks were offered")
  T.contains(table.concat(offered, "\n"), first.task_id:sub(-8), "the first task among them")
end)

S.case("a chat's buffer, and so its tab label, is named by the task's short id", function()
  local _, controller = approval_left_open()
  -- Before: dline://chat/1796522024251-8d4af056, which a tab line shortened to d//c/1796522024251-8d4af056.
  T.eq(
    vim.api.nvim_buf_get_name(controller.chat.buf),
    "dline://chat/" .. require("dline.ids").short(controller.task_id),
    "the chat buffer's name"
  )
end)

S.case("an error notice says the core's sentence, without its code", function()
  session()
  local messages, stop_capture = capture_notices()
  vim.cmd("Dline resume 1796000000000-deadbeef")
  -- Not T.wait: the error notice is what this case waits for.
  vim.wait(20000, function() return #messages > 0 end)
  stop_capture()
  local said = table.concat(vim.tbl_map(function(m) return m.msg end, messages), "\n")
  T.contains(said, "1796000000000-deadbeef", "names the task")
  -- Before: "…: not_found: Task … does not exist." (the Connect code, which the log keeps).
  T.truthy(not said:find("not_found", 1, true), "no code: " .. said)
end)

S.case("an answer from a picker left open while another window's restore stopped the task says so", function()
  local s, controller, stale = approval_left_open()
  -- The baseline may still be being saved while the approval waits.
  local baseline = wait_baseline(s, controller)
  restore_in_other_window(controller, baseline, "RESTORE_MODE_FILES")
  wait_status(controller, "TASK_STATUS_INTERRUPTED")
  local said = answer_stale(controller, stale, true)
  -- Before: "that question was answered in another window", though nobody answered it.
  T.contains(said, "that question is no longer pending: the task stopped", "why it is not pending")
  T.truthy(not said:find("answered in another window", 1, true), "not answered elsewhere: " .. said)
end)

S.case("an answer from a picker left open after another window answered says so, without ids", function()
  local _, controller, stale = approval_left_open()
  -- Another window approves the edit; the task goes on to its next question.
  local other = require("dline.session").new(require("dline").config(), require("dline").logger())
  T.defer(function() other:stop() end)
  T.call(other, "TaskService", "Respond", { taskId = controller.task_id, askId = stale.askId, approve = true })
  T.wait(
    function() return controller.pending_ask ~= nil and controller.pending_ask.askId ~= stale.askId end,
    "the next question"
  )
  local said = answer_stale(controller, stale, false)
  -- Before: "answer: aborted: Ask 8411fadb-… is no longer pending (the pending one is 7abb486a-…)".
  T.contains(said, "that question was answered in another window", "answered elsewhere")
  T.truthy(not said:find("aborted", 1, true), "no raw error: " .. said)
end)

S.case("compare says which changes a files restore leaves alone, and how many files it did not open in tabs", function()
  local _, _, controller = greeted_task()
  -- The person's own file, made after the task: a files restore leaves it as it is.
  local mine = workspace_file("mine.txt", "mine\n")
  require("dline.task").open(controller.task_id)
  T.script_select(function(items, opts)
    if opts.kind == "dline.checkpoint" then
      for _, cp in ipairs(items) do
        if cp.kind == "CHECKPOINT_KIND_BASELINE" then return cp end
      end
    end
  end)
  local previous = require("dline").config().compare.max_tabs
  require("dline").config().compare.max_tabs = 1
  T.defer(function() require("dline").config().compare.max_tabs = previous end)
  local messages, stop_capture = capture_notices()
  vim.cmd("Dline compare")
  T.wait(function() return #vim.fn.getqflist() == 2 end, "both changes listed")
  T.wait(function()
    for _, m in ipairs(messages) do
      if m.msg:find("compare: ", 1, true) then return true end
    end
  end, "the compare's summary")
  stop_capture()
  local items = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    items[vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ":t")] = item.text
  end
  -- Before: both read "modified"/"added", as if a restore would put back both.
  T.eq(items, {
    ["hello.txt"] = "modified",
    ["mine.txt"] = "added, a files restore leaves it as it is",
  }, "the quickfix lines")
  local said = table.concat(vim.tbl_map(function(m) return m.msg end, messages), "\n")
  -- Before: nothing said that only one of the two had a tab.
  T.contains(said, "2 file(s) changed since checkpoint", "how many changed")
  T.contains(said, "1 a files restore leaves as they are", "how many a restore leaves")
  T.contains(said, "1 in diff tabs, all of them in the quickfix list (:copen)", "where the others are")
  T.eq(T.read(mine), "mine\n", "nothing restored")
end)

S.case("a restore of files and task from another window: the buffers here show the restored files", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local turns = edit_turns()
  T.configure_model(s, turns)
  -- The edit is approved; the question after it is left waiting.
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then return ask.APPROVE end
  end)
  local controller = new_task("Greet the world")
  T.wait(
    function() return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "hello, world" end,
    "the buffer to show the edit"
  )
  T.wait(function() return controller.status == "TASK_STATUS_WAITING" end, "the question to wait")
  local baseline = baseline_of(s, controller)
  -- Another Neovim (its own sidecar, the same folders) restores the task to its baseline.
  restore_in_other_window(controller, baseline, "RESTORE_MODE_FILES_AND_TASK")
  T.eq(T.read(file), "hello\n", "the file restored")
  -- Before: the buffer kept showing "hello, world" (a :w would have written it back).
  T.wait(
    function() return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "hello" end,
    "the buffer to show the restored file"
  )
  T.eq(vim.bo[buf].modified, false, "not modified")
end)

S.case(
  "a files-only restore from another window: an unchanged buffer here shows the restored file, a changed one is kept",
  function()
    local s, file, controller = greeted_task()
    local notes = workspace_file("notes.txt", "mine\n")
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    local buf = vim.api.nvim_get_current_buf()
    T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1], "hello, world", "the task's edit shown")
    -- A buffer with unsaved changes in the same folder, whose file changes on disk too.
    vim.cmd("edit " .. vim.fn.fnameescape(notes))
    local typed = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(typed, 0, -1, false, { "typed, not saved" })
    vim.cmd("buffer " .. buf)
    local baseline = baseline_of(s, controller)
    -- Another window (its own sidecar, the same folders) restores the files alone.
    restore_in_other_window(controller, baseline, "RESTORE_MODE_FILES")
    T.eq(T.read(file), "hello\n", "the file restored")
    T.write(notes, "changed elsewhere\n")
    -- Before: the buffer kept showing "hello, world" (a :w would have written it back).
    T.wait(
      function() return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "hello" end,
      "the buffer to show the restored file"
    )
    T.eq(vim.bo[buf].modified, false, "not modified")
    T.eq(vim.api.nvim_buf_get_lines(typed, 0, -1, false), { "typed, not saved" }, "unsaved text kept")
    T.eq(vim.bo[typed].modified, true, "still unsaved")
  end
)

S.case("a files-only restore and its undo from another window: the marker here says restored, then no more", function()
  local s, file, controller = greeted_task()
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
  local turn = vim.tbl_filter(function(cp) return cp.kind == "CHECKPOINT_KIND_TURN" end, cps)[1]
  local function marker_reads(words)
    local line = "── checkpoint " .. turn.id:sub(1, 8) .. " (" .. words .. ")\n"
    T.wait(
      function() return controller.chat:text():find(line, 1, true) ~= nil end,
      "the marker to read " .. words .. "; the chat:\n" .. controller.chat:text()
    )
  end
  T.write(file, "mine\n")
  local restored = restore_in_other_window(controller, turn, "RESTORE_MODE_FILES")
  T.eq(T.read(file), "hello, world\n", "the file restored")
  -- Before: a files-only restore told this window nothing.
  marker_reads("turn, restored")
  -- Before: the undo told this window nothing, and its marker said "restored" for good. Made
  -- by a process that lets go of the task at once: this window's sidecar may never see it hold
  -- the task, and reads the undo's event back from the task's state.
  restore_in_other_window(controller, { id = restored.undoCheckpointId }, "RESTORE_MODE_FILES")
  T.eq(T.read(file), "mine\n", "the restore undone")
  marker_reads("turn")
end)

S.case("Restore Task Only says the conversation was restored, with no count of files", function()
  local s, file, controller = greeted_task()
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Task Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  -- Before: "Restore Task Only: 0 file(s) restored, 0 deleted, conversation restored".
  T.eq(messages[1].msg, "(dline) Restore Task Only: conversation restored", "the summary")
  T.eq(T.read(file), "hello, world\n", "the files as they were")
end)

S.case(":Dline undo puts back the files a restore changed, once", function()
  local s, file, controller = greeted_task()
  T.eq(T.read(file), "hello, world\n", "edited")
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  local listed
  choose_restore("Restore Files Only", function(_, opts, entry)
    if opts.kind == "dline.checkpoint" then listed = entry.labels end
  end)
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  T.eq(T.read(file), "hello\n", "restored")
  T.eq(
    messages[1].msg,
    "(dline) Restore Files Only: 1 file(s) restored, 0 deleted (:Dline undo puts them back as they were)",
    "the summary says how to undo it"
  )
  -- The checkpoint list names the one :Dline undo restores.
  vim.cmd("Dline checkpoints")
  T.wait(function() return listed ~= nil end, "the checkpoint list")
  T.matches(
    listed[1],
    "^%x+  %d%d:%d%d:%d%d  before restore · 1 file the restore changed: hello%.txt %(:Dline undo restores it%)$",
    "the newest: the restore's undo point"
  )

  vim.cmd("Dline undo")
  T.wait(function() return #messages >= 2 end, "the undo's message")
  T.eq(T.read(file), "hello, world\n", "undone: the task's edit is back")
  T.eq(messages[2].msg, "(dline) Undo restore: 1 file(s) restored, 0 deleted", "the undo's summary")
  -- Once: a second undo does not put the restore back.
  vim.cmd("Dline undo")
  T.wait(function() return #messages >= 3 end, "the second undo's message")
  stop_capture()
  T.eq(messages[3].msg, "(dline) no restore to undo (or a checkpoint was saved since)", "nothing left to undo")
  T.eq(T.read(file), "hello, world\n", "still the task's edit")
end)

S.case(":Dline undo says that the undo changed the file of an unsaved buffer, not the restore", function()
  local s, file, controller = greeted_task()
  local baseline = baseline_of(s, controller)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local file_buf = vim.api.nvim_get_current_buf()
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  T.eq(vim.api.nvim_buf_get_lines(file_buf, 0, -1, false), { "hello" }, "the buffer reloaded")
  vim.api.nvim_buf_set_lines(file_buf, 0, -1, false, { "my own words" })
  vim.cmd("Dline undo")
  T.wait(function() return #messages >= 2 end, "the undo's message")
  stop_capture()
  T.eq(T.read(file), "hello, world\n", "undone")
  T.eq(
    messages[2].msg,
    "(dline) Undo restore: 1 file(s) restored, 0 deleted\nThe undo changed hello.txt on disk, but its buffer has "
      .. "unsaved changes: your buffer was kept (:e! loads the file)",
    "what the undo did, said of the undo"
  )
end)

S.case("with Neovim's own vim.notify, a restore's two-line notice shows as one line: no Press ENTER", function()
  local builtin = vim.notify
  local s, file, controller = greeted_task()
  vim.notify = builtin
  vim.o.columns = 100
  local baseline = baseline_of(s, controller)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "my own words" })
  vim.cmd("messages clear")
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return T.read(file) == "hello\n" end, "the file restored")
  T.wait(function() return vim.fn.execute("messages"):find("(dline) Restore", 1, true) ~= nil end, "the notice")
  local shown = vim.split(vim.trim(vim.fn.execute("messages")), "\n", { plain = true })
  T.eq(#shown, 1, "one line: " .. vim.inspect(shown))
  T.truthy(vim.fn.strdisplaywidth(shown[1]) <= vim.v.echospace, "it fits the command line: " .. shown[1])
  T.matches(
    shown[1],
    "^%(dline%) Restore Files Only: 1 file%(s%) restored.*%[%+1 line: :Dline messages%]$",
    "the summary"
  )
  -- The whole message is there for the asking.
  local whole = vim.fn.execute("Dline messages")
  T.contains(whole, "(dline) Restore Files Only: 1 file(s) restored, 0 deleted", "the summary whole")
  T.contains(whole, "\nThe restore changed hello.txt on disk, but its buffer has unsaved changes", "and the detail")
end)

S.case("a restore says which files it kept as they were (too large to snapshot)", function()
  local s = session()
  -- Over 4 times the 5 MB a checkpoint holds: the baseline leaves it out and no pre-image is kept.
  local big = workspace_file("big.bin", string.rep("x", 21 * 1024 * 1024))
  local notes = workspace_file("notes.md", "notes\n")
  T.configure_model(s, {
    {
      toolCalls = {
        { name = "write_to_file", input = { path = "big.bin", content = "now small\n" } },
        { name = "write_to_file", input = { path = "notes.md", content = "notes, edited\n" } },
      },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "Both written." } } } },
  })
  approve_all()
  local controller = new_task("Shrink the big file")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  T.eq(T.read(notes), "notes\n", "the small file restored")
  T.eq(T.read(big), "now small\n", "the big file left as it is")
  T.eq(
    messages[1].msg,
    "(dline) Restore Files Only: 1 file(s) restored, 0 deleted, 1 kept as they were (:Dline undo puts them back as they were)"
      .. "\nkept as is: too large to snapshot: big.bin",
    "the summary, then what was kept and why, in one message"
  )
  T.eq(messages[1].level, vim.log.levels.WARN, "said as a warning")
end)

S.case(
  "a Files & Task restore whose files cannot be restored says the conversation was restored all the same",
  function()
    local s = session()
    T.configure_model(s, {
      { toolCalls = { { name = "write_to_file", input = { path = "sub/x.txt", content = "x\n" } } } },
      { toolCalls = { { name = "attempt_completion", input = { result = "Written." } } } },
    })
    approve_all()
    local controller = new_task("Write sub/x.txt")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    local turn = vim.tbl_filter(
      function(cp) return cp.kind == "CHECKPOINT_KIND_TURN" end,
      T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
    )[1]
    -- The folder replaced by a file of the person's: sub/x.txt cannot go back.
    local sub = vim.loop.cwd() .. "/sub"
    vim.fn.delete(sub, "rf")
    T.write(sub, "the person's file\n")
    -- Kept here, not shown: an error shown by a callback in a headless Neovim fails the wait.
    local messages, notify = {}, vim.notify
    vim.notify = function(msg, level) table.insert(messages, { msg = msg, level = level }) end
    choose_restore("Restore Files & Task")
    vim.cmd("Dline restore " .. turn.id)
    local ok, err = pcall(T.wait, function() return #messages >= 1 end, "the restore's message")
    vim.notify = notify
    assert(ok, err)
    T.eq(T.read(sub), "the person's file\n", "the person's file left as it is")
    T.contains(
      messages[1].msg,
      "the conversation was restored to the checkpoint, but not the files. Restoring files failed: Cannot restore sub/x.txt",
      "says what was restored and why the files were not"
    )
    T.eq(messages[1].level, vim.log.levels.ERROR, "said as an error")
  end
)

S.case("a restore of the task running here stops it first, and says so", function()
  local s = session()
  -- A command that writes on for a minute: before, a files-only restore left the run going, and
  -- the command wrote over the restored workspace.
  local ticking =
    "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do echo tick >> ticks.txt; sleep 0.005; done"
  T.configure_model(s, {
    { toolCalls = { { name = "execute_command", input = { command = ticking, requires_approval = false } } } },
  })
  approve_all()
  local controller = new_task("Tick")
  local ticks = vim.loop.cwd() .. "/ticks.txt"
  T.wait(function() return vim.loop.fs_stat(ticks) ~= nil end, "the command to write")
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  local summary = "(dline) Restore Files Only (the task was running: stopped first): 0 file(s) restored, 1 deleted"
    .. " (:Dline undo puts them back as they were)"
  local said = function(text)
    for _, m in ipairs(messages) do
      if m.msg:find(text, 1, true) then return true end
    end
    return false
  end
  T.wait(function() return said(summary) end, "the restore's message")
  wait_status(controller, "TASK_STATUS_INTERRUPTED")
  stop_capture()
  -- The restore's own summary says the task stopped; before, a second notice said "its sidecar
  -- stopped", which was wrong.
  T.truthy(not said("its sidecar stopped"), "not that its sidecar stopped: " .. vim.inspect(messages))
  vim.wait(300)
  T.eq(vim.loop.fs_stat(ticks), nil, "nothing the command writes comes back after the restore")
  T.contains(controller.chat:text(), "stopped for a restore to the task's start", "the chat says why it stopped")
end)

S.case("a restore after the task moved the git history says a restore does not undo it", function()
  local s = session()
  local cwd = vim.loop.cwd()
  local function git(args)
    local out = vim.fn.system(vim.list_extend({ "git", "-C", cwd, "-c", "user.name=t", "-c", "user.email=t@t" }, args))
    T.eq(vim.v.shell_error, 0, "git " .. table.concat(args, " ") .. ": " .. out)
    return vim.trim(out)
  end
  if vim.loop.fs_stat(cwd .. "/.git") == nil then git({ "init", "-q" }) end
  local file = workspace_file("a.txt", "one\n")
  git({ "add", "a.txt" })
  git({ "commit", "-qm", "one" })
  T.write(file, "two\n")
  git({ "commit", "-qam", "two" })
  local branch, before = git({ "rev-parse", "--abbrev-ref", "HEAD" }), git({ "rev-parse", "HEAD" })
  T.configure_model(s, {
    {
      toolCalls = {
        { name = "execute_command", input = { command = "git reset -q --hard HEAD~1", requires_approval = false } },
      },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "Reset." } } } },
  })
  approve_all()
  local controller = new_task("Reset")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local after = git({ "rev-parse", "HEAD" })
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  T.eq(T.read(file), "two\n", "the file restored")
  T.contains(
    messages[1].msg,
    ("\nYour git repository moved since this checkpoint (%s at %s then, %s at %s now): a restore puts files back, never commits, branches or the index."):format(
      branch,
      before:sub(1, 8),
      branch,
      after:sub(1, 8)
    ),
    "the note"
  )
end)

S.case("a restore says a command's change of an ignored .env was kept as is (not tracked by checkpoints)", function()
  local s = session()
  workspace_file(".gitignore", ".env\n")
  local env = workspace_file(".env", "SECRET=original\n")
  local notes = workspace_file("notes.md", "notes\n")
  T.configure_model(s, {
    {
      toolCalls = {
        {
          name = "execute_command",
          input = {
            command = "printf 'SECRET=new\\n' > .env && printf 'notes, built\\n' > notes.md",
            requires_approval = false,
          },
        },
      },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "Built." } } } },
  })
  approve_all()
  local controller = new_task("Build")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local baseline = baseline_of(s, controller)
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  T.eq(T.read(notes), "notes\n", "the tracked file restored")
  T.eq(T.read(env), "SECRET=new\n", "the ignored file left as the command left it")
  T.contains(messages[1].msg, ", 1 kept as they were", "counted")
  T.contains(messages[1].msg, "\nkept as is: not tracked by checkpoints: .env", "named, with why")
  T.eq(messages[1].level, vim.log.levels.WARN, "said as a warning")
  -- Many: the first ones by name, then how many more.
  local many = {}
  for i = 1, 23 do
    table.insert(many, { path = "build/f" .. i .. ".js", reason = "KEPT_REASON_NOT_TRACKED" })
  end
  local lines = vim.split(require("dline.checkpoints").kept_lines(many), "\n", { plain = true })
  T.eq(#lines, 21, "twenty names and a count")
  T.eq(lines[21], "kept as is: ...and 3 more", "the count")
  -- The core's look stopped at its limit (a large ignored folder): more may have changed, and it says so.
  local cut = vim.split(require("dline.checkpoints").kept_lines(many, true), "\n", { plain = true })
  T.eq(cut[22], "kept as is: more files the checkpoints do not track may have changed too", "the look's limit")
end)

S.case(
  "a restore's warning about an unsaved buffer stays on screen: one warning with the summary, not replaced",
  function()
    local s, file, controller = greeted_task()
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    local file_buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(file_buf, 0, -1, false, { "my own words" })
    local baseline = baseline_of(s, controller)
    local messages, stop_capture = capture_notices()
    choose_restore("Restore Files Only")
    vim.cmd("Dline restore " .. baseline.id)
    T.wait(function() return T.read(file) == "hello\n" end, "the file restored")
    T.wait(function() return #messages >= 1 end, "the restore's message")
    vim.wait(200)
    stop_capture()
    T.eq(vim.api.nvim_buf_get_lines(file_buf, 0, -1, false), { "my own words" }, "the unsaved buffer is kept")
    local last = messages[#messages]
    T.eq(last.level, vim.log.levels.WARN, "the last message is a warning")
    T.contains(last.msg, "Restore Files Only: 1 file(s) restored", "with the summary")
    T.contains(last.msg, "hello.txt on disk, but its buffer has unsaved changes", "and the unsaved buffer")
  end
)

S.case(
  ":Dline edit with Restore All restores the files and leaves the edited text, unsent, in the chat's input",
  function()
    local s = session()
    local file = workspace_file("hello.txt", "hello\n")
    local server = T.configure_model(s, {
      edit_turns()[1],
      { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting updated." } } } },
    })
    approve_all()
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    T.eq(T.read(file), "hello, world\n", "edited")
    local requests = #T.model_requests(server)
    local messages, stop_capture = capture_notices()
    T.script_select(function(items, opts)
      if opts.kind == "dline.edit_message" then return items[1] end
      if opts.kind == "dline.edit_mode" then
        for _, o in ipairs(items) do
          if o.label == "Restore All" then return o end
        end
      end
      if opts.kind == "dline.restore_all" then return items[1] end
    end)
    T.script_input(function() return "Greet everyone" end)
    -- The sidebar is closed: Restore All opens it to show where the text is.
    require("dline.sidebar").close()
    vim.cmd("Dline edit")
    local input = require("dline.sidebar").input_buffer()
    T.wait(function() return T.buffer_text(input) == "Greet everyone" end, "the edited text in the input area")
    T.wait(function() return T.read(file) == "hello\n" end, "the files restored")
    T.wait(function() return #messages >= 1 end, "the message")
    stop_capture()
    T.contains(messages[#messages].msg, "Restore All: done", "the summary")
    T.contains(messages[#messages].msg, "in the chat's input area, not sent", "says where the text is")
    for _, m in ipairs(messages) do
      T.truthy(not m.msg:find("sidecar stopped", 1, true), "a restore is not said to be a sidecar's stop: " .. m.msg)
    end
    local chat_win, input_win = require("dline.sidebar").windows()
    T.truthy(chat_win and input_win, "the chat and its input area are open")
    T.eq(require("dline.sidebar").current(), controller.chat, "the input area sends to this task")
    vim.wait(300)
    T.eq(#T.model_requests(server), requests, "nothing was sent to the model")
    T.truthy(not controller.chat:text():find("Greet everyone", 1, true), "not in the conversation")
  end
)

S.case("restore files & task rewinds the conversation and the files to a turn's checkpoint", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    {
      text = "First the greeting.",
      toolCalls = {
        {
          name = "replace_in_file",
          input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      },
    },
    {
      text = "Now the notes.",
      toolCalls = { { name = "write_to_file", input = { path = "notes.md", content = "notes\n" } } },
    },
    { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting and notes." } } } },
  })
  approve_all()
  local controller = new_task("Greet and take notes")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local notes = vim.loop.cwd() .. "/notes.md"
  T.eq(T.read(notes), "notes\n", "notes written")
  -- The checkpoint saved after the first turn (the greeting edit).
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
  local turns = vim.tbl_filter(function(cp) return cp.kind == "CHECKPOINT_KIND_TURN" end, cps)
  table.sort(turns, function(a, b) return tonumber(a.createdAt) < tonumber(b.createdAt) end)
  T.truthy(#turns >= 2, "two turn checkpoints")
  T.script_select(function(items, opts)
    if opts.kind == "dline.restore" then return items[1] end
  end)
  vim.cmd("Dline restore " .. turns[1].id)
  T.wait(function()
    local text = controller.chat:text()
    return T.read(notes) == nil
      and not text:find("Now the notes.", 1, true)
      and not text:find("## Task completed", 1, true)
  end, "files and conversation restored")
  T.eq(T.read(file), "hello, world\n", "the first turn's edit is kept")
  T.contains(controller.chat:text(), "First the greeting.", "the conversation up to the checkpoint is kept")
end)

--- A completed task that ran a command with no output (`true`), edited hello.txt, wrote
--- notes.md and completed: a checkpoint after each step.
local function notes_task()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    { text = "Looking first.", toolCalls = { { name = "execute_command", input = { command = "true" } } } },
    {
      toolCalls = {
        {
          name = "replace_in_file",
          input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      },
    },
    { toolCalls = { { name = "write_to_file", input = { path = "notes.md", content = "notes\n" } } } },
    { toolCalls = { { name = "attempt_completion", input = { result = "Greeting and notes." } } } },
  })
  approve_all()
  local controller = new_task("Greet and take notes")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
  --- The checkpoint whose edited paths are `path`'s.
  local function edited(path)
    for _, cp in ipairs(cps) do
      if cp.kind == "CHECKPOINT_KIND_TURN" and (cp.editedPaths or {})[1] == path then return cp end
    end
    T.fail("no turn checkpoint edited " .. path)
  end
  return s, file, controller, edited
end

S.case("the checkpoint picker says of each checkpoint what it follows, when, and which files it edited", function()
  local _, _, _, edited = notes_task()
  local listed
  T.script_select(function(_, opts, entry)
    if opts.kind == "dline.checkpoint" then listed = entry.labels end
  end)
  vim.cmd("Dline restore")
  T.wait(function() return listed ~= nil end, "the checkpoint picker")
  local text = table.concat(listed, "\n")
  local greeting = edited("hello.txt").id:sub(1, 8)
  T.matches(
    text,
    greeting .. "  %d%d:%d%d:%d%d  turn after replace_in_file hello%.txt · 1 file edited: hello%.txt\n",
    "a turn: the tool step it follows and the file it edited"
  )
  T.matches(text, "  turn after write_to_file notes%.md · 1 file edited: notes%.md\n", "the next step")
  T.matches(text, "  turn after %$ true\n", "a command's step")
  T.matches(listed[1], '  completion "Greeting and notes%."$', "the completion, by its text")
  T.matches(listed[#listed], "  baseline before the task's first change$", "the baseline")
  for _, label in ipairs(listed) do
    T.truthy(not label:match("  turn$"), "no entry is only its kind: " .. label)
  end
end)

S.case("a command that printed nothing says so in the chat, not that it has 2 lines of output", function()
  local _, _, controller = notes_task()
  local text = controller.chat:text()
  T.contains(text, "### $ true  [done]\n  no output · Exit code: 0\n── checkpoint ", "no output, said")
  T.truthy(not text:find("No output.", 1, true), "not as output lines (folded as 2 lines of output)")
end)

S.case(
  "after a restore the chat's markers keep their kind and show the checkpoint restored to, reopened too",
  function()
    local _, _, controller, edited = notes_task()
    local greeting = edited("hello.txt").id:sub(1, 8)
    choose_restore("Restore Files & Task")
    vim.cmd("Dline restore " .. greeting)
    local marker = "── checkpoint " .. greeting .. " (turn, restored)"
    -- The status too: it may come after the rewind, and the reloaded chat's header has it.
    T.wait(function()
      local text = controller.chat:text()
      return not text:find("## Task completed", 1, true)
        and text:find(marker, 1, true) ~= nil
        and controller.status == "TASK_STATUS_INTERRUPTED"
    end, "the restored-to marker and the status")
    local text = controller.chat:text()
    T.matches(text, "### %$ true  %[done%]\n[^#]-── checkpoint %x+ %(turn%)\n", "the kind kept")
    T.truthy(not text:find("── checkpoint %x+\n"), "no marker without its kind:\n" .. text)
    -- Read back again (GetTask gives only the ids): the same markers.
    local loaded = false
    controller:reload(function() loaded = true end)
    T.wait(function() return loaded end, "the reload")
    local same = pcall(T.wait, function() return controller.chat:text() == text end, "the same chat after the reload")
    if not same then
      T.fail("not the same chat after the reload; live:\n" .. text .. "\nreloaded:\n" .. controller.chat:text())
    end
  end
)

S.case("a message sent while the model streams shows at once as queued, then in the conversation", function()
  local s = session()
  T.configure_model(s, {
    {
      text = string.rep("slow ", 80),
      textChunkChars = 5,
      writeDelayMs = 40,
      toolCalls = { { name = "attempt_completion", input = { result = "First done." } } },
    },
    { text = "On it.", toolCalls = { { name = "attempt_completion", input = { result = "Tests added." } } } },
  })
  approve_all()
  local controller = new_task("Write the code")
  T.wait(function() return controller.chat:text():find("slow slow", 1, true) ~= nil end, "the answer to stream")
  T.eq(controller.status, "TASK_STATUS_RUNNING", "still running")
  local input = require("dline.sidebar").input_buffer()
  vim.api.nvim_buf_set_lines(input, 0, -1, false, { "and add tests" })
  require("dline.sidebar").send(controller.chat)
  T.eq(T.buffer_text(input), "", "the input area is cleared")
  T.contains(
    controller.chat:text(),
    "## You (queued: sent when the current turn ends)\nand add tests",
    "shown at once as queued"
  )
  T.truthy(not controller.chat:text():find("First done.", 1, true), "while the turn still streams")
  T.wait(function() return controller.chat:text():find("Tests added.", 1, true) ~= nil end, "the queued message's turn")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local text = controller.chat:text()
  T.contains(text, "## You\nand add tests", "in the conversation")
  T.truthy(not text:find("queued", 1, true), "no longer queued")
end)

S.case("a paragraph taller than the chat window streams in view: its end shows, not a blank window", function()
  T.fail_on_error_notices()
  require("dline").setup({ chat = { position = "right", width = 40 } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  local words = {}
  for i = 1, 400 do
    words[i] = "word" .. i
  end
  -- One paragraph of ~3,000 characters (about 80 lines at 40 columns: taller than the
  -- window), then the model stalls mid-answer, as one writing a long paragraph does.
  local paragraph = table.concat(words, " ") .. " PARAGRAPH-END"
  T.configure_model(s, {
    {
      text = "Intro.\n\n" .. paragraph,
      textChunkChars = 500,
      interrupt = { afterFrames = 9, mode = "stall" },
    },
  })
  local controller = new_task("Write a long paragraph")
  T.wait(function() return controller.chat:text():find("PARAGRAPH-END", 1, true) ~= nil end, "the paragraph to stream")
  T.eq(controller.status, "TASK_STATUS_RUNNING", "still streaming")
  local win = controller.chat:window()
  vim.cmd("redraw")
  local lines = vim.api.nvim_buf_get_lines(controller.chat.buf, 0, -1, false)
  local at
  for i, line in ipairs(lines) do
    if line:find("PARAGRAPH-END", 1, true) then at = i end
  end
  T.truthy(
    vim.fn.screenpos(win, at, #lines[at]).row > 0,
    ("the paragraph's end is on screen (window lines %d-%d, paragraph at %d)"):format(
      vim.fn.line("w0", win),
      vim.fn.line("w$", win),
      at
    )
  )
  vim.cmd("Dline cancel")
  wait_status(controller, "TASK_STATUS_CANCELLED")
end)

S.case(":bd of the chat buffer mid-task: the task goes on, and :Dline chat shows the whole chat again", function()
  T.fail_on_error_notices()
  require("dline").setup({ chat = { position = "right", width = 60 } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  workspace_file("notes.txt", "one\n")
  T.configure_model(s, {
    {
      text = "Adding a line.",
      toolCalls = { { name = "write_to_file", input = { path = "notes.txt", content = "one\ntwo\n" } } },
    },
    { toolCalls = { { name = "attempt_completion", input = { result = "Added two." } } } },
  })
  require("dline").config().prompt_on_ask = false
  local controller = new_task("Add a line two")
  wait_status(controller, "TASK_STATUS_WAITING")
  local function count(text, needle)
    local n, at = 0, 1
    while true do
      local found = text:find(needle, at, true)
      if not found then return n end
      n, at = n + 1, found + 1
    end
  end
  -- Both sidebar buffers deleted, as a person does from the chat and from the input area.
  vim.api.nvim_set_current_win(controller.chat:window())
  vim.cmd("bdelete")
  vim.cmd("bdelete " .. require("dline.sidebar").input_buffer())
  T.eq(controller.chat:window(), nil, "the chat's window closed")
  vim.cmd("Dline approve")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(T.read(vim.loop.cwd() .. "/notes.txt"), "one\ntwo\n", "the task went on")
  vim.cmd("Dline chat")
  local buf = vim.api.nvim_get_current_buf()
  T.eq(buf, controller.chat.buf, "the chat is shown")
  local text = T.buffer_text(buf)
  T.eq(count(text, "## You\nAdd a line two"), 1, "the prompt, once:\n" .. text)
  T.eq(count(text, "### write_to_file notes.txt"), 1, "the edit's row, once:\n" .. text)
  T.contains(text, "## Task completed\nAdded two.", "what came after the :bd")
  T.eq(vim.bo[buf].buftype, "nofile", "still a chat buffer, not a file to write")
  T.eq(vim.bo[buf].modified, false, "nothing to save")
  T.eq(vim.b[buf].dline_task_id, controller.task_id, "its task")
  T.truthy(vim.fn.maparg("ga", "n") ~= "", "its keymaps")
  local _, input_win = require("dline.sidebar").windows()
  T.truthy(input_win, "the input area below it")
  vim.api.nvim_set_current_win(input_win)
  T.truthy(vim.fn.maparg("<CR>", "n") ~= "", "the input area's keymaps")
  T.eq(vim.bo.buftype, "nofile", "the input area is not a file to write")
end)

S.case("compare of a CRLF file shows the line that changed, not every line; it leaves no empty buffers", function()
  local s = session()
  local file = workspace_file("win.txt", "one\r\ntwo\r\nthree\r\n")
  T.configure_model(s, {
    {
      toolCalls = {
        {
          name = "replace_in_file",
          input = { path = "win.txt", diff = "------- SEARCH\ntwo\n=======\nTWO\n+++++++ REPLACE" },
        },
      },
    },
    { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Shouted." } } } },
  })
  approve_all()
  local controller = new_task("Shout the second line")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(T.read(file), "one\r\nTWO\r\nthree\r\n", "edited, CRLF kept")
  local function unnamed()
    return #vim.tbl_filter(function(info) return info.name == "" end, vim.fn.getbufinfo({ buflisted = 1 }))
  end
  local listed, unnamed_before = #vim.fn.getbufinfo({ buflisted = 1 }), unnamed()
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Dline compare " .. baseline_of(s, controller).id)
  T.wait(function() return #vim.api.nvim_list_tabpages() == tabs + 1 end, "the compare tab")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  T.eq(#wins, 2, "two windows")
  local before, now = vim.api.nvim_win_get_buf(wins[1]), vim.api.nvim_win_get_buf(wins[2])
  T.eq(vim.api.nvim_buf_get_name(now), file, "the file's own buffer")
  T.eq(vim.bo[now].fileformat, "dos", "read as a CRLF file")
  T.eq(vim.api.nvim_buf_get_lines(before, 0, -1, false), { "one", "two", "three" }, "the checkpoint's lines, no ^M")
  local changed = {}
  vim.api.nvim_win_call(wins[2], function()
    for lnum = 1, 3 do
      if vim.fn.diff_hlID(lnum, 1) ~= 0 then table.insert(changed, lnum) end
    end
  end)
  T.eq(changed, { 2 }, "only the line that changed differs")
  -- The tab's own buffers and the file's: no "[No Name]" left behind by opening the tab.
  T.eq(#vim.fn.getbufinfo({ buflisted = 1 }), listed + 1, "one more listed buffer: the file's")
  T.eq(unnamed(), unnamed_before, "no empty unnamed buffer added")
end)

S.case("a restore closes the task's compare tabs, out of date, and the buffer of a file it deleted", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    edit_turns()[1],
    { toolCalls = { { name = "write_to_file", input = { path = "notes.md", content = "notes\n" } } } },
    { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting and notes." } } } },
  })
  approve_all()
  local controller = new_task("Greet and take notes")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local notes = vim.loop.cwd() .. "/notes.md"
  T.eq(T.read(notes), "notes\n", "notes written")
  local baseline = baseline_of(s, controller)
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Dline compare " .. baseline.id)
  T.wait(function() return #vim.api.nvim_list_tabpages() == tabs + 2 end, "a diff tab per changed file")
  T.truthy(vim.fn.bufloaded(notes) == 1, "the new file's buffer, loaded by its tab")
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  T.eq(T.read(file), "hello\n", "restored")
  T.eq(T.read(notes), nil, "the new file deleted")
  T.eq(#vim.api.nvim_list_tabpages(), tabs, "the compare tabs are closed")
  T.eq(vim.fn.bufexists(notes), 0, "no empty buffer left for the deleted file (:w would write it again)")
  T.contains(messages[1].msg, "its 2 compare tab(s) closed", "said so")
end)

S.case("without 'hidden', a restore leaves open a compare tab where you typed, and says what it did", function()
  local s = session()
  vim.o.hidden = false
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    edit_turns()[1],
    { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Greeting updated." } } } },
  })
  approve_all()
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local baseline = baseline_of(s, controller)
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("Dline compare " .. baseline.id)
  T.wait(function() return #vim.api.nvim_list_tabpages() == tabs + 1 end, "the compare tab")
  -- You type in the file's side of the compare tab.
  local buf = vim.api.nvim_get_current_buf()
  T.eq(vim.api.nvim_buf_get_name(buf), file, "the file's own buffer")
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "my own line" })
  local messages, stop_capture = capture_notices()
  choose_restore("Restore Files Only")
  vim.cmd("Dline restore " .. baseline.id)
  -- The restore's answer comes in a callback: an error there (E37 from :tabclose) is printed
  -- with its stack trace by Neovim, and the restore's message never shows.
  T.wait(function() return #messages >= 1 end, "the restore's message")
  stop_capture()
  T.eq(T.read(file), "hello\n", "restored")
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "hello, world", "my own line" }, "your text kept")
  T.eq(#vim.api.nvim_list_tabpages(), tabs + 1, "the compare tab with your text stays open")
  T.contains(messages[1].msg, "Restore Files Only: 1 file(s) restored", "the restore's message")
  T.contains(messages[1].msg, "your buffer was kept", "what became of your buffer")
  T.contains(messages[1].msg, "1 compare tab(s) stay open: they show your unsaved changes", "why the tab stays")
end)

S.case(
  "a restore that deletes files you have open: an unchanged buffer is closed, your unsaved text is kept, marked",
  function()
    local s = session()
    T.configure_model(s, {
      { toolCalls = { { name = "write_to_file", input = { path = "notes.md", content = "notes\n" } } } },
      { toolCalls = { { name = "write_to_file", input = { path = "todo.md", content = "todo\n" } } } },
      { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = "Notes and todo." } } } },
    })
    approve_all()
    local controller = new_task("Take notes")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    local notes, todo = vim.loop.cwd() .. "/notes.md", vim.loop.cwd() .. "/todo.md"
    T.eq(T.read(notes), "notes\n", "notes written")
    local baseline = baseline_of(s, controller)
    -- notes.md shown as it is on disk; todo.md shown with unsaved changes.
    vim.cmd("only")
    vim.cmd("edit " .. vim.fn.fnameescape(notes))
    local notes_win = vim.api.nvim_get_current_win()
    vim.cmd("vsplit " .. vim.fn.fnameescape(todo))
    local todo_buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(todo_buf, 0, -1, false, { "todo", "my unsaved line" })
    local windows = #vim.api.nvim_list_wins()
    local messages, stop_capture = capture_notices()
    choose_restore("Restore Files Only")
    vim.cmd("Dline restore " .. baseline.id)
    T.wait(function() return #messages >= 1 end, "the restore's message")
    stop_capture()
    T.eq(T.read(notes), nil, "notes.md deleted")
    T.eq(T.read(todo), nil, "todo.md deleted")
    -- The unchanged buffer: wiped, its window kept (showing another buffer).
    T.eq(vim.fn.bufexists(notes), 0, "no empty buffer left for notes.md (:w would write it, empty)")
    T.eq(#vim.api.nvim_list_wins(), windows, "no window closed")
    T.truthy(vim.api.nvim_win_is_valid(notes_win), "its window stays")
    T.truthy(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(notes_win)) ~= notes, "showing another buffer")
    T.contains(messages[1].msg, "The restore deleted notes.md: its buffer (no unsaved changes) was closed", "said so")
    -- The buffer with unsaved changes: kept with its text, marked as not on disk.
    T.truthy(vim.api.nvim_buf_is_valid(todo_buf), "the unsaved buffer is kept")
    T.eq(T.buffer_text(todo_buf), "todo\nmy unsaved line", "with its text")
    T.truthy(vim.bo[todo_buf].modified, "still unsaved")
    T.eq(vim.b[todo_buf].dline_not_on_disk, true, "marked as not on disk")
    local ns = vim.api.nvim_create_namespace("dline_not_on_disk")
    local marks = vim.api.nvim_buf_get_extmarks(todo_buf, ns, 0, -1, { details = true })
    T.eq(#marks, 1, "a mark in the buffer")
    T.contains(marks[1][4].virt_text[1][1], "not on disk", "that says so")
    T.eq(messages[1].level, vim.log.levels.WARN, "a warning")
    T.contains(
      messages[1].msg,
      "The restore deleted todo.md, but its buffer has unsaved changes: your text was kept, marked as not on disk",
      "said so"
    )
    T.truthy(not messages[1].msg:find(":e! loads the file", 1, true), "not told to load a file that is gone")
    -- Saving everything writes no empty file: only your text, as the file again.
    vim.cmd("wall")
    T.eq(T.read(notes), nil, "notes.md not written again")
    T.eq(T.read(todo), "todo\nmy unsaved line\n", "todo.md written with your text")
    T.eq(vim.b[todo_buf].dline_not_on_disk, nil, "no longer marked once saved")
    T.eq(#vim.api.nvim_buf_get_extmarks(todo_buf, ns, 0, -1, {}), 0, "the mark is gone")
  end
)

S.case(
  ":qa while a task waits for an answer is refused like unsaved changes, and says why; not once it is done",
  function()
    local s = session()
    T.configure_model(s, edit_turns())
    local answer
    T.script_select(function(_, opts)
      if opts.kind == "dline.approval" then return answer end
      if opts.kind == "dline.followup" then return "casual" end
    end)
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_WAITING")
    local code_buf = vim.api.nvim_get_current_buf()
    local messages, stop_capture = capture_notices()
    local ok, err = pcall(vim.cmd, "qa")
    T.truthy(not ok, ":qa is refused")
    T.contains(tostring(err), "E37", "as for unsaved changes")
    T.wait(function() return #messages >= 1 end, "why")
    stop_capture()
    T.eq(messages[1].level, vim.log.levels.WARN, "a warning")
    T.contains(
      messages[1].msg,
      require("dline.ids").short(controller.task_id) .. " (waiting for you)",
      "names the task"
    )
    T.contains(messages[1].msg, ":qa! quits anyway", "how to quit anyway")
    T.eq(vim.api.nvim_get_current_buf(), code_buf, "the window shows what it showed")
    local function unsaved()
      return vim.tbl_map(
        function(b) return b.name end,
        vim.tbl_filter(function(b) return b.changed == 1 end, vim.fn.getbufinfo())
      )
    end
    T.eq(unsaved(), {}, "nothing is left marked unsaved")
    -- Once it is done, nothing holds a quit back.
    answer = ask.APPROVE
    require("dline.task").current():answer("approve")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    vim.api.nvim_exec_autocmds("ExitPre", {})
    T.eq(unsaved(), {}, "a completed task: nothing to hold the quit")
  end
)

S.case(
  "typed :wqa, :xa, :wq and :x while a task waits save your files but do not quit (on 0.7 too), and name the task",
  function()
    local s = session()
    T.configure_model(s, edit_turns())
    T.script_select(function() return nil end) -- the approval stays unanswered
    local notes = workspace_file("notes.txt", "notes\n")
    vim.cmd("edit " .. vim.fn.fnameescape(notes))
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_WAITING")
    vim.cmd("only")
    vim.cmd("edit " .. vim.fn.fnameescape(workspace_file("other.txt", "other\n")))
    local alternate = vim.api.nvim_get_current_buf()
    vim.cmd("buffer " .. vim.fn.bufnr(notes))
    local code_buf = vim.api.nvim_get_current_buf()
    -- Had Neovim quit, the case would end without passing: say why.
    local leaving = vim.api.nvim_create_autocmd("VimLeavePre", {
      callback = function() io.stderr:write("Neovim quit on a typed quit command while a task waited\n") end,
    })
    local short = require("dline.ids").short(controller.task_id)
    for _, command in ipairs({ "wqa", "xa", "wq", "x", "silent wqall" }) do
      vim.api.nvim_buf_set_lines(code_buf, 0, -1, false, { "notes before " .. command })
      local messages, stop_capture = capture_notices()
      vim.api.nvim_feedkeys(":" .. command .. "\r", "tx", false)
      T.wait(function() return #messages >= 1 end, "why :" .. command .. " did not quit")
      stop_capture()
      T.eq(messages[1].level, vim.log.levels.WARN, ":" .. command .. ": a warning")
      T.contains(messages[1].msg, short .. " (waiting for you)", ":" .. command .. " names the task")
      T.contains(messages[1].msg, ":qa! quits anyway", "how to quit anyway")
      T.eq(T.read(notes), "notes before " .. command .. "\n", ":" .. command .. " saved the file")
      T.eq(vim.api.nvim_get_current_buf(), code_buf, "the window shows what it showed")
      T.eq(vim.fn.bufnr("#"), alternate, "CTRL-^ after :" .. command .. " goes where it went")
      local unsaved = vim.tbl_filter(function(b) return b.changed == 1 end, vim.fn.getbufinfo())
      T.eq(#unsaved, 0, "nothing is left marked unsaved after :" .. command)
      T.eq(controller.status, "TASK_STATUS_WAITING", "the task still waits")
    end
    vim.api.nvim_del_autocmd(leaving)
  end
)

return S
