--- *dline.checkpoint_notes* Tells the person, once, that the core repaired a workspace's checkpoints.
---
--- What it does: checkpoints that are ready after the core repaired their store (a damaged
--- index rebuilt, a damaged HEAD put back, a damaged repository set aside and started again)
--- say so in their status's sentence, with where the damaged files were kept. That sentence is
--- shown as an information notice (`:Dline messages` keeps it whole) the first time a status
--- event or a GetStatus answer carries it in this Neovim; plain ready shows nothing.
--- What it does not do: show other states (the chat header does) or repair anything.

local visible = require("dline.visible")

local M = {}
local H = {}

--- The core's sentence for checkpoints that are ready with nothing more to say.
M.READY = "Checkpoints are ready."

H.shown = {} -- sentences told in this session

--- The sentence of a ready status (a checkpointStatus event or a GetStatus answer, Connect JSON)
--- that says more than "ready"; nil for plain ready and for every other state.
function M.note(status)
  if type(status) ~= "table" then return nil end
  local state = (status.state or ""):gsub("^CHECKPOINT_STATE_", ""):lower()
  local message = vim.trim(status.message or "")
  if state ~= "ready" or message == "" or message == M.READY then return nil end
  return message
end

--- Shows the repair sentence of `status` the first time it is seen; returns whether it did.
function M.offer(status)
  local note = M.note(status)
  if not note or H.shown[note] then return false end
  H.shown[note] = true
  require("dline").notify(visible(note), vim.log.levels.INFO)
  return true
end

return M
