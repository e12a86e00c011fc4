-- :Dline edit's Restore All asks the core first (EditMessage with dry_run) and confirms with the
-- files it will overwrite and delete; unsaved buffers of those files are saved first or kept,
-- as the person chooses; Cancel changes nothing. Real sidecar, scripted model server.
local T = require("dline_test")
local ask = require("dline.ask")
local S = T.suite()

local function session()
  T.fail_on_error_notices()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  return s
end

local function wait_completed(controller)
  T.wait(function() return controller.status == "TASK_STATUS_COMPLETED" end, "the task to complete", 30000)
end

local function done(result) return { toolCalls = { { name = "attempt_completion", input = { result = result } } } } end

--- A completed task of two messages: the first edits hello.txt, the second edits it again and
--- writes `notes` new files (notes1.md ...). Returns the session, hello.txt's path, the controller.
local function two_messages(notes)
  local s = session()
  local cwd = vim.loop.cwd()
  local hello = cwd .. "/hello.txt"
  T.write(hello, "hello\n")
  local writes = {
    {
      name = "replace_in_file",
      input = { path = "hello.txt", diff = "------- SEARCH\nhello, world\n=======\nhello, everyone\n+++++++ REPLACE" },
    },
  }
  for i = 1, notes do
    table.insert(writes, { name = "write_to_file", input = { path = ("notes%d.md"):format(i), content = "notes\n" } })
  end
  T.configure_model(s, {
    {
      toolCalls = {
        {
          name = "replace_in_file",
          input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      },
    },
    done("Greeted."),
    { toolCalls = writes },
    done("Notes taken."),
  })
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then return ask.APPROVE end
  end)
  vim.cmd("Dline new Greet the world")
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil
  end, "the task")
  wait_completed(controller)
  T.eq(T.read(hello), "hello, world\n", "the first message's edit")
  local err = T.await(function(cb) controller:send("Greet everyone and take notes", cb) end, "the second message")
  T.eq(err, nil, "the second message was taken")
  T.wait(
    function() return controller.status == "TASK_STATUS_COMPLETED" and T.read(cwd .. "/notes1.md") ~= nil end,
    "the second message's edits",
    30000
  )
  T.eq(T.read(hello), "hello, everyone\n", "the second message's edit")
  return s, hello, controller
end

--- Edits the first message with Restore All; the confirmation is answered by `confirm(items,
--- opts, entry)` (returns the choice, or nil to cancel). Returns the select calls.
local function restore_all_first(confirm)
  local calls = T.script_select(function(items, opts, entry)
    if opts.kind == "dline.edit_message" then return items[1] end
    if opts.kind == "dline.edit_mode" then
      for _, o in ipairs(items) do
        if o.label == "Restore All" then return o end
      end
    end
    if opts.kind == "dline.restore_all" then return confirm(items, opts, entry) end
  end)
  T.script_input(function() return "Greet the whole world" end)
  vim.cmd("Dline edit")
  return calls
end

local function choice(action)
  return function(items)
    for _, c in ipairs(items) do
      if c.action == action then return c end
    end
  end
end

--- Collects what vim.notify shows ({ msg, level } each) until the case ends.
local function capture_notices()
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(messages, { msg = msg, level = level })
    return notify(msg, level)
  end
  T.defer(function() vim.notify = notify end)
  return messages
end

--- Waits until the last notice is Restore All's summary.
local function wait_summary(messages)
  T.wait(function()
    local last = messages[#messages]
    return last and last.msg:find("Restore All: done", 1, true) ~= nil
  end, "the summary")
end

local function find_call(calls, kind)
  for _, c in ipairs(calls) do
    if c.opts.kind == kind then return c end
  end
end

S.case("Restore All names the files it will overwrite and delete before it, and Cancel changes nothing", function()
  local _, hello, controller = two_messages(5)
  local cwd = vim.loop.cwd()
  local calls = restore_all_first(choice("cancel"))
  T.wait(function() return find_call(calls, "dline.restore_all") ~= nil end, "the confirmation")
  vim.wait(500)
  local confirm = find_call(calls, "dline.restore_all")
  T.matches(
    confirm.opts.prompt,
    "^\n?Restore All resets the files to checkpoint %x+: it overwrites 1 file %(hello%.txt%) and deletes 5 files "
      .. "%(notes1%.md, notes2%.md, notes3%.md and 2 more%)%.$",
    "the prompt names the files, compact"
  )
  T.eq(confirm.labels, {
    "Restore All (:Dline undo puts the files back as they are now)",
    "List all 6 files, then choose",
    "Cancel",
  }, "the choices")
  T.eq(T.read(hello), "hello, everyone\n", "hello.txt untouched")
  T.eq(T.read(cwd .. "/notes5.md"), "notes\n", "notes5.md untouched")
  T.contains(controller.chat:text(), "Notes taken.", "the conversation untouched")

  -- List all, then confirm: the whole list is shown (and kept for :Dline messages).
  local listed = 0
  restore_all_first(function(items)
    listed = listed + 1
    if listed == 1 then return choice("list")(items) end
    return choice("restore")(items)
  end)
  T.wait(function() return T.read(hello) == "hello\n" end, "hello.txt restored")
  T.wait(function() return T.read(cwd .. "/notes5.md") == nil end, "the notes deleted")
  T.eq(listed, 2, "asked again after the list")
  T.wait(
    function() return vim.fn.execute("Dline messages"):find("Restore All: done", 1, true) ~= nil end,
    "the summary"
  )
  local whole = vim.fn.execute("Dline messages")
  for i = 1, 5 do
    T.contains(whole, ("delete     notes%d.md"):format(i), "the full list")
  end
  T.contains(whole, "overwrite  hello.txt", "the full list")
  T.contains(whole, "Restore All: done (1 file(s) restored, 5 deleted; :Dline undo", "the summary")
end)

S.case("Restore All says, before and after, which changed files the checkpoints do not track it leaves", function()
  local cwd = vim.loop.cwd()
  -- A local setting, ignored: checkpoints do not track it. The person changes it after the task.
  T.write(cwd .. "/.gitignore", ".env\n")
  T.write(cwd .. "/.env", "LOCAL_PORT=3000\n")
  local _, hello = two_messages(1)
  T.write(cwd .. "/.env", "LOCAL_PORT=4000\n")
  local messages = capture_notices()
  local calls = restore_all_first(choice("restore"))
  T.wait(function() return T.read(hello) == "hello\n" end, "hello.txt restored")
  wait_summary(messages)
  T.contains(
    find_call(calls, "dline.restore_all").opts.prompt,
    "1 file the checkpoints cannot restore is left as it is: .env.",
    "the confirmation names it"
  )
  local last = messages[#messages].msg
  T.contains(last, "1 file(s) restored, 1 deleted, 1 kept as they were", "the summary counts it")
  T.contains(last, "kept as is: not tracked by checkpoints: .env", "the summary names it")
  T.eq(T.read(cwd .. "/.env"), "LOCAL_PORT=4000\n", "the .env left as the person made it")
end)

S.case("Restore All with an unsaved buffer of a file it overwrites: saved first, then reloaded", function()
  local _, hello = two_messages(1)
  vim.cmd("edit " .. vim.fn.fnameescape(hello))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "my own words" })
  local calls = restore_all_first(choice("save"))
  T.wait(function() return T.read(hello) == "hello\n" end, "hello.txt restored")
  local confirm = find_call(calls, "dline.restore_all")
  T.contains(confirm.opts.prompt, "1 of them has unsaved changes in Neovim: hello.txt.", "the prompt names it")
  T.eq(confirm.labels, {
    "Save my unsaved buffers, then Restore All (:Dline undo puts back what they had)",
    "Restore All, keep my unsaved buffers as they are (:e! loads the restored file)",
    "Cancel",
  }, "the choices")
  T.wait(
    function() return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "hello" end,
    "the buffer shows the restored file"
  )
  T.eq(vim.bo[buf].modified, false, "not modified")
  -- The unsaved words were saved before the restore: its undo brings them back.
  T.script_select(function() end)
  vim.cmd("Dline undo")
  T.wait(function() return T.read(hello) == "my own words\n" end, "undo puts back the saved words")
end)

S.case("Restore All keeping an unsaved buffer: the file is restored, the buffer keeps your text and says so", function()
  local _, hello = two_messages(1)
  local cwd = vim.loop.cwd()
  vim.cmd("edit " .. vim.fn.fnameescape(cwd .. "/notes1.md"))
  local notes = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(notes, 0, -1, false, { "my notes" })
  vim.cmd("split " .. vim.fn.fnameescape(hello))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "my own words" })
  local messages = capture_notices()
  local calls = restore_all_first(choice("keep"))
  T.wait(function() return T.read(hello) == "hello\n" end, "hello.txt restored")
  T.wait(function() return T.read(cwd .. "/notes1.md") == nil end, "notes1.md deleted")
  wait_summary(messages)
  T.contains(
    find_call(calls, "dline.restore_all").opts.prompt,
    "2 of them have unsaved changes in Neovim: hello.txt, notes1.md.",
    "the prompt names both"
  )
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "my own words" }, "your text kept")
  T.eq(vim.bo[buf].modified, true, "still modified")
  T.eq(vim.api.nvim_buf_get_lines(notes, 0, -1, false), { "my notes" }, "your notes kept")
  T.eq(vim.b[notes].dline_not_on_disk, true, "marked as not on disk")
  local last = messages[#messages].msg
  T.contains(last, "hello.txt on disk, but its buffer has unsaved changes", "the kept buffer is said")
  T.contains(last, "deleted notes1.md, but its buffer has unsaved changes", "the deleted file's buffer is said")
end)

S.case("Restore All that changes no file says so and asks nothing", function()
  local s = session()
  T.configure_model(s, { done("Nothing to change.") })
  vim.cmd("Dline new Look around")
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil
  end, "the task")
  wait_completed(controller)
  local messages = capture_notices()
  local calls = restore_all_first(function() return nil end)
  wait_summary(messages)
  T.eq(find_call(calls, "dline.restore_all"), nil, "no confirmation")
  T.contains(messages[#messages].msg, "Restore All: done (no file", "says no file was restored")
end)

--- The chat's header (its lines up to the first blank one).
local function header(controller)
  local lines = {}
  for _, line in ipairs(vim.api.nvim_buf_get_lines(controller.chat.buf, 0, -1, false)) do
    if line == "" then break end
    table.insert(lines, line)
  end
  return lines
end

S.case(
  "Restore All of the first message: the header says untitled, then the sent edit names the task and runs it",
  function()
    local s = session()
    local cwd = vim.loop.cwd()
    local hello = cwd .. "/hello.txt"
    T.write(hello, "hello\n")
    T.configure_model(s, {
      {
        toolCalls = {
          {
            name = "replace_in_file",
            input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
          },
        },
      },
      done("Greeted."),
      -- The new first message's run: slow enough to be seen running.
      { text = "Greeting the whole world.", firstByteDelayMs = 1500 },
      done("Greeted the whole world."),
    })
    T.script_select(function(_, opts)
      if opts.kind == "dline.approval" then return ask.APPROVE end
    end)
    vim.cmd("Dline new Greet the world")
    local controller
    T.wait(function()
      controller = require("dline.task").current()
      return controller ~= nil
    end, "the task")
    wait_completed(controller)
    T.eq(header(controller)[2], "Greet the world", "the title")

    local messages = capture_notices()
    restore_all_first(choice("restore"))
    wait_summary(messages)
    T.eq(T.read(hello), "hello\n", "hello.txt restored")
    -- No message left: nothing names the task (before, the old first message still did) and
    -- nothing is there to resume (Resume is refused: a message starts it again). The title comes
    -- with the history's change, the status with the task's stream: either may come first.
    T.wait(function()
      local shown = header(controller)
      return shown[2] == "(untitled task)" and table.concat(shown, "\n"):find("start it again", 1, true) ~= nil
    end, "no title, and what to do: " .. vim.inspect(header(controller)))
    local restored = table.concat(header(controller), "\n")
    T.truthy(not restored:find("Greet the world", 1, true), "not the old first message: " .. restored)
    T.truthy(not restored:find("continues it", 1, true), "no Resume offered: " .. restored)
    T.contains(restored, "send a message to start it again", "what to do")

    -- The edited text, sent from the input area as the person does (<CR>).
    local sidebar = require("dline.sidebar")
    T.eq(T.buffer_text(sidebar.input_buffer()), "Greet the whole world", "the edit waits in the input area")
    sidebar.send(controller.chat)
    T.wait(
      function() return controller.status == "TASK_STATUS_RUNNING" end,
      "the new run (status " .. tostring(controller.status) .. ")"
    )
    local running = header(controller)
    T.matches(running[1], "^# Dline %x+ · running", "running: " .. vim.inspect(running))
    T.eq(running[2], "Greet the whole world", "the new first message names the task")
    T.truthy(not table.concat(running, "\n"):find("continues it", 1, true), "not stopped: " .. vim.inspect(running))
    wait_completed(controller)
    local completed = header(controller)
    T.matches(completed[1], "^# Dline %x+ · completed", "completed: " .. vim.inspect(completed))
    T.eq(completed[2], "Greet the whole world", "still named by it")
    -- As a chat opened afresh shows it (GetTask).
    controller:reload()
    T.wait(function() return controller.chat.state.base_seq > 0 end, "the reload")
    vim.wait(300)
    T.eq(header(controller)[2], "Greet the whole world", "named by it after a reload")
  end
)

S.case("Restore All's question says first that a running task is stopped (its command's changes undone too)", function()
  local checkpoints = require("dline.checkpoints")
  local dry = { checkpointId = "0123456789abcdef", restoredPaths = { "hello.txt" }, deletedPaths = { "a.txt" } }
  local running = checkpoints.restore_all_prompt(dry, {}, 5, true)
  T.eq(
    running:sub(1, 115),
    "The task is running: it is stopped first (its command too), and what its command changes until then is undone too. ",
    "said first"
  )
  T.contains(running, "Restore All resets the files to checkpoint 01234567", "then what it does")
  T.eq(checkpoints.restore_all_prompt(dry, {}, 5, false):sub(1, 11), "Restore All", "not said when it does not run")
end)

return S
