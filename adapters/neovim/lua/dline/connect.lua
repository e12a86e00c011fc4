--- *dline.connect* A Connect RPC client speaking JSON over HTTP/1.1.
---
--- What it does: unary calls (POST application/json) and server streams
--- (application/connect+json, enveloped messages ending with the end-of-stream message),
--- the bearer token, Connect error codes, client-side deadlines for unary calls. Results are
--- delivered on the editor's main loop (vim.schedule), stream messages in batches per read.
--- What it does not do: start or find the sidecar (dline.sidecar), retry or resume
--- (dline.session).
---
--- Connect JSON: field names are lowerCamelCase, enums are their full names
--- ("TASK_STATUS_RUNNING"), 64-bit integers are strings, and an empty request must be `{}`,
--- not `[]`, so empty tables are sent as vim.empty_dict().

local bit = require("bit")
local envelope = require("dline.envelope")
local transport = require("dline.transport")

local M = {}
local H = {}

M.package = "dline.v1"

--- The Connect code for an HTTP status when the body says nothing (Connect protocol spec).
H.code_for_http = {
  [400] = "internal",
  [401] = "unauthenticated",
  [403] = "permission_denied",
  [404] = "unimplemented",
  [429] = "unavailable",
  [502] = "unavailable",
  [503] = "unavailable",
  [504] = "unavailable",
}

---@class dline.RpcError
---@field code string  a Connect code: "invalid_argument", "not_found", "unavailable", ...
---@field message string
---@field details table|nil

---@param code string
---@param message string
---@return dline.RpcError
function M.error(code, message, details) return { code = code, message = message, details = details } end

--- The machine-readable reason of an error (a dline.v1.ErrorDetail in its details), e.g.
--- "ERROR_REASON_NO_MODEL" when no model is set up yet; nil when it has none.
---@param err dline.RpcError
---@return string|nil
function M.reason(err)
  for _, detail in ipairs(type(err) == "table" and err.details or {}) do
    if detail.type == "dline.v1.ErrorDetail" and type(detail.debug) == "table" then return detail.debug.reason end
  end
  return nil
end

--- "(not_found) Task x does not exist." for messages a person reads.
---@param err dline.RpcError
function M.format_error(err)
  if type(err) ~= "table" then return tostring(err) end
  return ("%s: %s"):format(err.code or "unknown", err.message or "")
end

--- What a person reads of a failed call: the core's message, written for people (the code,
--- "failed_precondition" and the like, goes to the log); the code only when there is no message.
function M.error_text(err)
  if type(err) ~= "table" then return tostring(err) end
  if (err.message or "") ~= "" then return err.message end
  return M.format_error(err)
end

--- JSON for a request: an empty table is an object here, never an array.
function M.encode(value)
  if value == nil or (type(value) == "table" and next(value) == nil and getmetatable(value) == nil) then
    value = vim.empty_dict()
  end
  return vim.json.encode(value)
end

function H.decode(text)
  local ok, value = pcall(vim.json.decode, text)
  if not ok then return nil, tostring(value) end
  return value
end

--- The error a non-200 unary response carries: its JSON body, else the HTTP status.
function H.unary_error(status, body)
  local value = H.decode(body)
  if type(value) == "table" and type(value.code) == "string" then
    return M.error(value.code, type(value.message) == "string" and value.message or "", value.details)
  end
  return M.error(H.code_for_http[status] or "unknown", ("HTTP %d"):format(status))
end

---@class dline.ConnectClient
---@field transport dline.Transport
---@field token string
---@field timeout_ms integer

---@param opts { url: string, token: string, timeout_ms: integer|nil, user_agent: string|nil }
---@return dline.ConnectClient|nil, string|nil
function M.new(opts)
  local t, err = transport.new(opts.url)
  if not t then return nil, err end
  return setmetatable({
    transport = t,
    token = opts.token,
    timeout_ms = opts.timeout_ms or 30000,
    user_agent = opts.user_agent or "dline.nvim",
  }, { __index = M })
end

function H.headers(self, content_type, extra)
  local headers = {
    { "Content-Type", content_type },
    { "Authorization", "Bearer " .. self.token },
    { "Connect-Protocol-Version", "1" },
    { "User-Agent", self.user_agent },
  }
  for _, h in ipairs(extra or {}) do
    headers[#headers + 1] = h
  end
  return headers
end

function H.path(service, method) return ("/%s.%s/%s"):format(M.package, service, method) end

-- Unary ---------------------------------------------------------------------------------

--- Calls a unary method. `callback(err, response)` runs on the main loop, exactly once.
---@param service string  e.g. "SystemService"
---@param method string   e.g. "Initialize"
---@param request table|nil
---@param callback fun(err: dline.RpcError|nil, response: table|nil)
---@param opts { timeout_ms: integer|nil }|nil
---@return { cancel: fun() }
function M.unary(self, service, method, request, callback, opts)
  local timeout_ms = (opts and opts.timeout_ms) or self.timeout_ms
  local done = false
  local timer
  local function finish(err, response)
    if done then return end
    done = true
    if timer then
      timer:stop()
      if not timer:is_closing() then timer:close() end
    end
    vim.schedule(function() callback(err, response) end)
  end
  local status = 0
  local chunks = {}
  local handle = self.transport:request({
    method = "POST",
    path = H.path(service, method),
    headers = H.headers(self, "application/json", { { "Connect-Timeout-Ms", tostring(timeout_ms) } }),
    body = M.encode(request),
    on_headers = function(s) status = s end,
    on_body = function(data) chunks[#chunks + 1] = data end,
    on_complete = function()
      local body = table.concat(chunks)
      if status ~= 200 then return finish(H.unary_error(status, body)) end
      local value, decode_err = H.decode(body)
      if type(value) ~= "table" then
        return finish(M.error("internal", "the sidecar sent a response that is not JSON: " .. tostring(decode_err)))
      end
      finish(nil, value)
    end,
    on_error = function(message) finish(M.error("unavailable", message)) end,
  })
  timer = (vim.uv or vim.loop).new_timer()
  timer:start(timeout_ms, 0, function()
    handle.cancel()
    finish(M.error("deadline_exceeded", ("%s.%s took longer than %d ms"):format(service, method, timeout_ms)))
  end)
  return {
    cancel = function()
      handle.cancel()
      finish(M.error("canceled", "cancelled by the client"))
    end,
  }
end

-- Server streams ------------------------------------------------------------------------

---@class dline.StreamHandlers
---@field on_message fun(msg: table)  one decoded response message, in order
---@field on_end fun(err: dline.RpcError|nil, trailers: table|nil)  runs once, last

---@class dline.StreamHandle
---@field cancel fun()  closes the stream; on_end does not run afterwards

--- Opens a server stream. Handlers run on the main loop.
---@param handlers dline.StreamHandlers
---@return dline.StreamHandle
function M.stream(self, service, method, request, handlers)
  local uv = vim.uv or vim.loop
  local ended = false
  local cancelled = false
  local status = 0
  -- Payloads of complete envelopes, not yet decoded. The libuv read callback only splits
  -- envelopes (cheap); JSON decoding and the handlers run on the main loop, in slices.
  local queue = {}
  local head = 1 -- next payload of queue to deliver
  local scheduled = false
  local paused = false
  local end_result -- { err, trailers } once known
  local handle

  -- A slice of work holds the editor at most this long; then it yields to libuv (a timer,
  -- not vim.schedule, which would run again before input and timers are looked at).
  local slice_ns = 4 * 1000 * 1000
  -- Backpressure: stop reading while this many payloads wait, read again below the low mark.
  local high_water, low_water = 1000, 250

  local flush
  local function yield_then_flush()
    local timer = uv.new_timer()
    timer:start(0, 0, function()
      timer:close()
      vim.schedule(flush)
    end)
  end

  local function finish(err, trailers)
    if ended then return end
    ended = true
    end_result = { err = err, trailers = trailers }
  end

  flush = function()
    local started = uv.hrtime()
    while head <= #queue do
      if cancelled then return end
      local payload = queue[head]
      queue[head] = false -- release the string; `false` keeps the length operator exact
      head = head + 1
      local value, decode_err = H.decode(payload)
      if type(value) ~= "table" then
        handle.cancel()
        finish(M.error("internal", "the sidecar sent a stream message that is not JSON: " .. tostring(decode_err)))
        head = #queue + 1
        break
      end
      handlers.on_message(value)
      if paused and #queue - head + 1 < low_water then
        paused = false
        handle.resume()
      end
      if head <= #queue and uv.hrtime() - started > slice_ns then return yield_then_flush() end
    end
    queue, head = {}, 1
    scheduled = false
    if paused then
      paused = false
      handle.resume()
    end
    if end_result and not cancelled and not end_result.delivered then
      end_result.delivered = true
      handlers.on_end(end_result.err, end_result.trailers)
    end
  end

  local function schedule_flush()
    if not scheduled then
      scheduled = true
      vim.schedule(flush)
    end
  end

  local decoder = envelope.new_decoder(function(flags, payload)
    if ended then return end
    if bit.band(flags, envelope.FLAG_END_STREAM) ~= 0 then
      local value, decode_err = H.decode(payload)
      if type(value) ~= "table" then
        return finish(
          M.error("internal", "the sidecar sent an end-of-stream message that is not JSON: " .. tostring(decode_err))
        )
      end
      local e = value.error
      if type(e) == "table" then
        return finish(M.error(e.code or "unknown", e.message or "", e.details), value.metadata)
      end
      return finish(nil, value.metadata)
    end
    queue[#queue + 1] = payload
  end)

  local error_body = {}
  handle = self.transport:request({
    method = "POST",
    path = H.path(service, method),
    headers = H.headers(self, "application/connect+json"),
    body = envelope.encode(0, M.encode(request)),
    on_headers = function(s) status = s end,
    on_body = function(data)
      if ended then return end
      if status ~= 200 then
        error_body[#error_body + 1] = data
        return
      end
      local err = decoder:feed(data)
      if err then
        handle.cancel()
        finish(M.error("internal", "bad stream from the sidecar: " .. err))
      end
      if #queue - head + 1 >= high_water and not paused then
        paused = true
        handle.pause()
      end
      schedule_flush()
    end,
    on_complete = function()
      if status ~= 200 then
        finish(H.unary_error(status, table.concat(error_body)))
      else
        finish(M.error("unavailable", "the stream ended without an end-of-stream message"))
      end
      schedule_flush()
    end,
    on_error = function(message)
      finish(M.error("unavailable", message))
      schedule_flush()
    end,
  })

  return {
    cancel = function()
      cancelled = true
      ended = true
      handle.cancel()
    end,
  }
end

function M.close(self) self.transport:close() end

return M
