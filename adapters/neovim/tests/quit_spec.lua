-- Quitting Neovim while a task runs (dline.quit): which typed commands are held back and
-- which quit anyway, each in its own Neovim (a quit ends it), with a task that stays busy.
local T = require("dline_test")
local S = T.suite()

--- Starts a Neovim editing a file that has unsaved changes, with a task that stays busy,
--- types `:<command><CR>`, and returns what became of it: { quit = it ended, file = the
--- file's text, notices = the warnings it showed }.
local function type_in_nvim(command)
  local base = T.base() .. "/quit-" .. tostring((vim.uv or vim.loop).hrtime())
  vim.fn.mkdir(base, "p")
  local file, report, script = base .. "/f.txt", base .. "/report.txt", base .. "/type.lua"
  T.write(
    script,
    table.concat({
      "local report = io.open(" .. ("%q"):format(report) .. ", 'w')",
      "require('dline').notify = function(msg) report:write('NOTICE ' .. msg .. '\\n'); report:flush() end",
      "require('dline.quit').watch(function() return { '1a2b3c4d (running)' } end)",
      "vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'unsaved text' })",
      "vim.api.nvim_feedkeys(" .. ("%q"):format(":" .. command .. "\r") .. ", 'tx', false)",
      "vim.wait(200, function() return false end)",
      "report:write('ALIVE\\n'); report:close()",
      "vim.cmd('qall!')",
    }, "\n")
  )
  local init = T.repo_root() .. "/adapters/neovim/tests/minimal_init.lua"
  vim.fn.system({
    "timeout",
    "20",
    vim.env.DLINE_TEST_NVIM or vim.v.progpath,
    "--headless",
    "--clean",
    "-u",
    init,
    "-c",
    "luafile " .. vim.fn.fnameescape(script),
    file,
  })
  local text = T.read(report) or ""
  local notices = {}
  for line in text:gmatch("NOTICE ([^\n]*)") do
    table.insert(notices, line)
  end
  return { quit = not text:find("ALIVE", 1, true), file = T.read(file), notices = notices }
end

S.case("typed quit commands: the plain ones are held back while a task runs, the ! forms quit", function()
  local held = { "qa", "qall", "wqa", "wqall", "xa", "xall", "wq", "x", "q", "silent wqa", "w | xa", "confirm wqa" }
  for _, command in ipairs(held) do
    local r = type_in_nvim(command)
    T.truthy(not r.quit, ":" .. command .. " does not quit while a task runs")
    T.eq(#r.notices, 1, ":" .. command .. ": one warning")
    T.contains(r.notices[1], "task 1a2b3c4d (running): Neovim did not quit", ":" .. command .. " names the task")
    local writes = command:find("w") or command:find("x")
    T.eq(
      r.file,
      writes and "unsaved text\n" or nil,
      ":" .. command .. (writes and " saves the file" or " writes nothing")
    )
  end
  for _, command in ipairs({ "qa!", "qall!", "wqa!", "xa!", "wq!", "x!", "q!", "silent! wqa!", "w | qa!" }) do
    local r = type_in_nvim(command)
    T.truthy(r.quit, ":" .. command .. " quits anyway")
    T.eq(#r.notices, 0, ":" .. command .. ": no warning")
    local writes = command:find("w") or command:find("x")
    T.eq(
      r.file,
      writes and "unsaved text\n" or nil,
      ":" .. command .. (writes and " saves the file" or " writes nothing")
    )
  end
end, { timeout = 120000 })

S.case("the quit commands of a command line are read as Neovim reads them", function()
  local quits = require("dline.quit").quits
  local function read(line)
    return vim.tbl_map(
      function(q) return (q.forced and "!" or "") .. (q.exit_pre and "exitpre" or "typed") end,
      quits(line)
    )
  end
  T.eq(read("wqa"), { "typed" }, ":wqa")
  T.eq(read("  :xall"), { "typed" }, ":xall after spaces and a colon")
  T.eq(read("wqa!"), { "!typed" }, ":wqa!")
  T.eq(read("sil! conf wqa"), { "typed" }, "after modifiers")
  T.eq(read("w | qa"), { "exitpre" }, "after a |")
  T.eq(read("q!"), { "!exitpre" }, ":q!")
  T.eq(read("x"), { "exitpre" }, ":x")
  T.eq(read("wa"), {}, ":wa quits nothing")
  T.eq(read("wqa2"), {}, "not a command name")
  T.eq(read("xrestore"), {}, "another command")
  T.eq(read("silent"), {}, "a modifier alone")
  T.eq(read("echo 'wqa'"), {}, "an argument")
  T.eq(read("normal! :wqa"), {}, "a :normal argument")
  T.eq(read("qa"), { "exitpre" }, ":qa")
  T.eq(read("exi"), { "exitpre" }, ":exit")
end)

return S
