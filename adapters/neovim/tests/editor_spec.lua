-- The editor around a task, through the real sidecar and the scripted model server: the change
-- an approval is about is on screen before the choice (diff tabs, keymaps to answer), a
-- command approval shows its exact command line, buffers show what a tool wrote without
-- :checktime, a buffer with unsaved changes is never written behind the user's back (the core
-- refuses the edit and the model reads why), and code context (ranges, #buffer, #file:path,
-- the open and visible files) reaches the model.
local T = require("dline_test")
local ask = require("dline.ask")
local S = T.suite()

local function session(opts)
  T.fail_on_error_notices()
  require("dline").setup(vim.tbl_extend("force", { chat = { position = "current" } }, opts or {}))
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  return s
end

local function workspace_file(name, text)
  local path = vim.loop.cwd() .. "/" .. name
  T.write(path, text)
  return path
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

local function wait_status(controller, status)
  local ok, err = pcall(T.wait, function() return controller.status == status end, "status " .. status, 30000)
  if not ok then
    T.fail(("%s (status now %s); the chat:\n%s"):format(err, tostring(controller.status), controller.chat:text()))
  end
end

local replace = {
  name = "replace_in_file",
  input = { path = "hello.txt", diff = "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
}
local function done(result)
  return { toolCalls = { { name = "attempt_completion", input = { result = result or "Done." } } } }
end

--- The windows of the current tab page in diff mode: { name, lines } each.
local function diff_windows()
  local out = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.wo[win].diff then
      local buf = vim.api.nvim_win_get_buf(win)
      table.insert(
        out,
        { name = vim.api.nvim_buf_get_name(buf), lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
      )
    end
  end
  return out
end

S.case("the proposed change is visible in diff mode when the choice is asked, and closes with the answer", function()
  -- The sidebar as users have it: the preview opens from the chat window.
  local s = session({ chat = { position = "right", width = 60, height = 20, input_height = 3 } })
  local file = workspace_file("hello.txt", "hello\n")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  T.configure_model(s, { { text = "Updating.", toolCalls = { replace } }, done() })
  local seen
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then
      -- What is on screen while the choice is asked.
      seen = { diff = diff_windows(), tabs = #vim.api.nvim_list_tabpages(), foldtexts = {} }
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        table.insert(seen.foldtexts, vim.wo[win].foldtext)
      end
      return ask.APPROVE
    end
  end)
  local tabs = #vim.api.nvim_list_tabpages()
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.truthy(seen, "the approval was asked")
  T.eq(seen.tabs, tabs + 1, "a preview tab")
  T.eq(#seen.diff, 2, "two windows in diff mode")
  T.eq(seen.diff[1].lines, { "hello" }, "the file as it is")
  T.eq(seen.diff[2].lines, { "hello, world" }, "the proposed text")
  T.matches(seen.diff[2].name, "^dline://proposed/hello%.txt$", "the proposed side")
  -- Opened from the chat window, the diff windows still fold and number as windows do.
  T.eq(seen.foldtexts, { "foldtext()", "foldtext()" }, "Neovim's fold text in both, not the chat's")
  T.eq(#vim.api.nvim_list_tabpages(), tabs, "the preview closed with the answer")
  T.eq(T.read(file), "hello, world\n", "what was approved was written")
end)

S.case(
  "an approval that comes while you type: the preview opens in Normal mode, your next keys do not change what it shows",
  function()
    local s = session({ chat = { position = "right", width = 60, height = 20, input_height = 3 } })
    local file = workspace_file("hello.txt", "hello\n")
    T.configure_model(s, {
      {
        toolCalls = { { name = "ask_followup_question", input = { question = "Go on?", options = { "yes", "no" } } } },
      },
      { text = "Updating.", toolCalls = { replace } },
      done(),
    })
    -- Every picker dismissed: the preview stays on screen, as with a picker that does not block.
    T.script_select(function() return nil end)
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_WAITING")
    -- You type in a file of yours while the task goes on; the approval comes meanwhile.
    vim.cmd("wincmd t")
    vim.cmd("edit " .. vim.fn.fnameescape(workspace_file("notes.txt", "")))
    local typing
    _G.dline_test_answer_and_wait = function()
      typing = vim.fn.mode()
      controller:respond(true, "yes")
      T.wait(
        function() return vim.api.nvim_buf_get_name(0):find("^dline://proposed/hello%.txt$") ~= nil end,
        "the preview of the edit"
      )
    end
    -- "writing " typed before it comes, "hjkl" after (the keys went on in Insert mode, into the
    -- proposed text: a line that would not be written).
    vim.api.nvim_feedkeys(
      vim.api.nvim_replace_termcodes(
        "iwriting <Cmd>lua _G.dline_test_answer_and_wait()<CR>hjkl<Esc>",
        true,
        false,
        true
      ),
      "x",
      false
    )
    T.eq(typing, "i", "typing in Insert mode when the approval came")
    local proposed = vim.fn.bufnr("dline://proposed/hello.txt")
    T.eq(
      vim.api.nvim_buf_get_lines(proposed, 0, -1, false),
      { "hello, world" },
      "the proposed text, as it will be written"
    )
    T.eq(vim.bo[proposed].modified, false, "the proposed text unchanged")
    T.eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { "hello, world" }, "the window in front shows the proposed text")
    T.eq(
      vim.api.nvim_buf_get_lines(vim.fn.bufnr("notes.txt"), 0, -1, false),
      { "writing " },
      "what you typed before it came"
    )
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("ga", true, false, true), "x", false)
    wait_status(controller, "TASK_STATUS_COMPLETED")
    T.eq(T.read(file), "hello, world\n", "what was approved was written")
  end
)

S.case("an edit of a file too large to send whole is previewed as its unified diff", function()
  local s = session()
  local lines = {}
  for i = 0, 11999 do
    lines[#lines + 1] = ("export const line%d = %d;\n"):format(i, i)
  end
  local file = workspace_file("large.js", table.concat(lines))
  T.configure_model(s, {
    {
      text = "Fixing line 2000.",
      toolCalls = {
        {
          name = "replace_in_file",
          input = {
            path = "large.js",
            diff = "------- SEARCH\nexport const line2000 = 2000;\n=======\nexport const line2000 = 2001;\n+++++++ REPLACE",
          },
        },
      },
    },
    done(),
  })
  local seen
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then
      local buf = vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_list_wins(0)[1])
      seen = {
        name = vim.api.nvim_buf_get_name(buf),
        filetype = vim.bo[buf].filetype,
        lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
        stat = require("dline.chat_render").edit_stat(require("dline.task").current().pending_ask.edits[1]),
      }
      return ask.APPROVE
    end
  end)
  local controller = new_task("Fix line 2000")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.truthy(seen, "the approval was asked")
  T.matches(seen.name, "^dline://proposed/large%.js%.diff$", "the diff's buffer")
  T.eq(seen.filetype, "diff", "shown as a diff")
  T.eq(seen.lines[1], "--- a/large.js", "git's header")
  T.truthy(vim.tbl_contains(seen.lines, "-export const line2000 = 2000;"), "the removed line")
  T.truthy(vim.tbl_contains(seen.lines, "+export const line2000 = 2001;"), "the added line")
  T.eq(seen.stat, "(+1 -1, large: diff only)", "the numbers in the chat")
  T.truthy(T.read(file):find("export const line2000 = 2001;\n", 1, true), "what was approved was written")
end)

--- The windows of the current tab page: { name, lines, diff } each.
local function tab_windows()
  local out = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    table.insert(out, {
      name = vim.api.nvim_buf_get_name(buf),
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
      diff = vim.wo[win].diff,
    })
  end
  return out
end

S.case(
  "a binary file rewritten as text: the preview shows the text it writes, the chat and prompt its sizes",
  function()
    local s = session()
    -- 2,000 bytes with NULs: binary to the core.
    local file = workspace_file("blob.bin", string.rep("\0\1\2\255", 500))
    T.configure_model(s, {
      {
        toolCalls = { { name = "write_to_file", input = { path = "blob.bin", content = "now text\nsecond line\n" } } },
      },
      done(),
    })
    local prompt
    -- The picker is dismissed: the preview stays, and ga in it approves.
    T.script_select(function(_, opts)
      if opts.kind == "dline.approval" then prompt = opts.prompt end
      return nil
    end)
    local controller = new_task("Make it text")
    T.wait(
      function() return vim.api.nvim_buf_get_name(0):find("^dline://proposed/blob%.bin$") ~= nil end,
      "the preview of what the edit writes"
    )
    local stat = "blob.bin (binary, 2,000 bytes now, not shown; 21 bytes after, +2 lines)"
    T.eq(tab_windows(), {
      {
        name = "dline://current/blob.bin",
        lines = {
          "blob.bin as it is now: binary, 2,000 bytes, not shown.",
          "Once approved, the text below replaces it whole (21 bytes, 2 lines).",
        },
        diff = false,
      },
      { name = "dline://proposed/blob.bin", lines = { "now text", "second line" }, diff = false },
    }, "what it replaces, above the text it writes")
    T.eq(prompt, "Dline wants to: write_to_file " .. stat, "the prompt")
    T.contains(controller.chat:text(), "   " .. stat, "the question in the chat")
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("ga", true, false, true), "x", false)
    wait_status(controller, "TASK_STATUS_COMPLETED")
    T.eq(T.read(file), "now text\nsecond line\n", "what was approved was written")
    T.contains(controller.chat:text(), "### write_to_file blob.bin  [done]\n  " .. stat, "the row, once done")
  end
)

S.case(
  "an edit whose texts are all left out shows its sizes in the preview; a row of an earlier version as before",
  function()
    T.fail_on_error_notices()
    local preview = require("dline.preview")
    local function shown(edit)
      local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
      local windows = tab_windows()
      p.close()
      return windows
    end
    local large = { path = "big.log", status = "FILE_STATUS_MODIFIED", truncated = true }
    T.eq(shown(vim.tbl_extend("force", large, { originalSize = "2000000", proposedSize = "2000001" })), {
      {
        name = "dline://proposed/big.log",
        lines = {
          "big.log (modified): 2,000,000 bytes now, not shown; 2,000,001 bytes after. The whole file is written once approved.",
        },
        diff = false,
      },
    }, "the sizes")
    T.eq(shown(large), {
      {
        name = "dline://proposed/big.log",
        lines = { "big.log (modified): not shown, binary or too large; the whole file is written once approved." },
        diff = false,
      },
    }, "no sizes: today's words")
    -- Too large to read, rewritten small: the text, under its size now (not "binary").
    local windows =
      shown(vim.tbl_extend("force", large, { originalSize = "5000000", proposedSize = "3", proposedText = "ok\n" }))
    T.eq(windows[1].lines[1], "big.log as it is now: 5,000,000 bytes, too large to show.", "what it replaces")
    T.eq(windows[2].lines, { "ok" }, "the text it writes")
  end
)

S.case("what an edit's text replaces stays whole on screen when the screen changes size", function()
  T.fail_on_error_notices()
  local edit = {
    path = "assets/a-binary-file-with-a-rather-long-name-that-wraps.bin",
    status = "FILE_STATUS_MODIFIED",
    truncated = true,
    originalBinary = true,
    originalSize = "2000",
    proposedSize = "21",
    proposedText = "now text\nsecond line\n",
  }
  vim.o.columns, vim.o.lines = 200, 40
  local p = require("dline.preview").open({ edits = { edit } }, vim.loop.cwd(), function() end)
  T.defer(function() p.close() end)
  local win = vim.api.nvim_tabpage_list_wins(0)[1]
  T.matches(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)), "^dline://current/", "the description")
  --- The screen lines its text takes at its width now.
  local function needed()
    local rows, width = 0, vim.api.nvim_win_get_width(win)
    for _, line in ipairs(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)) do
      rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(line) / width))
    end
    return rows
  end
  local function settle()
    -- A headless 0.7 has no UI to say it was resized: say it as a terminal would.
    vim.cmd("doautocmd <nomodeline> VimResized")
    vim.cmd("redraw")
    T.wait(function() return true end, "a moment", 50)
  end
  T.eq(vim.api.nvim_win_get_height(win), 2, "two lines on a wide screen")
  -- Narrower: the same lines wrap on more screen lines, all of them shown.
  vim.o.columns = 50
  settle()
  T.eq(vim.api.nvim_win_get_height(win), needed(), "as high as its wrapped lines at 50 columns")
  T.truthy(needed() > 2, "they wrap")
  -- Wide again: no empty rows left over.
  vim.o.columns = 200
  settle()
  T.eq(vim.api.nvim_win_get_height(win), 2, "two lines again on a wide screen")
  -- Very narrow and short: at most half the screen, the text it writes stays in view.
  vim.o.columns, vim.o.lines = 30, 14
  settle()
  T.truthy(vim.api.nvim_win_get_height(win) <= 6, "at most half the screen")
  local proposed = vim.api.nvim_tabpage_list_wins(0)[2]
  T.truthy(vim.api.nvim_win_get_height(proposed) >= 3, "the text it writes is in view")
end)

S.case("the line under a preview fits the command line: no Enter to press before the question shows", function()
  T.fail_on_error_notices()
  local preview = require("dline.preview")
  -- What the preview echoes (without history: :messages does not keep it).
  local echo = vim.api.nvim_echo
  local said
  vim.api.nvim_echo = function(chunks, ...)
    said = table.concat(vim.tbl_map(function(c) return c[1] end, chunks))
    return echo(chunks, ...)
  end
  T.defer(function() vim.api.nvim_echo = echo end)
  local function shown(path)
    said = nil
    local edit = { path = path, status = "FILE_STATUS_ADDED", originalText = "", proposedText = "a\nb\nc\n" }
    local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
    p.close()
    return T.truthy(said, "a line under the preview")
  end
  vim.o.columns = 200
  T.eq(
    shown("docs/日本語/新しい😀ファイル.md"),
    "Dline proposes: docs/日本語/新しい😀ファイル.md (new, +3 -0)  ga approve · gr deny · gA/gR with feedback · q close",
    "the whole line on a wide screen"
  )
  -- Wider than the command line (a wide path, an emoji): Neovim would say "Press ENTER".
  vim.o.columns = 120
  local line = shown("docs/日本語/新しい😀ファイル.md")
  T.truthy(vim.fn.strdisplaywidth(line) <= vim.v.echospace, ("%q fits in %d cells"):format(line, vim.v.echospace))
  T.contains(line, "docs/日本語/新しい😀ファイル.md (new, +3 -0)", "the path and the numbers")
  T.contains(line, "ga approve · gr deny", "the keys, shorter")
  -- A path longer than the line: its end (the file's name) and the numbers stay.
  local deep = ("very-long-folder-name/"):rep(8) .. "file.txt"
  line = shown(deep)
  T.truthy(vim.fn.strdisplaywidth(line) <= vim.v.echospace, ("%q fits in %d cells"):format(line, vim.v.echospace))
  T.matches(line, "^Dline proposes: ….*/file%.txt %(new, %+3 %-0%)$", "the path's end and the numbers")
  vim.o.columns = 30
  line = shown(deep)
  T.truthy(vim.fn.strdisplaywidth(line) <= vim.v.echospace, ("%q fits in %d cells"):format(line, vim.v.echospace))
end)

S.case("a preview closed from another tab page leaves you there; from its own tab, back to where it opened", function()
  T.fail_on_error_notices()
  local preview = require("dline.preview")
  local edit = { path = "a.txt", status = "FILE_STATUS_MODIFIED", originalText = "a\n", proposedText = "b\n" }
  local first = vim.api.nvim_get_current_tabpage()
  vim.cmd("tabnew")
  local other = vim.api.nvim_get_current_tabpage()
  vim.api.nvim_set_current_tabpage(first)
  -- Opened from the first tab page; answered (ga in the chat there) from the other one.
  local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
  T.truthy(vim.api.nvim_get_current_tabpage() ~= first, "the preview's own tab page")
  vim.api.nvim_set_current_tabpage(other)
  p.close()
  T.eq(vim.api.nvim_get_current_tabpage(), other, "still where the answer was given")
  T.eq(#vim.api.nvim_list_tabpages(), 2, "the preview's tab page closed")
  -- Answered from the preview itself: back to where it was opened from.
  vim.api.nvim_set_current_tabpage(first)
  p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
  p.close()
  T.eq(vim.api.nvim_get_current_tabpage(), first, "back where it was opened from")
  T.eq(#vim.api.nvim_list_tabpages(), 2, "the preview's tab page closed")
end)

--- What `win` shows on its first `count` screen rows, at its last column (past the text):
--- { char, attr } each (attr is Neovim's number for the highlight drawn there).
local function row_ends(win, count)
  vim.cmd("redraw")
  local pos, width = vim.fn.win_screenpos(win), vim.api.nvim_win_get_width(win)
  local out = {}
  for row = pos[1], pos[1] + count - 1 do
    local col = pos[2] + width - 2
    table.insert(out, { vim.fn.nr2char(vim.fn.screenchar(row, col)), vim.fn.screenattr(row, col) })
  end
  return out
end

S.case("a new file's preview shows every line added, blank ones too; an emptied file every line removed", function()
  T.fail_on_error_notices()
  vim.o.columns, vim.o.lines = 120, 30
  local preview = require("dline.preview")
  local function check(edit, count, what)
    local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
    local wins = vim.api.nvim_tabpage_list_wins(0)
    T.eq(#wins, 2, what .. ": two windows")
    local current, proposed = wins[1], wins[2]
    if edit.proposedText == "" then
      current, proposed = proposed, current
    end
    local text_rows, filler_rows = row_ends(proposed, count), row_ends(current, count)
    p.close()
    -- Every line of the text: the same highlight (DiffAdd), none drawn plain or as changed.
    local added = text_rows[1][2]
    T.truthy(added ~= 0, what .. ": the first line is highlighted")
    for i, cell in ipairs(text_rows) do
      T.eq(cell, { " ", added }, ("%s: line %d shown as added"):format(what, i))
    end
    -- Across from each, a filler line: nothing was there.
    local fill = filler_rows[1]
    for i, cell in ipairs(filler_rows) do
      T.eq(cell, fill, ("%s: filler across line %d"):format(what, i))
    end
    T.eq(fill[1], "-", what .. ": the filler's character")
  end
  local added = { path = "new.md", status = "FILE_STATUS_ADDED", originalText = "" }
  check(vim.tbl_extend("force", added, { proposedText = "# Title\n\nText.\n\n" }), 4, "blank lines")
  check(vim.tbl_extend("force", added, { proposedText = "one\ntwo\n" }), 2, "no blank line")
  check(vim.tbl_extend("force", added, { proposedText = "\n\n" }), 2, "only blank lines")
  check({
    path = "old.md",
    status = "FILE_STATUS_MODIFIED",
    originalText = "a\n\nb\n",
    proposedText = "",
  }, 3, "emptied")
end)

--- What the preview of `edit` shows: each window's lines, and which of the first `n` lines of
--- the proposed side the diff marks as changed; the preview is closed again.
local function preview_shows(preview, edit, n)
  local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
  local wins = vim.api.nvim_tabpage_list_wins(0)
  local lines, changed = {}, {}
  for i, win in ipairs(wins) do
    lines[i] = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
  end
  vim.api.nvim_win_call(wins[2], function()
    for lnum = 1, n do
      if vim.fn.diff_hlID(lnum, 1) ~= 0 then table.insert(changed, lnum) end
    end
  end)
  p.close()
  return lines, changed
end

S.case("the preview of an edit of a CRLF file shows the line it changes, without ^M, open or not", function()
  T.fail_on_error_notices()
  local preview = require("dline.preview")
  local original, proposed = "one\r\ntwo\r\nthree\r\n", "one\r\nTWO\r\nthree\r\n"
  local edit = { path = "win.txt", status = "FILE_STATUS_MODIFIED", originalText = original, proposedText = proposed }
  local function shown(what)
    local lines, changed = preview_shows(preview, edit, 3)
    T.eq(lines, { { "one", "two", "three" }, { "one", "TWO", "three" } }, what .. ": the lines, no ^M")
    T.eq(changed, { 2 }, what .. ": only the changed line differs")
  end
  shown("not open")
  -- Open in a buffer (read as a CRLF file): your buffer against the proposed text.
  local path = workspace_file("win.txt", original)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  T.eq(vim.bo.fileformat, "dos", "your buffer reads it as CRLF")
  shown("open")
  -- A change of line endings is not hidden: every line it changes differs.
  edit.proposedText = "one\nTWO\nthree\n"
  local p = preview.open({ edits = { edit } }, vim.loop.cwd(), function() end)
  local wins = vim.api.nvim_tabpage_list_wins(0)
  local differ = 0
  vim.api.nvim_win_call(wins[2], function()
    for lnum = 1, 3 do
      if vim.fn.diff_hlID(lnum, 1) ~= 0 then differ = differ + 1 end
    end
  end)
  p.close()
  T.eq(differ, 3, "CRLF to LF: every line differs")
end)

S.case(
  "the preview of an edit of a file with a byte order mark shows no <feff>: only the changed line differs",
  function()
    T.fail_on_error_notices()
    local preview = require("dline.preview")
    local bom = "\239\187\191"
    local original, proposed = bom .. "alpha\nbeta\n", bom .. "alpha\nBETA\n"
    local edit = { path = "bom.txt", status = "FILE_STATUS_MODIFIED", originalText = original, proposedText = proposed }
    local function shown(what)
      local lines, changed = preview_shows(preview, edit, 2)
      T.eq(lines, { { "alpha", "beta" }, { "alpha", "BETA" } }, what .. ": the lines, no <feff>")
      T.eq(changed, { 2 }, what .. ": only the changed line differs")
    end
    shown("not open")
    -- Open in a buffer: Neovim reads the mark into 'bomb'; the proposed side is shown the same way.
    vim.cmd("edit " .. vim.fn.fnameescape(workspace_file("bom.txt", original)))
    T.eq(vim.bo.bomb, true, "your buffer keeps the mark in 'bomb'")
    shown("open")
  end
)

S.case("the preview's keymaps answer: gr in the diff denies, ga approves the next change", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  T.configure_model(s, {
    { text = "Updating.", toolCalls = { replace } },
    {
      text = "Then a new file.",
      toolCalls = { { name = "write_to_file", input = { path = "new.txt", content = "fresh\n" } } },
    },
    done(),
  })
  -- The picker is dismissed: the preview stays, and its keys answer.
  T.script_select(function() return nil end)
  local controller = new_task("Greet the world")
  local function press_in_preview(keys, what)
    T.wait(
      function() return #diff_windows() == 2 and vim.api.nvim_buf_get_name(0):find("^dline://proposed/") ~= nil end,
      "the preview of " .. what
    )
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  end
  press_in_preview("gr", "the edit")
  T.wait(function() return controller.chat:text():find("[denied]", 1, true) ~= nil end, "the denial")
  press_in_preview("ga", "the new file")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(T.read(file), "hello\n", "denied: unchanged")
  T.eq(T.read(vim.loop.cwd() .. "/new.txt"), "fresh\n", "approved: written")
  T.eq(#diff_windows(), 0, "no preview left")
end)

S.case("a command approval shows the exact command line and its folder, in the prompt and in the chat", function()
  local s = session()
  T.configure_model(s, {
    {
      toolCalls = {
        { name = "execute_command", input = { command = "echo one && echo two", requires_approval = true } },
      },
    },
    done(),
  })
  local prompt, chat_text
  local controller
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" then
      prompt = opts.prompt
      chat_text = controller and controller.chat:text()
      return ask.APPROVE
    end
  end)
  controller = new_task("Run it")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(prompt, "Dline wants to run: echo one && echo two (in " .. vim.loop.cwd() .. ")", "the prompt")
  T.contains(chat_text, ">> Run this command?", "the chat asks")
  T.contains(chat_text, "   $ echo one && echo two\n   in " .. vim.loop.cwd(), "the exact command line and folder")
  T.contains(controller.chat:text(), "### $ echo one && echo two  [done]", "the row names the command once")
end)

S.case("an open buffer holds the new text once the tool wrote it, without :checktime", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  T.configure_model(s, {
    { toolCalls = { replace } },
    {
      toolCalls = {
        {
          name = "execute_command",
          input = { command = "printf 'by a command\\n' > hello.txt", requires_approval = false },
        },
      },
    },
    done(),
  })
  local seen_after_edit
  T.script_select(function(_, opts)
    if opts.kind == "dline.approval" and opts.prompt:find("run:", 1, true) then
      seen_after_edit = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
    return ask.APPROVE
  end)
  vim.cmd("split")
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(seen_after_edit, { "hello, world" }, "the buffer after the edit")
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "by a command" }, "the buffer after a command changed the file")
  T.eq(vim.bo[buf].modified, false, "not modified")
end)

S.case("a command that deletes open files: an unmodified buffer goes, a modified one is kept and marked", function()
  local s = session()
  vim.o.hidden = true
  local old, mine = workspace_file("old.js", "old\n"), workspace_file("mine.js", "mine\n")
  -- A buffer of a file not written yet: no command deleted it, it stays.
  vim.cmd("edit " .. vim.fn.fnameescape(vim.loop.cwd() .. "/new.js"))
  local new_buf = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(mine))
  local mine_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(mine_buf, 0, -1, false, { "my own words" })
  vim.cmd("edit " .. vim.fn.fnameescape(old))
  local old_buf = vim.api.nvim_get_current_buf()
  T.configure_model(s, {
    {
      toolCalls = {
        {
          name = "execute_command",
          -- It deletes them once the editor has seen it start (the file "go").
          input = {
            command = "while [ ! -e go ]; do sleep 0.02; done; rm old.js mine.js",
            requires_approval = true,
          },
        },
      },
    },
    done(),
  })
  local notices = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(notices, msg)
    return notify(msg, level)
  end
  T.script_select(function() return ask.APPROVE end)
  vim.cmd("split")
  local controller = new_task("Remove the old files")
  controller:on_event(function(event)
    if event.toolStarted then T.write(vim.loop.cwd() .. "/go", "") end
  end)
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(T.read(old), nil, "old.js deleted")
  T.eq(T.read(mine), nil, "mine.js deleted, not written back")
  T.truthy(
    not vim.api.nvim_buf_is_valid(old_buf),
    "old.js's buffer (no unsaved changes) wiped, not showing a file that is gone"
  )
  T.eq(vim.api.nvim_buf_get_lines(mine_buf, 0, -1, false), { "my own words" }, "your text kept")
  T.eq(vim.bo[mine_buf].modified, true, "still modified")
  T.eq(vim.b[mine_buf].dline_not_on_disk, true, "marked as not on disk")
  T.truthy(vim.api.nvim_buf_is_valid(new_buf), "the buffer of a file never written stays")
  local told = table.concat(notices, "\n")
  T.contains(told, "The command deleted old.js: its buffer (no unsaved changes) was closed", "said so")
  T.contains(told, "The command deleted mine.js, but its buffer has unsaved changes: your text was kept", "said so")
end)

S.case(
  "a buffer with unsaved changes is never replaced: the core refuses the edit, the model reads why, the user is told",
  function()
    local s = session()
    local file = workspace_file("hello.txt", "hello\n")
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "my own words" })
    local server = T.configure_model(s, { { toolCalls = { replace } }, { text = "I will wait until you save it." } })
    local notices = {}
    local notify = vim.notify
    vim.notify = function(msg, level)
      table.insert(notices, msg)
      return notify(msg, level)
    end
    local selects = T.script_select(function() return ask.APPROVE end)
    vim.cmd("split")
    local controller = new_task("Greet the world")
    wait_status(controller, "TASK_STATUS_COMPLETED")
    T.eq(#selects, 0, "nothing to approve: refused before asking")
    T.eq(T.read(file), "hello\n", "the file is untouched")
    T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "my own words" }, "the buffer is untouched")
    T.contains(controller.chat:text(), "[failed]", "the call failed")
    T.contains(
      table.concat(notices, "\n"),
      "Dline did not edit hello.txt: it has unsaved changes here",
      "the user is told"
    )
    local requests = T.model_requests(server)
    T.contains(vim.json.encode(requests[2].body), "has unsaved changes in the user's editor", "the model reads why")
  end
)

S.case("a buffer modified while an approval waits is reported at once, and the approved edit is refused", function()
  local s = session()
  local file = workspace_file("hello.txt", "hello\n")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  T.configure_model(s, { { toolCalls = { replace } }, { text = "Waiting for your save." } })
  require("dline").config().prompt_on_ask = false
  local controller = new_task("Greet the world")
  wait_status(controller, "TASK_STATUS_WAITING")
  -- The user starts typing in the file; the plugin reports it (BufModifiedSet).
  local calls = {}
  local call = s.call
  s.call = function(self, service, method, request, cb, opts)
    if method == "UpdateEditorState" then
      local entry = { request = request }
      table.insert(calls, entry)
      return call(self, service, method, request, function(err, res)
        entry.done = true
        cb(err, res)
      end, opts)
    end
    return call(self, service, method, request, cb, opts)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "typing" })
  T.wait(function() return calls[1] and calls[1].done end, "the report of the unsaved file")
  T.eq(calls[1].request.editor.unsavedFiles, { file }, "the unsaved file")
  vim.cmd("Dline approve")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  T.eq(T.read(file), "hello\n", "not written")
  T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "typing" }, "the buffer is the user's")
  T.contains(controller.chat:text(), "has unsaved changes in the user's editor", "the refusal on the row")
end)

S.case("a range, #buffer, #file: and the open and visible files reach the model", function()
  local s = session()
  local app = workspace_file("app.py", "import os\n\ndef main():\n    print('hi')\n")
  workspace_file("notes.md", "# Notes\nremember\n")
  local server = T.configure_model(s, { { text = "It prints hi." }, { text = "Got the buffer and the notes." } })
  vim.cmd("edit " .. vim.fn.fnameescape(app))
  local app_buf = vim.api.nvim_get_current_buf()
  vim.cmd("3,4Dline new explain this")
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil and controller.status == "TASK_STATUS_COMPLETED"
  end, "the first task")
  local first = vim.json.encode(T.model_requests(server)[1].body)
  T.contains(
    first,
    "explain this\\n\\nFile: app.py (lines 3-4)\\n```python\\ndef main():\\n    print('hi')\\n```",
    "the range"
  )
  T.contains(first, "# Visible files in the editor\\napp.py", "visible files")
  T.contains(first, "# Files open in the editor\\napp.py", "open files")
  -- #buffer from the chat input means the file buffer you were in (unsaved text included).
  vim.api.nvim_buf_set_lines(app_buf, 0, 1, false, { "import sys" })
  controller:send("look at #buffer and #file:notes.md")
  T.wait(
    function() return #T.model_requests(server) >= 2 and controller.status == "TASK_STATUS_COMPLETED" end,
    "the second answer"
  )
  local second = vim.json.encode(T.model_requests(server)[2].body)
  T.contains(second, "look at `app.py` and `notes.md`", "the references named")
  T.contains(second, "File: app.py\\n```python\\nimport sys\\n", "the buffer as it is now")
  T.contains(second, "# Notes\\nremember\\n```", "the file's text")
  T.contains(second, "File: notes.md\\n```", "the file")
end)

S.case(
  "a file, buffer or range too large for a message, or a binary file, is named with its size, not inlined",
  function()
    local context = require("dline.context")
    local line = ("x"):rep(99) .. "\n"
    local big = workspace_file("big.log", line:rep(3000)) -- 300,000 bytes
    workspace_file("small.txt", "small\n")
    workspace_file("image.png", "\137PNG\r\n\26\n\0\0\0\rIHDR")
    local text = T.truthy(context.expand("see #file:big.log and #file:image.png and #file:small.txt"), "expanded")
    T.contains(text, "File: big.log (300,000 bytes: too large to include, read it with read_file)", "the large file")
    T.contains(text, "File: image.png (binary, 16 bytes: not included)", "the binary file")
    T.contains(text, "File: small.txt\n```\nsmall\n```", "the small file, whole")
    T.truthy(not text:find("xxxxx", 1, true), "nothing of the large file's text")
    vim.cmd("edit " .. vim.fn.fnameescape(big))
    local buf = vim.api.nvim_get_current_buf()
    T.eq(
      context.expand("see #buffer", buf),
      "see `big.log`\n\nFile: big.log (300,000 bytes: too large to include, read it with read_file)",
      "the large buffer"
    )
    T.eq(
      context.range_block(buf, 1, 2900),
      "File: big.log (lines 1-2900) (290,000 bytes: too large to include, read it with read_file)",
      "the large range"
    )
    T.eq(context.range_block(buf, 5, 5), "File: big.log (line 5)\n```\n" .. line:sub(1, -2) .. "\n```", "a small range")
  end
)

S.case("#file: references in a sentence leave its punctuation out of the path", function()
  local context = require("dline.context")
  workspace_file("a.lua", "return 1\n")
  workspace_file("b.lua", "return 2\n")
  workspace_file("odd,", "odd\n")
  local text = T.truthy(context.expand("compare #file:a.lua, #file:b.lua. And (#file:odd,)"), "expanded")
  T.contains(text, "compare `a.lua`, `b.lua`. And (`odd,`)", "the sentence")
  -- (Neovim 0.7 has no filetype for a file that is not loaded: no "lua" after the fence.)
  T.matches(text, "File: a%.lua\n```%l*\nreturn 1\n```", "a.lua")
  T.matches(text, "File: b%.lua\n```%l*\nreturn 2\n```", "b.lua")
  T.contains(text, "File: odd,\n```\nodd\n```", "a file whose name ends with a comma")
end)

S.case(":'<,'>Dline add puts the lines in the chat input; :Dline send with a range sends them", function()
  local s = session()
  local app = workspace_file("app.py", "a = 1\nb = 2\nc = 3\n")
  local server = T.configure_model(s, { { text = "Noted." }, { text = "Noted again." } })
  vim.cmd("edit " .. vim.fn.fnameescape(app))
  local controller = new_task("hello")
  wait_status(controller, "TASK_STATUS_COMPLETED")
  vim.cmd("wincmd p")
  vim.cmd("edit " .. vim.fn.fnameescape(app))
  vim.cmd("2Dline add")
  local input = require("dline.sidebar").input_buffer()
  T.eq(
    vim.api.nvim_buf_get_lines(input, 0, -1, false),
    { "File: app.py (line 2)", "```python", "b = 2", "```" },
    "the input holds the range"
  )
  vim.cmd("edit " .. vim.fn.fnameescape(app))
  vim.cmd("1,3Dline send what are these?")
  T.wait(function() return #T.model_requests(server) >= 2 end, "the message")
  T.contains(
    vim.json.encode(T.model_requests(server)[2].body),
    "what are these?\\n\\nFile: app.py (lines 1-3)",
    "the range sent"
  )
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  vim.cmd("3Dline history")
  T.contains(messages[1], "history takes no range", "other commands refuse a range")
end)

S.case("a deleted file's buffer is found by its exact name ([id].js), and its last window stays open", function()
  local root = vim.loop.cwd()
  local route, other = workspace_file("[id].js", "route\n"), workspace_file("i.js", "other\n")
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  local other_buf = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(route))
  local route_buf = vim.api.nvim_get_current_buf()
  vim.cmd("bwipeout " .. other_buf)
  vim.cmd("badd " .. vim.fn.fnameescape(other))
  other_buf = vim.fn.bufnr("^" .. other .. "$")
  os.remove(route)
  local _, _, warning = require("dline.buffers").reload(root, { "[id].js" }, "The restore", { quiet = true })
  T.truthy(not vim.api.nvim_buf_is_valid(route_buf), "[id].js's buffer wiped")
  T.truthy(vim.api.nvim_buf_is_valid(other_buf), "i.js's buffer (matched by [id].js as a pattern) left alone")
  T.eq(#vim.api.nvim_list_wins(), 1, "the window stays")
  T.eq(vim.api.nvim_get_current_buf(), other_buf, "showing the other listed buffer")
  T.eq(warning, "The restore deleted [id].js: its buffer (no unsaved changes) was closed", "said so")
  -- Deleted too, the only listed buffer: the window shows an empty buffer.
  os.remove(other)
  require("dline.buffers").reload(root, { "i.js" }, "The restore", { quiet = true })
  T.eq(#vim.api.nvim_list_wins(), 1, "the window stays")
  T.eq(vim.api.nvim_buf_get_name(0), "", "an empty buffer")
  T.eq(T.read(other), nil, "nothing written")
end)

S.case(
  "a deleted file that only a quickfix entry named (never opened) is not said to have had its buffer closed",
  function()
    local root = vim.loop.cwd()
    local readme = workspace_file("Readme.md", "read me\n")
    -- Compare's "Changes since snapshot" list makes such a buffer: unloaded, unlisted.
    vim.fn.setqflist({}, " ", { title = "Changes since snapshot", items = { { filename = readme, lnum = 1 } } })
    local buf = vim.fn.bufnr("^" .. readme .. "$")
    T.truthy(buf ~= -1 and not vim.api.nvim_buf_is_loaded(buf) and not vim.bo[buf].buflisted, "the entry's buffer")
    os.remove(readme)
    local _, _, warning = require("dline.buffers").reload(root, { "Readme.md" }, "The restore", { quiet = true })
    T.eq(warning, nil, "nothing to say: it was never open")
    T.truthy(not vim.api.nvim_buf_is_valid(buf), "wiped all the same")
  end
)

return S
