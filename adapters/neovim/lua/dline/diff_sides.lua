--- *dline.diff_sides* The two texts of a diff (preview, Compare) as a person should see them:
--- a side with no text at all (a new file against nothing, a deleted one against nothing) shows
--- every line of the other added, and CRLF texts show their lines as Neovim shows a CRLF file.
---
--- Why: older Neovims (0.7.2, Debian's) diff a buffer with no lines as one empty line, so the
--- first blank line of the other side shows as unchanged (and, when it has none, its first
--- line as changed from an empty one): the preview of a new file hid its blank lines from the
--- person approving it. Newer ones (0.11) diff an empty buffer as no lines, if it was never
--- given a line (a scratch buffer given "" was one empty line there too): the buffers here
--- leave an empty text unset, and `M.mark` corrects what the diff still gets wrong (nothing
--- on 0.11).
--- What it does: highlights the lines of the side with text that the diff does not show as
--- added as DiffAdd, and the empty side's only line as a filler line; the marks go when either
--- window closes (`M.clear` earlier). What it does not do: change the diff or any option.

local M = {}

M.ns = vim.api.nvim_create_namespace("dline_diff_sides")

--- The lines of `text` as a buffer holds them (no last empty line for a final newline); none
--- for an empty text.
function M.lines(text)
  if text == nil or text == "" then return {} end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then table.remove(lines) end
  return lines
end

--- Whether every line of `text` ends with CRLF (an unfinished last line aside): Neovim reads
--- such a file as 'fileformat' dos, its lines without their CR.
function M.is_crlf(text)
  if text == nil or not text:find("\r\n", 1, true) then return false end
  return not text:find("^\n") and not text:find("[^\r]\n")
end

--- Whether the two texts of a diff are shown as Neovim shows their files, CRs taken off their
--- lines ('fileformat' dos): only when both are CRLF (or one is empty), so a change of line
--- endings still shows on every line it changed. `a_dos` / `b_dos`: true when that side is a
--- file's buffer read as dos (its text then does not matter).
function M.both_crlf(a_text, b_text, a_dos, b_dos)
  local function ok(text, dos)
    if dos ~= nil then return dos end
    return text == nil or text == "" or M.is_crlf(text)
  end
  return ok(a_text, a_dos) and ok(b_text, b_dos) and (M.is_crlf(a_text) or M.is_crlf(b_text))
end

--- Puts `text` in `buf`; an empty text leaves the buffer as created (no lines at all, which
--- newer Neovims diff as nothing, where a buffer given one empty line is one empty line).
--- `crlf`: the text's lines without their CR, the buffer's 'fileformat' dos (as Neovim reads a
--- CRLF file: its buffer and this one show the same lines). A UTF-8 byte order mark goes to
--- 'bomb', as Neovim reads such a file: its first line is not shown as changed by a "<feff>".
function M.set_text(buf, text, crlf)
  if text and text:sub(1, 3) == "\239\187\191" then
    text = text:sub(4)
    vim.bo[buf].bomb = true
  end
  if crlf and text then
    text = text:gsub("\r\n", "\n")
    vim.bo[buf].fileformat = "dos"
  end
  local lines = M.lines(text)
  if #lines > 0 then vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines) end
end

--- Whether `buf` holds no text: one line, empty.
function M.is_empty(buf)
  return vim.api.nvim_buf_line_count(buf) == 1 and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
end

function M.clear(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1) end
end

--- The character of filler lines in `win` ('fillchars' diff:, "-" by default).
local function filler_char(win)
  local fill = vim.wo[win].fillchars or ""
  if fill == "" then fill = vim.o.fillchars or "" end
  return fill:match("diff:([^,]+)") or "-"
end

--- `empty_win` and `full_win` are in diff mode, `empty_win`'s buffer has no text (the caller
--- knows: a buffer with one blank line may be a file of one blank line): every line of
--- `full_win`'s buffer shows as added. `full_has_text`: whether that buffer's one empty line
--- (if so) is a line of its file (default: a buffer of one empty line has none). Returns how
--- many lines needed a mark (0 where the diff itself shows them all added).
function M.mark(empty_win, full_win, full_has_text)
  local empty_buf, full_buf = vim.api.nvim_win_get_buf(empty_win), vim.api.nvim_win_get_buf(full_win)
  if full_has_text == nil then full_has_text = not M.is_empty(full_buf) end
  if not M.is_empty(empty_buf) or not full_has_text then return 0 end
  local added = vim.fn.hlID("DiffAdd")
  local lines = vim.api.nvim_buf_get_lines(full_buf, 0, -1, false)
  local wrong = {}
  vim.api.nvim_win_call(full_win, function()
    for lnum = 1, #lines do
      if vim.fn.diff_hlID(lnum, 1) ~= added then table.insert(wrong, lnum) end
    end
  end)
  if #wrong == 0 then return 0 end
  M.clear(full_buf)
  M.clear(empty_buf)
  for _, lnum in ipairs(wrong) do
    -- Above the diff's own highlight (DiffText of a line it takes for changed).
    vim.api.nvim_buf_set_extmark(full_buf, M.ns, lnum - 1, 0, {
      end_row = lnum, -- to the start of the next line: an empty line's range is not empty
      end_col = 0,
      hl_group = "DiffAdd",
      hl_eol = true,
      priority = 4096,
    })
  end
  -- The empty side's one line stands across a line of the other side: drawn as filler.
  vim.api.nvim_buf_set_extmark(empty_buf, M.ns, 0, 0, {
    virt_text = { { filler_char(empty_win):rep(math.max(vim.o.columns, 200)), "DiffDelete" } },
    virt_text_pos = "overlay",
    hl_eol = true,
    priority = 4096,
  })
  local group = vim.api.nvim_create_augroup("dline_diff_sides_" .. empty_win .. "_" .. full_win, { clear = true })
  vim.api.nvim_create_autocmd("WinClosed", {
    group = group,
    pattern = { tostring(empty_win), tostring(full_win) },
    once = true,
    callback = function()
      M.clear(full_buf)
      M.clear(empty_buf)
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  return #wrong
end

return M
