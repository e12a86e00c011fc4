--- *dline.context* Code context in a message: a range of lines, `#buffer` and `#file:path`.
---
--- What it does: turns a range of a buffer into a block the model reads (the file, the lines
--- and their text), and expands the references of a prompt: `#buffer` (the buffer you were
--- in, unsaved changes included) and `#file:path` (a file, relative to the working
--- directory). Remembers the last file buffer you were in, for prompts typed in the chat.
--- What it does not do: send anything (dline.task does).

local M = {}
local H = {}

--- The most a block carries. A larger file, buffer or range is named with its size instead:
--- inlined whole it would fill the model's context (or pass the sidecar's 16 MiB message
--- limit) and the chat, and read_file reads it in parts.
M.MAX_BLOCK_BYTES = 256 * 1024

H.origin = nil -- the last file buffer entered

--- Starts remembering the last file buffer entered (the buffer `#buffer` means in the chat).
function M.track()
  if H.tracking then return end
  H.tracking = true
  vim.api.nvim_create_autocmd("BufEnter", {
    group = vim.api.nvim_create_augroup("dline_context", { clear = true }),
    callback = function(args)
      if vim.bo[args.buf].buftype == "" and vim.api.nvim_buf_get_name(args.buf) ~= "" then H.origin = args.buf end
    end,
  })
  local current = vim.api.nvim_get_current_buf()
  if vim.bo[current].buftype == "" and vim.api.nvim_buf_get_name(current) ~= "" then H.origin = current end
end

--- The buffer `#buffer` means: the current one when it is a file's, else the last file buffer entered.
function M.origin_buffer()
  local current = vim.api.nvim_get_current_buf()
  if vim.bo[current].buftype == "" and vim.api.nvim_buf_get_name(current) ~= "" then return current end
  if H.origin and vim.api.nvim_buf_is_valid(H.origin) then return H.origin end
end

function H.relative(name) return vim.fn.fnamemodify(name, ":~:.") end

function H.fence(lines)
  -- A fence longer than any backtick run in the text.
  local longest = 2
  for _, l in ipairs(lines) do
    for run in l:gmatch("`+") do
      if #run > longest then longest = #run end
    end
  end
  return string.rep("`", longest + 1)
end

function H.block(header, filetype, lines)
  local fence = H.fence(lines)
  return table.concat(
    vim.list_extend({ header, fence .. (filetype or "") }, vim.list_extend(vim.deepcopy(lines), { fence })),
    "\n"
  )
end

--- What stands for text too large for a block (M.MAX_BLOCK_BYTES) or binary: its size.
function H.left_out(header, bytes, binary)
  local size = require("dline.chat_render").bytes(bytes)
  if binary then return ("%s (binary, %s: not included)"):format(header, size) end
  return ("%s (%s: too large to include, read it with read_file)"):format(header, size)
end

--- The bytes of lines `first`..`last` of a loaded buffer, without reading them.
function H.span_bytes(buf, first, last)
  return vim.api.nvim_buf_get_offset(buf, last) - vim.api.nvim_buf_get_offset(buf, first - 1)
end

--- The block for lines `first`..`last` (1-based, inclusive) of buffer `buf`.
function M.range_block(buf, first, last)
  local name = vim.api.nvim_buf_get_name(buf)
  local where = name ~= "" and H.relative(name) or ("buffer " .. buf)
  local span = first == last and ("line %d"):format(first) or ("lines %d-%d"):format(first, last)
  local header = ("File: %s (%s)"):format(where, span)
  local bytes = H.span_bytes(buf, first, last)
  if bytes > M.MAX_BLOCK_BYTES then return H.left_out(header, bytes) end
  return H.block(header, vim.bo[buf].filetype, vim.api.nvim_buf_get_lines(buf, first - 1, last, false))
end

--- The whole of buffer `buf` as a block (unsaved changes included).
function M.buffer_block(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local header = ("File: %s"):format(name ~= "" and H.relative(name) or ("buffer " .. buf))
  local bytes = H.span_bytes(buf, 1, vim.api.nvim_buf_line_count(buf))
  if bytes > M.MAX_BLOCK_BYTES then return H.left_out(header, bytes) end
  return H.block(header, vim.bo[buf].filetype, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end

--- Whether the file at `path` is binary: a NUL byte in its first 8 KiB (as git decides).
function H.binary(path)
  local file = io.open(path, "rb")
  if not file then return false end
  local head = file:read(8192) or ""
  file:close()
  return head:find("\0", 1, true) ~= nil
end

--- A file as a block: its loaded buffer when there is one (what you see), else the file.
function M.file_block(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local buf = vim.fn.bufnr(full)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then return M.buffer_block(buf) end
  if vim.fn.filereadable(full) == 0 then return nil, ("#file:%s: no such file"):format(path) end
  local header, bytes = ("File: %s"):format(H.relative(full)), vim.fn.getfsize(full)
  local binary = H.binary(full)
  if binary or bytes > M.MAX_BLOCK_BYTES then return H.left_out(header, bytes, binary) end
  local lines = vim.fn.readfile(full, "b")
  if lines[#lines] == "" then table.remove(lines) end
  -- 0.8+; 0.7's vim.filetype.match(name, buf) sets the filetype of a buffer instead.
  local ok, ft = false, nil
  if vim.fn.has("nvim-0.8") == 1 then
    ok, ft = pcall(vim.filetype.match, { filename = full })
  end
  return H.block(header, ok and ft or "", lines)
end

--- The path a `#file:` reference names, and the punctuation of the sentence after it:
--- "#file:a.lua, #file:b.lua." names a.lua and b.lua (unless a file's name ends so).
function H.mentioned_path(word)
  local punctuation = #(word:match("[,.;:!?)%]}'\"]*$"))
  -- The longest name that is a file, else the word without its punctuation (not found).
  for n = 0, punctuation do
    local path = word:sub(1, #word - n)
    if path ~= "" and (n == punctuation or vim.fn.filereadable(vim.fn.expand(path)) == 1) then
      return path, word:sub(#word - n + 1)
    end
  end
  return word, ""
end

--- Expands `#buffer` and `#file:path` in `text`: each reference stays in the text (as the
--- file's name) and its content follows the text as a block. Returns the text, or nil and why.
function M.expand(text, origin)
  local blocks, seen = {}, {}
  local problem
  local function add(key, block, err)
    if err then problem = problem or err end
    if block and not seen[key] then
      seen[key] = true
      table.insert(blocks, block)
    end
  end
  local expanded = text:gsub("#file:(%S+)", function(word)
    local path, after = H.mentioned_path(word)
    add("file:" .. path, M.file_block(path))
    return "`" .. path .. "`" .. after
  end)
  expanded = expanded:gsub("#buffer%f[%W]", function()
    local buf = origin or M.origin_buffer()
    if not buf then
      problem = problem or "#buffer: no file buffer to send (open a file first)"
      return "#buffer"
    end
    local name = vim.api.nvim_buf_get_name(buf)
    add("buffer:" .. buf, M.buffer_block(buf))
    return "`" .. (name ~= "" and H.relative(name) or "buffer") .. "`"
  end)
  if problem then return nil, problem end
  if #blocks == 0 then return text end
  return expanded .. "\n\n" .. table.concat(blocks, "\n\n")
end

--- `text` with the range of a :Dline command (opts.range > 0) appended as a block.
function M.with_range(text, opts, buf)
  if not opts or (opts.range or 0) == 0 then return text end
  local block = M.range_block(buf or vim.api.nvim_get_current_buf(), opts.line1, opts.line2)
  if text == "" then return block end
  return text .. "\n\n" .. block
end

return M
