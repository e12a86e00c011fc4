--- *dline.envelope* The Connect streaming envelope, decoded incrementally.
---
--- What it does: frames and unframes the messages of a Connect server stream: a 1-byte flags
--- field, a 4-byte big-endian length, then the payload. Flag 0x02 marks the end-of-stream
--- message (a JSON object with `error` and `metadata`); 0x01 a compressed payload, which
--- we never ask for and therefore refuse.
--- What it does not do: HTTP (see dline.http) or JSON decoding (see dline.connect).
--- Pure Lua: no editor API, so it may run inside libuv callbacks.

local bit = require("bit")

local M = {}

M.FLAG_COMPRESSED = 0x01
M.FLAG_END_STREAM = 0x02

-- Larger messages are refused; the sidecar's own limit is 64 MiB.
M.max_message_bytes = 64 * 1024 * 1024

---@param flags integer
---@param payload string
---@return string
function M.encode(flags, payload)
  local n = #payload
  return string.char(
    flags,
    bit.band(bit.rshift(n, 24), 0xff),
    bit.band(bit.rshift(n, 16), 0xff),
    bit.band(bit.rshift(n, 8), 0xff),
    bit.band(n, 0xff)
  ) .. payload
end

---@class dline.EnvelopeDecoder
---@field feed fun(self: dline.EnvelopeDecoder, data: string): string|nil  returns an error, or nil
---@field buffered fun(self: dline.EnvelopeDecoder): integer  bytes of an incomplete envelope held

--- `on_message(flags, payload)` runs once per complete envelope, in order, however the bytes
--- were split or coalesced across `feed` calls.
---@return dline.EnvelopeDecoder
function M.new_decoder(on_message)
  local self = {}
  local buf = "" -- bytes being parsed
  local pos = 1 -- first unread byte of buf
  -- While an envelope is incomplete, later pieces wait here (joined once it is whole), so a
  -- large message split into many small reads is not copied again on every read.
  local pending, pending_bytes, needed = {}, 0, 0

  function self.feed(_, data)
    if data == "" then return nil end
    local held = #buf - pos + 1
    if needed > 0 and held + pending_bytes + #data < needed then
      pending[#pending + 1] = data
      pending_bytes = pending_bytes + #data
      return nil
    end
    if held <= 0 and pending_bytes == 0 then
      buf, pos = data, 1
    else
      pending[#pending + 1] = data
      buf, pos = buf:sub(pos) .. table.concat(pending), 1
      pending, pending_bytes = {}, 0
    end
    needed = 0
    while true do
      local available = #buf - pos + 1
      if available < 5 then
        needed = 5
        break
      end
      local flags, b1, b2, b3, b4 = buf:byte(pos, pos + 4)
      local length = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
      if length > M.max_message_bytes then
        return ("stream message of %d bytes is over the %d byte limit"):format(length, M.max_message_bytes)
      end
      if bit.band(flags, M.FLAG_COMPRESSED) ~= 0 then
        return "compressed stream message, but no compression was negotiated"
      end
      if available < 5 + length then
        needed = 5 + length
        break
      end
      local payload = buf:sub(pos + 5, pos + 4 + length)
      pos = pos + 5 + length
      on_message(flags, payload)
    end
    if pos > #buf then
      buf, pos = "", 1
    end
    return nil
  end

  function self.buffered(_) return #buf - pos + 1 + pending_bytes end

  return self
end

return M
