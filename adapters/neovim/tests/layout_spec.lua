-- The chat as a Neovim user lives with it, through the real sidecar: one sidebar whatever the
-- number of tasks, :Dline toggle, the chat's keymaps, a task interrupted by a sidecar death
-- shown as such with Resume (and its stale question cleared), resume not offered for a
-- completed task, short ids that differ, short checkpoint lines, a restored chat that shows
-- its messages, checkpoints unavailable in the home folder said up front, and a sidebar that
-- follows the terminal's size.
local T = require("dline_test")
local ask = require("dline.ask")
local S = T.suite()

local function session(opts)
  T.fail_on_error_notices()
  require("dline").setup(opts or {})
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  return s
end

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

local function done(result)
  return { text = "Done.", toolCalls = { { name = "attempt_completion", input = { result = result or "Done." } } } }
end

local function capture_notices()
  local notices = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notices, msg)
    return notify(msg, level)
  end
  return notices
end

local function press(keys) vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false) end

S.case(
  "the chat sidebar follows the terminal's size: never more than half of it, its width back when there is room",
  function()
    vim.o.columns, vim.o.lines = 200, 50
    require("dline").setup({})
    local code_win = vim.api.nvim_get_current_win()
    require("dline.sidebar").show(require("dline.chat").new("00000000-resize"))
    local chat_win = require("dline.sidebar").windows()
    local width = vim.api.nvim_win_get_width
    local function resize(columns)
      vim.o.columns = columns
      vim.cmd("doautocmd VimResized")
    end
    T.eq(width(chat_win), 80, "the configured width")
    resize(100)
    T.eq(width(chat_win), 50, "100 columns: half for the chat")
    T.eq(width(code_win), 49, "100 columns: the code keeps the other half")
    resize(60)
    T.eq({ width(chat_win), width(code_win) }, { 30, 29 }, "60 columns: both usable")
    resize(200)
    T.eq({ width(chat_win), width(code_win) }, { 80, 119 }, "200 columns: the configured width again")
    -- Opened in a narrow terminal, it takes half as well.
    require("dline.sidebar").close()
    resize(90)
    require("dline.sidebar").show(require("dline.chat").new("00000000-resize2"))
    T.eq(width((require("dline.sidebar").windows())), 45, "opened at 90 columns")
  end
)

S.case("a chat below the code has the configured height, also once its input area is split off", function()
  vim.o.columns, vim.o.lines = 120, 50
  require("dline").setup({ chat = { position = "below", height = 12, input_height = 3 } })
  local code_win = vim.api.nvim_get_current_win()
  require("dline.sidebar").show(require("dline.chat").new("00000000-below"))
  local chat_win, input_win = require("dline.sidebar").windows()
  local height = vim.api.nvim_win_get_height
  T.eq(height(chat_win), 12, "the configured height")
  T.eq(height(input_win), 3, "the input area's")
  T.truthy(height(code_win) > 12, "the code has the rest: " .. height(code_win))
  -- A split of the code leaves the chat as it is.
  vim.api.nvim_set_current_win(code_win)
  vim.cmd("split")
  T.eq(height(chat_win), 12, "after a split of the code")
end)

S.case("five tasks share one chat sidebar and one input area: the window count stays the same", function()
  vim.o.columns, vim.o.lines = 200, 50
  local s = session()
  local turns = {}
  for i = 1, 5 do
    table.insert(turns, done("task " .. i))
  end
  T.configure_model(s, turns)
  vim.cmd("edit " .. vim.fn.fnameescape(vim.loop.cwd() .. "/main.txt"))
  local counts, widths, ids = {}, {}, {}
  for i = 1, 5 do
    local controller = new_task("task number " .. i)
    wait_status(controller, "TASK_STATUS_COMPLETED")
    table.insert(counts, #vim.api.nvim_tabpage_list_wins(0))
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_buf(win) == controller.chat.buf then
        table.insert(widths, vim.api.nvim_win_get_width(win))
      end
    end
    -- The id in the chat's header.
    ids[vim.api.nvim_buf_get_lines(controller.chat.buf, 0, 1, false)[1]:match("^# Dline (%S+)")] = true
    -- The user goes back to their file between tasks.
    vim.cmd("wincmd t")
  end
  T.eq(counts, { 3, 3, 3, 3, 3 }, "windows after each task: the file, the chat, the input")
  T.eq(widths, { 80, 80, 80, 80, 80 }, "the chat keeps its width")
  T.eq(vim.tbl_count(ids), 5, "five different short ids")
  local chat_win, input_win = require("dline.sidebar").windows()
  T.truthy(input_win, "one input area")
  T.contains(T.buffer_text(vim.api.nvim_win_get_buf(chat_win)), "task number 5", "the sidebar shows the last task")
  -- q in the chat closes the sidebar, input area included; :Dline toggle brings it back.
  vim.api.nvim_set_current_win(chat_win)
  press("q")
  T.eq(#vim.api.nvim_tabpage_list_wins(0), 1, "the sidebar closed, its input too")
  vim.cmd("Dline toggle")
  T.eq(#vim.api.nvim_tabpage_list_wins(0), 3, "toggled open")
  vim.cmd("Dline toggle")
  T.eq(#vim.api.nvim_tabpage_list_wins(0), 1, "toggled closed")
  -- Closing the chat window with :close takes the input area with it.
  vim.cmd("Dline toggle")
  chat_win = require("dline.sidebar").windows()
  vim.api.nvim_win_close(chat_win, false)
  T.wait(function() return #vim.api.nvim_tabpage_list_wins(0) == 1 end, "the input area to close with the chat")
end)

S.case(
  "after a sidecar death the waiting task shows as interrupted with Resume, its question cleared; R resumes it",
  function()
    local s = session({ chat = { position = "current" } })
    local file = vim.loop.cwd() .. "/hello.txt"
    T.write(file, "hello\n")
    local replace = {
      name = "replace_in_file",
      input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
    }
    T.configure_model(
      s,
      { { text = "Editing.", toolCalls = { replace } }, { text = "Again.", toolCalls = { replace } }, done() }
    )
    require("dline").config().prompt_on_ask = false
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_WAITING")
    T.contains(controller.chat:text(), ">> Approve replace_in_file hello.txt?", "the question")
    local old = s.sidecar:pid()
    vim.loop.kill(old, "sigkill")
    wait_status(controller, "TASK_STATUS_INTERRUPTED")
    T.eq(controller.pending_ask, nil, "the stale question is cleared")
    local text = controller.chat:text()
    T.truthy(not text:find(">> Approve", 1, true), "no approval offered any more")
    T.contains(text, "R (or :Dline resume) continues", "the Resume action")
    T.matches(vim.api.nvim_buf_get_lines(controller.chat.buf, 0, 1, false)[1], "interrupted", "the header")
    local notices = capture_notices()
    vim.cmd("Dline approve")
    T.contains(
      notices[#notices],
      "is interrupted: its sidecar stopped before it finished; nothing waits for an answer. R in its chat (or :Dline resume) continues it",
      "approve explains"
    )
    -- R in the chat resumes; the repeated edit is approved with ga.
    vim.api.nvim_set_current_buf(controller.chat.buf)
    press("R")
    wait_status(controller, "TASK_STATUS_WAITING", 40000)
    vim.api.nvim_set_current_buf(controller.chat.buf)
    press("ga")
    wait_status(controller, "TASK_STATUS_COMPLETED", 40000)
    T.eq(T.read(file), "hello, world\n", "the edit made after the resume")
  end
)

S.case(
  "resume is not offered for a completed task, and :Dline resume does not send the model an empty request",
  function()
    local s = session({ chat = { position = "current" } })
    local server = T.configure_model(s, { done("all done") })
    local controller = new_task("finish at once")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    local actions
    T.script_select(function(items, opts, entry)
      if opts.kind == "dline.history" then return items[1] end
      if opts.kind == "dline.history_action" then actions = entry.labels end
    end)
    vim.cmd("Dline history")
    T.wait(function() return actions ~= nil end, "the history actions")
    T.eq(actions, { "Open", "Toggle favourite", "Delete" }, "no Resume for a completed task")
    local notices = capture_notices()
    vim.cmd("Dline resume")
    T.contains(notices[#notices], "is completed: send a message to continue it", "what to do instead")
    vim.cmd("Dline resume " .. require("dline.ids").short(controller.task_id))
    T.wait(function() return #notices >= 2 end, "the second answer")
    T.contains(notices[#notices], "is completed", "the short id names it too")
    T.eq(#T.model_requests(server), 1, "no request was sent")
  end
)

S.case("a task rewound to before its first message is listed as an untitled task", function()
  local s = session({ chat = { position = "current" } })
  T.configure_model(s, { done("all done") })
  local controller = new_task("Write the notes")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local first = T.call(s, "TaskService", "GetTask", { taskId = controller.task_id }).messages[1]
  -- Restore All of the first message, edited (as :Dline edit does): the task has no message left.
  T.call(s, "CheckpointService", "EditMessage", {
    taskId = controller.task_id,
    messageId = first.id,
    text = "Write other notes",
    mode = "EDIT_MESSAGE_MODE_RESTORE_ALL",
  })
  local listed, prompt
  T.script_select(function(items, opts)
    if opts.kind == "dline.history" then
      listed = opts.format_item(items[1])
      return items[1]
    end
    if opts.kind == "dline.history_action" then
      prompt = opts.prompt
      return nil
    end
  end)
  vim.cmd("Dline history")
  T.wait(function() return prompt ~= nil end, "the history actions")
  -- Before, an empty title left a blank where the title goes.
  T.contains(listed, "(untitled task)", "the history row")
  T.truthy(not listed:find("Write the notes", 1, true), "not the old first message: " .. listed)
  T.contains(prompt, "(untitled task)", "the actions' prompt")
end)

S.case("checkpoint lines fit the chat, and a restore shows the restored chat in an unfocused window", function()
  -- A terminal with room for the chat's configured 80 columns (it takes at most half).
  vim.o.columns, vim.o.lines = 200, 50
  local s = session()
  local file = vim.loop.cwd() .. "/hello.txt"
  T.write(file, "hello\n")
  local turns = {}
  for i = 1, 6 do
    table.insert(turns, {
      text = ("Step %d.\n%s"):format(i, string.rep("A long line of text that fills the chat. ", 3)),
      toolCalls = { { name = "write_to_file", input = { path = "hello.txt", content = ("step %d\n"):format(i) } } },
    })
  end
  table.insert(turns, done())
  T.configure_model(s, turns)
  T.script_select(function(items, opts)
    if opts.kind == "dline.approval" then return ask.APPROVE end
    if opts.kind == "dline.restore" then return items[1] end
  end)
  vim.cmd("edit " .. vim.fn.fnameescape(vim.loop.cwd() .. "/other.txt"))
  local controller = new_task("Six steps")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local chat_win = require("dline.sidebar").windows()
  T.truthy(
    chat_win,
    ("the chat window (tab %d of %d: %s)"):format(
      vim.fn.tabpagenr(),
      vim.fn.tabpagenr("$"),
      table.concat(
        vim.tbl_map(
          function(w) return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) end,
          vim.api.nvim_tabpage_list_wins(0)
        ),
        ", "
      )
    )
  )
  local width = vim.api.nvim_win_get_width(chat_win)
  local markers = 0
  for _, line in ipairs(vim.api.nvim_buf_get_lines(controller.chat.buf, 0, -1, false)) do
    if line:find("── checkpoint", 1, true) then
      markers = markers + 1
      T.truthy(vim.fn.strdisplaywidth(line) < width / 2, "a short checkpoint line: " .. line)
    end
  end
  T.truthy(markers >= 6, "a marker per checkpoint")
  -- Focus elsewhere, scroll the chat to its end, then Restore Files & Task to the first turn.
  vim.cmd("wincmd t")
  local cps = T.call(s, "CheckpointService", "ListCheckpoints", { taskId = controller.task_id }).checkpoints
  table.sort(cps, function(a, b) return tonumber(a.createdAt) < tonumber(b.createdAt) end)
  local first_turn
  for _, cp in ipairs(cps) do
    if cp.kind == "CHECKPOINT_KIND_TURN" then
      first_turn = cp
      break
    end
  end
  vim.cmd("Dline restore " .. first_turn.id)
  T.wait(function()
    local text = controller.chat:text()
    return text:find("Step 1.", 1, true) ~= nil and not text:find("Step 2.", 1, true)
  end, "the conversation restored")
  vim.cmd("redraw")
  local top = vim.fn.line("w0", chat_win)
  local bottom = vim.fn.line("w$", chat_win)
  local shown = table.concat(vim.api.nvim_buf_get_lines(controller.chat.buf, top - 1, bottom, false), "\n")
  T.contains(shown, "Step 1.", "the unfocused chat window shows the restored messages")
end)

S.case("a task in the home folder says at once that checkpoints are unavailable there", function()
  local s = session({ chat = { position = "current" } })
  T.configure_model(s, { done() })
  vim.cmd("cd " .. vim.fn.fnameescape(vim.env.HOME))
  local controller = new_task("work in home")
  T.wait(
    function() return controller.chat:text():find("checkpoints unavailable", 1, true) ~= nil end,
    "the notice in the chat header"
  )
  wait_status(controller, "TASK_STATUS_COMPLETED")
  local header = table.concat(vim.api.nvim_buf_get_lines(controller.chat.buf, 0, 4, false), "\n")
  T.contains(header, "checkpoints unavailable", "still in the header")
end)

S.case("quitting Neovim while a task streams stops the sidecar cleanly: no error in either log", function()
  local server = T.model_server({
    apiKey = T.TEST_KEY,
    loop = true,
    turns = { { text = string.rep("slow ", 200), textChunkChars = 5, writeDelayMs = 50 } },
  })
  local script = T.base() .. "/quit.lua"
  T.write(
    script,
    table.concat({
      "require('dline').setup({ chat = { position = 'current' } })",
      "vim.cmd('Dline new talk slowly')",
      "vim.wait(20000, function() local c = require('dline.task').current(); return c ~= nil and c.chat:text():find('slow slow', 1, true) ~= nil end, 20)",
      "io.stdout:write('STREAMING ' .. tostring(require('dline').session().sidecar:pid()) .. '\\n')",
      "vim.cmd('qa!')",
    }, "\n")
  )
  local env =
    { "OPENAI_BASE_URL=" .. server.url .. "/v1", "OPENAI_MODEL=scripted-model", "OPENAI_API_KEY=" .. T.TEST_KEY }
  local init = T.repo_root() .. "/adapters/neovim/tests/minimal_init.lua"
  local out = T.sh(
    ("env %s %s --headless --clean -u %s -c 'luafile %s'"):format(
      table.concat(env, " "),
      vim.fn.shellescape(vim.env.DLINE_TEST_NVIM or vim.v.progpath),
      vim.fn.shellescape(init),
      vim.fn.shellescape(script)
    )
  )
  local pid = tonumber(out:match("STREAMING (%d+)"))
  T.truthy(pid, "the task streamed before the quit: " .. out)
  T.wait(function() return not T.alive(pid) end, "the sidecar to exit")
  local core_log = T.read(vim.env.DLINE_HOME_DIR .. "/logs/dline-core.log") or ""
  local plugin_log = T.read(vim.fn.stdpath("cache") .. "/dline/dline.log") or ""
  T.contains(core_log, '"reason":"stdin closed"', "the sidecar stopped because the editor went away")
  for name, text in pairs({ core = core_log, plugin = plugin_log }) do
    T.truthy(not text:find("destroyed", 1, true), name .. " log: no write after a stream was destroyed")
    T.truthy(
      not text:find('"level":"error"', 1, true) and not text:find(" ERROR ", 1, true),
      name .. " log: no error\n" .. text
    )
  end
end)

return S
