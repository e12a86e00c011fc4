-- The editor side: lazy loading, :Dline commands and completion, the chat renderer,
-- :Dline settings, :Dline import-cline errors, :checkhealth dline.
local T = require("dline_test")
local S = T.suite()

local function capture_notify()
  local messages = {}
  vim.notify = function(msg, level) table.insert(messages, { msg = msg, level = level }) end
  return messages
end

S.case("plugin/dline.lua only defines the command: nothing loads or starts before use", function()
  T.eq(vim.fn.exists(":Dline"), 2, ":Dline exists")
  T.eq(package.loaded["dline"], nil, "dline not loaded")
  T.eq(package.loaded["dline.session"], nil, "session not loaded")
  T.eq(vim.fn.getcompletion("Dline hi", "cmdline"), { "history" }, "completion")
  local all = vim.fn.getcompletion("Dline ", "cmdline")
  for _, name in ipairs({
    "new",
    "task",
    "chat",
    "history",
    "approve",
    "deny",
    "cancel",
    "resume",
    "checkpoints",
    "compare",
    "restore",
    "settings",
    "capabilities",
    "import-cline",
  }) do
    T.truthy(vim.tbl_contains(all, name), "subcommand " .. name)
  end
  T.eq(package.loaded["dline.session"], nil, "completion starts nothing")
  local messages = capture_notify()
  vim.cmd("Dline frobnicate")
  T.contains(messages[1].msg, "(dline) unknown command 'frobnicate'", "unknown subcommand")
end)

S.case("notices fit one line with Neovim's own vim.notify; a user's vim.notify gets them whole", function()
  local dline = require("dline")
  T.eq(dline.one_line_notice("(dline) short", 40), "(dline) short", "a short line as it is")
  T.eq(
    dline.one_line_notice("(dline) done\nfirst detail\nsecond detail", 60),
    "(dline) done [+2 lines: :Dline messages]",
    "the first line, and where the rest is"
  )
  local cut = dline.one_line_notice("(dline) " .. string.rep("wörd ", 30), 50)
  T.eq(vim.fn.strdisplaywidth(cut), 50, "a long line cut to fit: " .. cut)
  T.matches(cut, "… %[:Dline messages%]$", "said to be cut")
  T.truthy(
    vim.fn.strdisplaywidth(dline.one_line_notice("(dline) " .. string.rep("字", 40), 30)) <= 30,
    "wide characters"
  )
  -- Neovim's own: one line in the message history.
  vim.o.columns = 80
  vim.cmd("messages clear")
  dline.notify("two lines\nthe detail", vim.log.levels.WARN)
  T.eq(vim.trim(vim.fn.execute("messages")), "(dline) two lines [+1 line: :Dline messages]", "one line")
  T.contains(vim.fn.execute("Dline messages"), "(dline) two lines\nthe detail", ":Dline messages has it whole")
  -- A replacement (nvim-notify and the like) shows it whole.
  local messages = capture_notify()
  dline.notify("two lines\nthe detail", vim.log.levels.WARN)
  T.eq(messages, { { msg = "(dline) two lines\nthe detail", level = vim.log.levels.WARN } }, "whole")
end)

S.case(":help dline finds the documentation", function()
  -- Tags are generated in a copy, not in the repository.
  local rtp = T.base() .. "/help-rtp"
  T.write(rtp .. "/doc/dline.txt", T.read(T.repo_root() .. "/adapters/neovim/doc/dline.txt"))
  vim.opt.runtimepath:prepend(rtp)
  vim.cmd("helptags " .. vim.fn.fnameescape(rtp .. "/doc"))
  vim.cmd("help dline")
  T.eq(vim.bo.filetype, "help", "help buffer")
  T.contains(T.buffer_text(0), "dline-config", "configuration section")
  vim.cmd("help dline-commands")
  vim.cmd("help :Dline-restore")
  T.contains(vim.api.nvim_get_current_line(), "restore", "restore entry")
  -- Every subcommand and every key of the chat has its entry.
  local help = T.read(rtp .. "/doc/dline.txt")
  for _, name in ipairs(vim.fn.getcompletion("Dline ", "cmdline")) do
    if name ~= "task" then T.contains(help, "*:Dline-" .. name .. "*", "the help of :Dline " .. name) end
  end
  local keys = help:match("%*dline%-chat%-keys%*(.-)\nThe input area")
  for _, key in ipairs(require("dline.sidebar").KEYS) do
    T.truthy(
      keys:find(" " .. key[1] .. " ", 1, true) or keys:find(" " .. key[1] .. ",", 1, true),
      "the chat key " .. key[1] .. " in |dline-chat-keys|"
    )
  end
  for name in pairs(require("dline.config").defaults()) do
    T.contains(help, "    " .. name .. " = ", "the option " .. name .. " in |dline-config|")
  end
end)

S.case("the sidebar's window options stay in its windows: the user's global values are untouched", function()
  vim.o.number, vim.o.wrap = true, false
  local before = {}
  local names = {
    "number",
    "wrap",
    "linebreak",
    "signcolumn",
    "winfixwidth",
    "winfixheight",
    "foldmethod",
    "foldexpr",
    "foldtext",
    "foldlevel",
    "fillchars",
  }
  for _, name in ipairs(names) do
    before[name] = vim.fn.eval("&g:" .. name)
  end
  local chat = require("dline.chat").new("task-options", "Options")
  chat:open({ position = "right", width = 60, height = 20, input_height = 3 })
  local chat_win = require("dline.sidebar").windows()
  T.eq(vim.wo[chat_win].foldmethod, "expr", "the chat folds tool output")
  T.eq(vim.wo[chat_win].number, false, "the chat has no numbers")
  for _, name in ipairs(names) do
    T.eq(vim.fn.eval("&g:" .. name), before[name], "global '" .. name .. "'")
  end
end)

S.case("a folded output says how many lines it hides, one line as one line", function()
  local chat = require("dline.chat").new("task-fold-count", "Fold count")
  chat:open({ position = "current", width = 80, height = 30, input_height = 3 })
  local function tool(id, summary, output)
    chat:apply({
      messageAdded = {
        message = {
          id = id,
          role = "MESSAGE_ROLE_TOOL",
          kind = "tool",
          text = summary,
          detail = vim.json.encode({ status = "TOOL_CALL_STATUS_DONE", output = output }),
        },
      },
    })
  end
  -- One line, wrapped over two screen lines: Neovim shows a fold only over two or more.
  tool("t1", "read_file one.txt", string.rep("word ", 30))
  tool("t2", "read_file three.txt", "a\nb\nc")
  local win = vim.fn.bufwinid(chat.buf)
  local folds = {}
  vim.api.nvim_win_call(win, function()
    vim.cmd("normal! zM")
    for lnum = 1, vim.api.nvim_buf_line_count(chat.buf) do
      if vim.fn.foldclosed(lnum) == lnum then table.insert(folds, vim.fn.foldtextresult(lnum)) end
    end
  end)
  T.eq(folds, { "  │ … 1 line of output (zo opens)", "  │ … 3 lines of output (zo opens)" }, "fold texts")
end)

S.case("the chat renders streamed text, tool output, questions and checkpoints as they arrive", function()
  local chat = require("dline.chat").new("task-1234567890", "Add a greeting")
  chat:open({ position = "current", width = 80, height = 20, input_height = 3 })
  chat:apply({ seq = "1", statusChanged = { status = "TASK_STATUS_RUNNING" } })
  chat:apply({
    seq = "2",
    messageAdded = { message = { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "say hi" } },
  })
  chat:apply({
    seq = "3",
    messageAdded = {
      message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "", partial = true },
    },
  })
  for _, piece in ipairs({ "Hel", "lo\nwor", "ld" }) do
    chat:apply({ messageDelta = { messageId = "a1", text = piece } })
  end
  T.contains(chat:text(), "## Dline\nHello\nworld", "deltas joined across lines")
  chat:apply({
    messageAdded = {
      message = { id = "t1", role = "MESSAGE_ROLE_TOOL", kind = "command", text = "echo hi", partial = true },
    },
  })
  chat:apply({ toolStarted = { toolCallId = "c1", tool = "execute_command", summary = "echo hi" } })
  chat:apply({ toolOutput = { toolCallId = "c1", chunk = "h" } })
  chat:apply({ toolOutput = { toolCallId = "c1", chunk = "i\n" } })
  T.contains(chat:text(), "### $ echo hi  [running]\n  │ hi", "live command output, the exact command line once")
  chat:apply({
    messageFinalized = {
      message = {
        id = "t1",
        role = "MESSAGE_ROLE_TOOL",
        kind = "command",
        text = "echo hi",
        detail = vim.json.encode({ ok = true, output = "hi" }),
      },
    },
  })
  T.contains(chat:text(), "### $ echo hi  [done]\n  │ hi", "finished")
  chat:apply({
    ask = {
      askId = "k1",
      kind = "ASK_KIND_TOOL_APPROVAL",
      tool = "write_to_file",
      summary = "write_to_file a.txt",
      edits = { { path = "a.txt", status = "FILE_STATUS_ADDED", proposedText = "one\ntwo\n" } },
    },
  })
  T.contains(chat:text(), ">> Approve write_to_file a.txt?  ga approve", "approval shown, the tool named once")
  T.contains(chat:text(), "   a.txt (new, +2 -0)", "the change in numbers")
  chat:apply({ askResolved = { askId = "k1", approved = true } })
  T.truthy(not chat:text():find("Approve write_to_file", 1, true), "the answered question goes")
  chat:apply({
    seq = "9",
    checkpointSaved = { checkpointId = "abcdef0123456789", messageId = "a1", kind = "CHECKPOINT_KIND_TURN" },
  })
  T.contains(
    chat:text(),
    "world\n── checkpoint abcdef01 (turn)\n",
    "checkpoint marker on its message, on one short line"
  )
  chat:apply({ statusChanged = { status = "TASK_STATUS_COMPLETED" } })
  chat:apply({ usage = { tokensIn = "1200", tokensOut = "34", cost = 0.0123 } })
  chat:apply({ usage = { tokensIn = "800", tokensOut = "6", cost = 0.001 } })
  local first = vim.api.nvim_buf_get_lines(chat.buf, 0, 1, false)[1]
  T.eq(first, "# Dline task-123 · completed · 2.0k in, 40 out, $0.0133", "header: the task's totals")
  T.eq(vim.bo[chat.buf].modifiable, false, "the chat is read-only")
  -- The input buffer sends with <CR>.
  local sent, restore
  chat.on_send = function(text, put_back)
    sent, restore = text, put_back
  end
  vim.api.nvim_buf_set_lines(chat.input_buf, 0, -1, false, { "next step", "please" })
  chat:send_input()
  T.eq(sent, "next step\nplease", "sent text")
  T.eq(vim.api.nvim_buf_get_lines(chat.input_buf, 0, -1, false), { "" }, "input cleared")
  -- A send the sidecar refused (no model set up yet...) puts the words back.
  restore()
  T.eq(vim.api.nvim_buf_get_lines(chat.input_buf, 0, -1, false), { "next step", "please" }, "input restored")
end)

S.case(
  "streamed text shows the lines the chat drawn again shows, a text ending with a newline one blank line",
  function()
    local text = "# Plan\n\nI will **look**.\r\n\n```js\nx()\n```\n\nThat is all.\n"
    local added = {
      messageAdded = {
        message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "", partial = true },
      },
    }
    for size = 1, 7 do
      local streamed = require("dline.chat").new("1-abcdef01" .. size, "Plan")
      local redrawn = require("dline.chat").new("2-abcdef01" .. size, "Plan") -- the same short id
      streamed:apply(added)
      redrawn:apply(added)
      for i = 1, #text, size do
        local delta = { messageDelta = { messageId = "a1", text = text:sub(i, i + size - 1) } }
        streamed:apply(delta)
        redrawn:apply(delta)
        redrawn:redraw()
        T.eq(streamed:text(), redrawn:text(), ("pieces of %d, after %d characters"):format(size, i + size - 1))
      end
      T.eq(
        vim.api.nvim_buf_get_lines(streamed.buf, -3, -1, false),
        { "That is all.", "" },
        "one blank line after the answer"
      )
      streamed:close()
      redrawn:close()
    end
  end
)

S.case("a row that ends inside a code block closes it: the rows after it do not show as code", function()
  vim.cmd("syntax on")
  local chat = require("dline.chat").new("task-fence", "Fences")
  chat:open({ position = "current", width = 80, height = 30, input_height = 3 })
  chat:set_messages({
    { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "Here:\n```js\nfoo(", cutOff = true },
    { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "and ~~~ this\n~~~\nopen" },
    { id = "a2", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "Done: ```no fence``` here" },
    -- CommonMark: a shorter run does not close a longer fence.
    { id = "a3", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "````md\n```\ninner" },
  })
  local text = chat:text()
  T.contains(text, "## Dline\nHere:\n```js\nfoo(\n```\n— answer cut off here\n", "cut off: closed")
  T.contains(text, "## You\nand ~~~ this\n~~~\nopen\n~~~\n\n", "unbalanced: closed")
  T.contains(text, "## Dline\nDone: ```no fence``` here\n\n", "no fence: nothing added")
  T.contains(text, "## Dline\n````md\n```\ninner\n````\n", "closed by its own fence")
  vim.cmd("redraw")
  for i, line in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
    if line == "## You" or line:find("^Done") then
      T.truthy(
        not vim.fn.synIDattr(vim.fn.synID(i, 1, 1), "name"):find("Code"),
        ("line %d (%s) is not code"):format(i, line)
      )
    end
  end
end)

S.case("the chat shows reasoning, retries (dropping the failed attempt's answer) and waits", function()
  local chat = require("dline.chat").new("task-reasoning", "Think")
  chat:open({ position = "current", width = 80, height = 20, input_height = 3 })
  chat:apply({
    messageAdded = {
      message = { id = "r1", role = "MESSAGE_ROLE_ASSISTANT", kind = "reasoning", text = "Let me ", partial = true },
    },
  })
  chat:apply({ reasoningDelta = { messageId = "r1", text = "think." } })
  T.contains(chat:text(), "Let me think.", "reasoning streamed")
  chat:apply({
    messageAdded = {
      message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "PARTIAL answer", partial = true },
    },
  })
  chat:apply({
    modelRetry = {
      attempt = 2,
      maxAttempts = 6,
      delayMs = "4000",
      reason = "Overloaded",
      message = "retrying in 4 s (attempt 2 of 6)",
      discardedMessageIds = { "r1", "a1" },
    },
  })
  T.contains(chat:text(), "~~ retrying in 4 s (attempt 2 of 6): Overloaded", "retry line")
  T.truthy(not chat:text():find("PARTIAL answer", 1, true), "the failed attempt's answer is gone")
  chat:apply({
    modelWaiting = {
      waitedMs = "5000",
      timeoutMs = "60000",
      message = "waiting for the model: 5 s (gives up after 60 s without an answer)",
    },
  })
  T.contains(chat:text(), "~~ waiting for the model: 5 s", "wait line replaces the retry line")
  T.truthy(not chat:text():find("retrying in 4 s", 1, true), "one status line")
end)

S.case("a chat rendered from stored messages shows a replay of their events once", function()
  local chat = require("dline.chat").new("task-replay")
  chat:set_messages({
    { id = "u1", role = "MESSAGE_ROLE_USER", kind = "text", text = "hi" },
    { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "Hello there" },
  })
  local before = chat:text()
  chat:apply({
    seq = "1",
    messageAdded = {
      message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "", partial = true },
    },
  })
  chat:apply({ seq = "2", messageDelta = { messageId = "a1", text = "Hello" } })
  chat:apply({ seq = "3", messageDelta = { messageId = "a1", text = " there" } })
  chat:apply({
    seq = "4",
    messageFinalized = { message = { id = "a1", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "Hello there" } },
  })
  T.eq(chat:text(), before, "unchanged by the replay")
  -- A new message after them streams normally.
  chat:apply({
    seq = "5",
    messageAdded = {
      message = { id = "a2", role = "MESSAGE_ROLE_ASSISTANT", kind = "text", text = "", partial = true },
    },
  })
  chat:apply({ seq = "6", messageDelta = { messageId = "a2", text = "More" } })
  T.contains(chat:text(), "Hello there\n\n## Dline\nMore", "new text")
end)

S.case(":Dline import-cline shows the sidecar's error as one clean line", function()
  local messages = capture_notify()
  vim.cmd("Dline import-cline")
  T.wait(function() return #messages > 0 end, "a message")
  -- The import service may not be implemented yet; either way the user sees a clean line.
  local m = messages[1]
  T.matches(m.msg, "^%(dline%) import%-cline: ", "prefix")
  T.truthy(not m.msg:find("traceback", 1, true) and not m.msg:find("\n", 1, true), "one line, no stack")
  require("dline").session():stop()
end)

S.case(":Dline settings edits the global settings and :write saves the changed keys", function()
  local buf
  require("dline.settings").open(function(b) buf = b end)
  T.wait(function() return buf ~= nil end, "the settings buffer")
  local text = T.buffer_text(buf)
  -- Only what was set is shown; defaults apply to the rest.
  T.eq(text, "{}", "nothing set yet")
  local messages = capture_notify()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "{", '  "checkpointsEnabled": false', "}" })
  vim.cmd("write")
  T.wait(function() return #messages > 0 end, "saved")
  T.contains(messages[1].msg, "settings saved", "message")
  T.eq(vim.bo[buf].modified, false, "not modified")
  local s = require("dline").session()
  local res = T.call(s, "SettingsService", "GetSettings", { scope = "SETTINGS_SCOPE_GLOBAL" })
  T.eq(res.settings.checkpointsEnabled, false, "stored by the sidecar")
  s:stop()
end)

S.case(":checkhealth dline reports Neovim, the running sidecar, git and the roots", function()
  local s = require("dline").session()
  T.call(s, "SystemService", "Health", {})
  vim.cmd("checkhealth dline")
  local text = T.buffer_text(0)
  T.contains(text, "Neovim 0.", "version")
  T.contains(text, "found: " .. vim.env.DLINE_CORE, "binary")
  T.contains(text, "running: version", "state")
  T.contains(text, "Health: ok", "health call")
  T.contains(text, "git version", "git")
  T.contains(text, "data root: " .. vim.env.DLINE_DIR .. "/data", "roots")
  s:stop()
end)

S.case("with Neovim's own pickers each prompt starts on its own line, not after the previous answer", function()
  local ask = require("dline.ask")
  local shown = {}
  -- Neovim's own vim.ui.select and vim.ui.input call inputlist() and input().
  vim.fn.inputlist = function(lines)
    table.insert(shown, lines[1])
    return 2 -- "Approve with feedback…"
  end
  vim.fn.input = function(opts)
    table.insert(shown, type(opts) == "table" and opts.prompt or opts)
    return "looks fine"
  end
  local answer
  ask.prompt(
    { askId = "k1", kind = "ASK_KIND_TOOL_APPROVAL", summary = "write_to_file a.txt" },
    function(approve, text) answer = { approve, text } end
  )
  T.wait(function() return answer ~= nil end, "the answer")
  T.eq(answer, { true, "looks fine" }, "approved with the feedback")
  T.eq(shown, { "\nDline wants to: write_to_file a.txt", "\nFeedback: " }, "each prompt on a line of its own")
  -- A picker plugin gets the prompt as it is.
  local prompts = {}
  vim.ui.select = function(_, opts, on_choice)
    table.insert(prompts, opts.prompt)
    on_choice(nil)
  end
  require("dline.ui").select({ "a" }, { prompt = "Pick" }, function() end)
  T.eq(prompts, { "Pick" }, "unchanged for a plugin's picker")
end)

return S
