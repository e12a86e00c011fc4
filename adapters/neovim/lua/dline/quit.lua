--- *dline.quit* Quitting Neovim while a task of this editor runs or waits for an answer.
---
--- What it does: while a task runs or waits, a command that would end Neovim (`:qa`, `:q` or
--- `:wq` in the last window, `:x`, `:wqa`, `:xa`...) marks a hidden buffer modified for the
--- time of the command, so Neovim refuses to quit as it does for unsaved changes (E37, E162;
--- `:wqa` still saves your files), then says why and what to do. The `!` forms (`:qa!`,
--- `:wqa!`, `:xa!`, `:wq!`, `:q!`) quit anyway: the task is then interrupted (:Dline resume
--- continues it).
--- How: ExitPre (fired by `:qa`, `:q`, `:wq`, `:x`, and by `:wqa`/`:xa` from Neovim 0.8 on);
--- Neovim 0.7 fires nothing before `:wqa`/`:xa` quit, so a typed command line (CmdlineLeave)
--- is read too: it catches them there, and tells a forced quit (`!`, which ExitPre cannot
--- see) from a plain one.
--- What it does not do: stop or cancel tasks.

local M = {}
local H = {}

-- Neovim names it when it refuses to quit (E162/E37): true of a task running or waiting for an answer.
H.NAME = "dline://a task has not finished"

local function dline() return require("dline") end

--- The buffer that holds the quit back: 'buftype' acwrite (a "write" of it does nothing and
--- leaves it modified, so a `:wqa` fails on it), so that Neovim counts it as unsaved;
--- unlisted, and never modified outside of a quit.
function H.guard()
  if H.buf and vim.api.nvim_buf_is_valid(H.buf) then return H.buf end
  local existing = vim.fn.bufnr(H.NAME)
  if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
  local buf = vim.api.nvim_create_buf(false, false)
  vim.api.nvim_buf_set_name(buf, H.NAME)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.api.nvim_create_autocmd("BufWriteCmd", { buffer = buf, callback = function() end })
  H.buf = buf
  return buf
end

--- The message after a refused quit: which tasks, and how to go on.
function M.message(busy)
  return ("%s %s: Neovim did not quit. :qa! quits anyway (the task is interrupted; :Dline resume continues it later), :Dline cancel stops it"):format(
    #busy == 1 and "task" or "tasks",
    table.concat(busy, ", ")
  )
end

--- Command modifiers that may come before a command: { full name, shortest abbreviation }.
H.MODIFIERS = {
  { "aboveleft", 3 },
  { "belowright", 3 },
  { "botright", 2 },
  { "browse", 3 },
  { "confirm", 4 },
  { "hide", 3 },
  { "horizontal", 3 },
  { "keepalt", 5 },
  { "keepjumps", 5 },
  { "keepmarks", 3 },
  { "keeppatterns", 5 },
  { "leftabove", 5 },
  { "lockmarks", 3 },
  { "noautocmd", 3 },
  { "noswapfile", 3 },
  { "rightbelow", 6 },
  { "sandbox", 3 },
  { "silent", 3 },
  { "tab", 3 },
  { "topleft", 2 },
  { "unsilent", 3 },
  { "verbose", 4 },
  { "vertical", 4 },
}

--- Commands that end Neovim (`:q`, `:wq` and `:x` only in the last window): { full name,
--- shortest abbreviation, whether Neovim 0.7 fires ExitPre for it }.
H.QUITS = {
  { "quit", 1, true },
  { "wq", 2, true },
  { "xit", 1, true },
  { "exit", 3, true },
  { "qall", 2, true },
  { "quitall", 5, true },
  { "wqall", 3, false },
  { "xall", 2, false },
}

--- Whether `word` is `name` or one of its abbreviations down to `min` letters.
function H.abbreviates(word, name, min) return #word >= min and name:sub(1, #word) == word end

function H.find(list, word)
  for _, entry in ipairs(list) do
    if H.abbreviates(word, entry[1], entry[2]) then return entry end
  end
end

--- The quit commands of a command line, each { forced = `!` given, exit_pre = whether
--- Neovim 0.7 fires ExitPre for it }. Reads `|`-separated commands, skipping ranges (none of
--- these takes one) and modifiers; anything else is not a quit.
function M.quits(line)
  local found = {}
  for _, piece in ipairs(vim.split(line, "|", { plain = true })) do
    local rest = piece:gsub("^[%s:]+", "")
    while true do
      local word, bang, after = rest:match("^%d*(%a+)(!?)(.*)$")
      if not word then break end
      local modifier = H.find(H.MODIFIERS, word)
      if modifier and after:match("^%s") then
        rest = after:gsub("^[%s:]+", "")
      else
        local quit = H.find(H.QUITS, word)
        -- A quit command ends its name: space, end, or (after `!`) anything.
        if quit and (after == "" or after:match("^%s") or bang == "!") then
          table.insert(found, { forced = bang == "!", exit_pre = quit[3] })
        end
        break
      end
    end
  end
  return found
end

--- Marks the guard buffer modified for the time of the command running now, and once it is
--- over (Neovim did not quit), unmarks it, shows the window's own buffer again and says why.
--- Once per command, however many hooks call it.
function H.hold(tasks)
  if H.holding then return end
  H.holding = true
  local buf = H.guard()
  local win, shown, alt = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf(), vim.fn.bufnr("#")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "(dline) " .. M.message(tasks) })
  vim.bo[buf].modified = true
  -- Runs only when Neovim did not quit.
  vim.schedule(function()
    H.holding = false
    if not vim.api.nvim_buf_is_valid(buf) then return end
    vim.bo[buf].modified = false
    if vim.v.exiting ~= vim.NIL then return end
    -- Neovim shows the "unsaved" buffer in the window: the window shows its own again.
    for _, w in ipairs(vim.fn.win_findbuf(buf)) do
      local back = (w == win and vim.api.nvim_buf_is_valid(shown)) and shown or vim.fn.bufnr("#")
      if back > 0 and back ~= buf then
        -- keepalt: CTRL-^ does not lead to the hidden buffer.
        vim.api.nvim_win_call(w, function() pcall(vim.cmd, "keepalt buffer " .. back) end)
      end
    end
    -- ...and its alternate buffer (CTRL-^) is its own again.
    local name = alt > 0 and alt ~= buf and vim.api.nvim_buf_is_valid(alt) and vim.api.nvim_buf_get_name(alt) or ""
    if name ~= "" and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_call(win, function()
        if vim.fn.bufnr("#") ~= alt then pcall(vim.cmd, "balt " .. vim.fn.fnameescape(name)) end
      end)
    end
    dline().notify(M.message(tasks), vim.log.levels.WARN)
  end)
end

--- Holds quitting back while `busy()` names tasks ({ "1a2b3c4d (running)", ... }).
function M.watch(busy)
  if H.watching then return end
  H.watching = true
  local group = vim.api.nvim_create_augroup("dline_quit", { clear = true })
  -- A typed command line, just before it runs.
  vim.api.nvim_create_autocmd("CmdlineLeave", {
    group = group,
    callback = function()
      if vim.fn.getcmdtype() ~= ":" or (vim.v.event and vim.v.event.abort) then return end
      local quits = M.quits(vim.fn.getcmdline())
      if #quits == 0 then return end
      local forced, unseen = false, false
      for _, q in ipairs(quits) do
        forced = forced or q.forced
        unseen = unseen or not q.exit_pre
      end
      if forced then
        -- ExitPre cannot tell `:wq!` from `:wq`: it lets this command quit.
        H.forced = true
        vim.schedule(function() H.forced = false end)
        return
      end
      if not unseen then return end
      local tasks = busy()
      if #tasks > 0 then H.hold(tasks) end
    end,
  })
  vim.api.nvim_create_autocmd("ExitPre", {
    group = group,
    callback = function()
      if H.forced then return end
      local tasks = busy()
      if #tasks > 0 then H.hold(tasks) end
    end,
  })
end

return M
