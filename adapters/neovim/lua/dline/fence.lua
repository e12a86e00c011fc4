--- *dline.fence* The markdown code block a text leaves open, and the line that closes it.
---
--- The chat buffer is highlighted as markdown: a fence a row leaves open (an answer cut off in
--- the middle of a code block, a model's unbalanced ```) would make every later row of the chat
--- look like code. dline.chat_render closes it at the end of a row that is complete.
--- Fences as CommonMark has them: up to 3 spaces, then 3 or more backticks (no backtick in the
--- info string after them) or tildes; closed by a run of the same character, as long or longer,
--- with nothing but spaces after it.

local M = {}

--- The fence that opens a code block on `line`, or nil.
local function opening(line)
  local run, info = line:match("^ ? ? ?(```+)(.*)$")
  if run and not info:find("`", 1, true) then return run end
  return line:match("^ ? ? ?(~~~+)")
end

local function closes(line, fence)
  local run = line:match("^ ? ? ?([`~]+) *$")
  return run ~= nil
    and run:sub(1, 1) == fence:sub(1, 1)
    and not run:find(fence:sub(1, 1) == "`" and "~" or "`", 1, true)
    and #run >= #fence
end

--- The line that closes the code block `lines` leave open, or nil when they leave none open.
---@param lines string[]
---@return string|nil
function M.closing(lines)
  local open
  for _, line in ipairs(lines) do
    if open then
      if closes(line, open) then open = nil end
    else
      open = opening(line)
    end
  end
  return open
end

return M
