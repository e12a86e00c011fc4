--- *dline.sidebar* The one chat sidebar: a chat window and the input area below it.
---
--- What it does: shows a task's chat in the sidebar of the current tab page (creating it once,
--- then switching its buffer, so a new task never adds windows), toggles it, keeps the input
--- area (one buffer for every chat) under the chat, and defines the keymaps of both.
--- What it does not do: render chats (dline.chat) or talk to the sidecar (dline.task).

local M = {}
local H = {}

H.input = nil -- the input buffer
H.current = nil -- the dline.Chat the sidebar shows last

local function dline() return require("dline") end

--- The input area's buffer (created once).
function M.input_buffer()
  if H.input and vim.api.nvim_buf_is_valid(H.input) then return H.input end
  local existing = vim.fn.bufnr("dline://input")
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, "dline://input")
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "dline-input"
  H.input = buf
  local map = function(mode, lhs, fn, desc)
    vim.keymap.set(mode, lhs, fn, { buffer = buf, desc = "Dline: " .. desc, nowait = true })
  end
  map("n", "<CR>", function() M.send(H.current) end, "send")
  map("i", "<C-s>", function()
    vim.cmd("stopinsert")
    M.send(H.current)
  end, "send")
  map("n", "q", M.close, "close the chat")
  -- :bdelete empties it and clears its options and keymaps: the next one is a new buffer.
  vim.api.nvim_create_autocmd({ "BufDelete", "BufUnload" }, {
    buffer = buf,
    once = true,
    callback = function()
      if H.input == buf then H.input = nil end
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(buf) and not vim.api.nvim_buf_is_loaded(buf) then
          pcall(vim.api.nvim_buf_delete, buf, { force = true })
        end
      end)
    end,
  })
  return buf
end

--- The chat shown in the sidebar last (the target of the input area).
function M.current()
  if H.current and vim.api.nvim_buf_is_valid(H.current.buf) then return H.current end
end

--- Sends the input area's text to `chat`'s task and clears it. `chat.on_send(text, restore)`
--- calls `restore` when the send was refused: the words come back (unless new ones were typed).
function M.send(chat)
  local buf = M.input_buffer()
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  if text == "" then return end
  if not chat then return dline().notify("no chat to send to: start a task with :Dline new", vim.log.levels.WARN) end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  local restore = function()
    if not vim.api.nvim_buf_is_valid(buf) then return end
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    if #now == 1 and now[1] == "" then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
    end
  end
  if chat.on_send then chat.on_send(text, restore) end
end

-- Windows -------------------------------------------------------------------------------

--- Whether `buf` is a task's chat (its name, which no filetype plugin changes).
function M.is_chat(buf)
  return vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_name(buf):find("^dline://chat/") ~= nil
end

--- The sidebar's windows in the current tab page: the window showing a chat, and the input
--- window (the one showing the input buffer).
function M.windows()
  local chat_win, input_win
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if not chat_win and M.is_chat(buf) then chat_win = win end
    if buf == H.input then input_win = win end
  end
  return chat_win, input_win
end

--- Sets a window option of `win` only: nvim_win_set_option sets the global value too, which
--- every window opened later would take (the chat's folds, no numbers, a fixed width).
function H.set_local(win, name, value)
  vim.api.nvim_win_call(win, function() vim.api.nvim_set_option_value(name, value, { scope = "local" }) end)
end

function H.chat_window_options(win)
  local o = function(name, value) H.set_local(win, name, value) end
  o("wrap", true)
  o("linebreak", true)
  o("number", false)
  o("relativenumber", false)
  o("signcolumn", "no")
  o("winfixwidth", true)
  -- Tool output (lines starting with the output prefix) is folded until opened with zo.
  o("foldmethod", "expr")
  o("foldexpr", "getline(v:lnum)=~#'^  │'?1:0")
  o("foldlevel", 0)
  o("foldenable", true)
  o(
    "foldtext",
    "'  │ … '.(v:foldend-v:foldstart+1).(v:foldend==v:foldstart?' line':' lines').' of output (zo opens)'"
  )
  o("fillchars", "fold: ")
end

--- Shows `chat` in the sidebar (see config.chat): its windows are reused when they exist.
function M.show(chat, opts)
  opts = opts or dline().config().chat
  H.current = chat
  local input = M.input_buffer()
  local chat_win, input_win = M.windows()
  local created = not chat_win
  if not chat_win then
    if opts.position == "right" or opts.position == "left" then
      vim.cmd((opts.position == "right" and "botright" or "topleft") .. " vsplit")
      vim.api.nvim_win_set_width(0, M.fit(opts.width, vim.o.columns))
      vim.t.dline_sized = vim.o.columns .. "x" .. vim.o.lines
    elseif opts.position == "below" then
      vim.cmd("botright split")
      vim.api.nvim_win_set_height(0, M.fit(opts.height, vim.o.lines))
      vim.t.dline_sized = vim.o.columns .. "x" .. vim.o.lines
    elseif opts.position == "tab" then
      vim.cmd("tabnew")
    end
    chat_win = vim.api.nvim_get_current_win()
    -- The window may have shown the input area: it becomes the chat, the input goes below.
    if chat_win == input_win then input_win = nil end
  end
  vim.api.nvim_win_set_buf(chat_win, chat.buf)
  H.chat_window_options(chat_win)
  vim.api.nvim_set_current_win(chat_win)
  if not input_win then
    vim.cmd("belowright split")
    input_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(input_win, input)
    vim.api.nvim_win_set_height(input_win, opts.input_height)
    H.set_local(input_win, "winfixheight", true)
    H.set_local(input_win, "number", false)
    vim.api.nvim_set_current_win(chat_win)
  end
  if created and opts.position == "below" then
    -- Splitting the input area off the chat made every window of the column as high as the
    -- others ('equalalways'): the chat gets its height back, and keeps it when you split.
    vim.api.nvim_win_set_height(chat_win, M.fit(opts.height, vim.o.lines))
    H.set_local(chat_win, "winfixheight", true)
  end
  H.watch_close()
  H.watch_resize()
  -- Show its end.
  pcall(vim.api.nvim_win_set_cursor, chat_win, require("dline.chat").end_position(chat.buf))
end

--- The chat's size (width, or height below) in a screen of `total` columns (or lines): the
--- configured size, but never more than half the screen, so the other windows stay usable.
function M.fit(configured, total) return math.max(1, math.min(configured, math.floor(total / 2))) end

--- Gives the sidebar of the current tab page its size again for the screen's size now: the
--- chat keeps a fixed width ('winfixwidth'), so Neovim alone would squeeze the other windows
--- when the terminal shrinks, and never give the chat its width back when it grows. (Other
--- tab pages: when they are entered.)
function M.resize()
  local opts = dline().config().chat
  local vertical = opts.position == "right" or opts.position == "left"
  if not vertical and opts.position ~= "below" then return end
  local chat_win = M.windows()
  -- Alone with its input area, the chat has the whole screen: nothing to share.
  if not chat_win or #vim.api.nvim_tabpage_list_wins(0) <= 2 then return end
  -- Once per screen size (a tab page entered again keeps a width the user chose).
  local size = vim.o.columns .. "x" .. vim.o.lines
  if vim.t.dline_sized == size then return end
  vim.t.dline_sized = size
  if vertical then
    vim.api.nvim_win_set_width(chat_win, M.fit(opts.width, vim.o.columns))
  else
    vim.api.nvim_win_set_height(chat_win, M.fit(opts.height, vim.o.lines))
  end
end

function H.watch_resize()
  if H.resizing then return end
  H.resizing = true
  vim.api.nvim_create_autocmd({ "VimResized", "TabEnter" }, {
    group = vim.api.nvim_create_augroup("dline_sidebar_resize", { clear = true }),
    callback = function() M.resize() end,
  })
end

--- Whether the sidebar is open in the current tab page.
function M.is_open()
  local chat_win = M.windows()
  return chat_win ~= nil
end

--- Closes the sidebar's windows in the current tab page (the chats stay: :Dline toggle).
function M.close()
  local chat_win, input_win = M.windows()
  for _, win in ipairs({ input_win, chat_win }) do
    if win and vim.api.nvim_win_is_valid(win) then
      -- The last window of the tab page cannot close: it shows an empty buffer instead.
      if #vim.api.nvim_tabpage_list_wins(0) > 1 then
        vim.api.nvim_win_close(win, false)
      else
        vim.api.nvim_win_call(win, function() vim.cmd("enew") end)
      end
    end
  end
end

--- :Dline toggle: opens the sidebar with the last chat, or closes it.
function M.toggle(chat)
  if M.is_open() then return M.close() end
  chat = chat or M.current()
  if not chat then return dline().notify("no chat yet: start a task with :Dline new", vim.log.levels.WARN) end
  M.show(chat)
end

--- Closing the chat window closes the input area with it (and the other way round it stays).
function H.watch_close()
  if H.watching then return end
  H.watching = true
  vim.api.nvim_create_autocmd("WinClosed", {
    group = vim.api.nvim_create_augroup("dline_sidebar", { clear = true }),
    callback = function(args)
      local closed = tonumber(args.match)
      if not closed or not vim.api.nvim_win_is_valid(closed) then return end
      if not M.is_chat(vim.api.nvim_win_get_buf(closed)) then return end
      local tab = vim.api.nvim_win_get_tabpage(closed)
      vim.schedule(function()
        if not vim.api.nvim_tabpage_is_valid(tab) then return end
        local wins = vim.api.nvim_tabpage_list_wins(tab)
        for _, win in ipairs(wins) do
          if win ~= closed and M.is_chat(vim.api.nvim_win_get_buf(win)) then return end
        end
        for _, win in ipairs(wins) do
          if vim.api.nvim_win_get_buf(win) == H.input and #vim.api.nvim_tabpage_list_wins(tab) > 1 then
            vim.api.nvim_win_close(win, false)
          end
        end
      end)
    end,
  })
end

-- Keymaps of the chat buffer ------------------------------------------------------------

M.KEYS = {
  { "i", "input", "write in the input area" },
  { "<CR>", "input", "write in the input area" },
  { "ga", "approve", "approve the pending request (or pick an answer)" },
  { "gA", "approve_feedback", "approve with feedback" },
  { "gr", "deny", "deny the pending request" },
  { "gR", "deny_feedback", "deny with feedback" },
  { "gp", "preview", "show the proposed change again" },
  { "]a", "next_ask", "next question or approval" },
  { "[a", "prev_ask", "previous question or approval" },
  { "gc", "compare", "compare with the checkpoint under the cursor" },
  { "gs", "restore", "restore the checkpoint under the cursor" },
  { "R", "resume", "resume an interrupted, cancelled or failed task" },
  { "<C-c>", "cancel", "cancel the running task" },
  { "q", "close", "close the chat" },
  { "g?", "help", "list these keys" },
}

--- Sets the keymaps of a chat buffer (actions of dline.task on the chat's task).
function M.chat_keymaps(buf)
  for _, key in ipairs(M.KEYS) do
    vim.keymap.set(
      "n",
      key[1],
      function() require("dline.task").chat_action(key[2], buf) end,
      { buffer = buf, desc = "Dline: " .. key[3], nowait = true }
    )
  end
end

--- Moves the cursor of the current window to the next (or previous) question or approval.
function M.jump_ask(forward)
  local pattern = [[\v^(\>\> |## Question|### .*\[waiting for approval\])]]
  if vim.fn.search(pattern, forward and "W" or "bW") == 0 then
    dline().notify("no " .. (forward and "later" or "earlier") .. " question in this chat")
  end
end

return M
