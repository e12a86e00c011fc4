--- *dline.ids* Short task ids that a person can read and type.
---
--- Task ids are "<epoch ms>-<8 hex>": their first characters are a timestamp that tasks started
--- in the same day share, so the short form is the random part. Imported (Cline) ids are
--- timestamps only: their last digits differ most.

local M = {}

--- The short form of task id `id` (8 characters where possible).
---@param id string
---@return string
function M.short(id)
  id = id or ""
  local random = id:match("^%d+%-(%x+)$")
  if random then return random:sub(1, 8) end
  if id:match("^%d+$") and #id > 8 then return id:sub(-8) end
  return id:sub(1, 8)
end

--- Whether `text` names task `id`: the whole id, its short form, or a prefix of either.
function M.matches(id, text)
  if not text or text == "" then return false end
  return id == text or id:sub(1, #text) == text or M.short(id):sub(1, #text) == text
end

return M
