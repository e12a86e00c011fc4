--- *dline.http* HTTP/1.1 response parsing, fed incrementally.
---
--- What it does: parses a response (status line, headers, then a body framed by
--- Content-Length, chunked transfer coding, or the end of the connection) from bytes that
--- arrive in arbitrary pieces, and hands body bytes on as soon as they are known.
--- What it does not do: sockets (see dline.transport), Connect framing (dline.envelope).
--- Pure Lua: no editor API, so it may run inside libuv callbacks.

local M = {}
local H = {}

-- The largest status line + headers we accept; the sidecar sends a few hundred bytes.
H.max_head_bytes = 64 * 1024
-- The largest chunk-size line (hex digits and extensions).
H.max_chunk_line = 1024

-- Chunked transfer decoding ---------------------------------------------------------------

---@class dline.Dechunker
---@field feed fun(self: dline.Dechunker, data: string): string|nil  returns an error, or nil
---@field done boolean  the last chunk and its trailers were read
---@field rest string   bytes received after the end (a protocol error if not empty)

--- A decoder for the chunked transfer coding. `on_data(bytes)` gets the decoded body in
--- order; `on_end()` runs once after the zero-size chunk and its trailer section.
---@return dline.Dechunker
function M.new_dechunker(on_data, on_end)
  local self = { done = false, rest = "" }
  local state = "size" -- size | data | data_crlf | trailer | done
  local buf = ""
  local remaining = 0

  function self.feed(_, data)
    if state == "done" then
      self.rest = self.rest .. data
      return nil
    end
    buf = buf == "" and data or buf .. data
    local pos = 1
    while true do
      if state == "size" then
        local eol = buf:find("\r\n", pos, true)
        if not eol then
          if #buf - pos + 1 > H.max_chunk_line then return "chunk size line too long" end
          break
        end
        local line = buf:sub(pos, eol - 1)
        local hex = line:match("^%s*(%x+)")
        if not hex then return "malformed chunk size line: " .. line:sub(1, 40) end
        remaining = tonumber(hex, 16)
        pos = eol + 2
        state = remaining == 0 and "trailer" or "data"
      elseif state == "data" then
        local available = #buf - pos + 1
        if available <= 0 then break end
        local take = math.min(available, remaining)
        on_data(buf:sub(pos, pos + take - 1))
        pos = pos + take
        remaining = remaining - take
        if remaining == 0 then state = "data_crlf" end
      elseif state == "data_crlf" then
        if #buf - pos + 1 < 2 then break end
        if buf:sub(pos, pos + 1) ~= "\r\n" then return "missing CRLF after chunk data" end
        pos = pos + 2
        state = "size"
      elseif state == "trailer" then
        local eol = buf:find("\r\n", pos, true)
        if not eol then
          if #buf - pos + 1 > H.max_head_bytes then return "trailer section too long" end
          break
        end
        local empty = eol == pos
        pos = eol + 2
        if empty then
          state = "done"
          self.done = true
          self.rest = buf:sub(pos)
          buf = ""
          on_end()
          return nil
        end
      end
    end
    buf = pos > #buf and "" or buf:sub(pos)
    return nil
  end

  return self
end

-- Response parsing ------------------------------------------------------------------------

---@class dline.HttpResponseHandlers
---@field on_headers fun(status: integer, headers: table<string, string>)|nil
---@field on_body fun(data: string)|nil
---@field on_complete fun()|nil

---@class dline.ResponseParser
---@field feed fun(self: dline.ResponseParser, data: string): string|nil  returns an error, or nil
---@field finish fun(self: dline.ResponseParser): string|nil  the connection ended; error if mid-response
---@field complete boolean
---@field keep_alive boolean  the connection may carry another request afterwards
---@field status integer|nil
---@field headers table<string, string>|nil

--- Parses one HTTP/1.1 response. Header names are lower-cased; repeated headers are joined
--- with ", ".
---@param handlers dline.HttpResponseHandlers
---@param opts { head_request: boolean }|nil
---@return dline.ResponseParser
function M.new_response_parser(handlers, opts)
  local on_body = handlers.on_body or function() end
  local self = { complete = false, keep_alive = true }
  local state = "head" -- head | body_length | body_chunked | body_close | done
  local buf = ""
  local remaining = 0
  local dechunker

  local function complete()
    state = "done"
    self.complete = true
    if handlers.on_complete then handlers.on_complete() end
  end

  local function parse_head(head)
    local lines = vim.split(head, "\r\n", { plain = true })
    local version, code = lines[1]:match("^HTTP/(%d%.%d) (%d%d%d)")
    if not code then return "malformed status line: " .. lines[1]:sub(1, 60) end
    local headers = {}
    for i = 2, #lines do
      local name, value = lines[i]:match("^([^:]+):%s*(.-)%s*$")
      if not name then return "malformed header line: " .. lines[i]:sub(1, 60) end
      name = name:lower()
      headers[name] = headers[name] and (headers[name] .. ", " .. value) or value
    end
    return nil, tonumber(code), headers, version
  end

  function self.feed(_, data)
    if state == "done" then
      if data ~= "" then return "unexpected bytes after the response" end
      return nil
    end
    if state == "head" then
      buf = buf .. data
      local stop = buf:find("\r\n\r\n", 1, true)
      if not stop then
        if #buf > H.max_head_bytes then return "response head too long" end
        return nil
      end
      local err, status, headers, version = parse_head(buf:sub(1, stop - 1))
      if err then return err end
      data = buf:sub(stop + 4)
      buf = ""
      if status >= 100 and status < 200 then
        -- An interim response (100 Continue): the real one follows.
        return self:feed(data)
      end
      self.status, self.headers = status, headers
      local connection = (headers["connection"] or ""):lower()
      if connection:find("close", 1, true) or (version == "1.0" and not connection:find("keep-alive", 1, true)) then
        self.keep_alive = false
      end
      if handlers.on_headers then handlers.on_headers(status, headers) end
      local te = (headers["transfer-encoding"] or ""):lower()
      if (opts and opts.head_request) or status == 204 or status == 304 then
        complete()
        if data ~= "" then return "unexpected bytes after the response" end
        return nil
      elseif te:find("chunked", 1, true) then
        state = "body_chunked"
        dechunker = M.new_dechunker(on_body, complete)
      elseif headers["content-length"] then
        remaining = tonumber(headers["content-length"])
        if not remaining or remaining < 0 then return "malformed content-length" end
        state = "body_length"
        if remaining == 0 then
          complete()
          if data ~= "" then return "unexpected bytes after the response" end
          return nil
        end
      else
        state = "body_close"
        self.keep_alive = false
      end
      if data == "" then return nil end
    end
    if state == "body_length" then
      if #data > remaining then return "more body bytes than content-length" end
      remaining = remaining - #data
      if data ~= "" then on_body(data) end
      if remaining == 0 then complete() end
      return nil
    elseif state == "body_chunked" then
      local err = dechunker:feed(data)
      if err then return err end
      if dechunker.rest ~= "" then return "unexpected bytes after the response" end
      return nil
    elseif state == "body_close" then
      if data ~= "" then on_body(data) end
      return nil
    end
    return nil
  end

  function self.finish(_)
    if state == "done" then return nil end
    if state == "body_close" then
      complete()
      return nil
    end
    if state == "head" and buf == "" then return "connection closed before a response" end
    return "connection closed mid-response"
  end

  return self
end

--- Builds the bytes of one request. `headers` is a list of {name, value} pairs.
function M.format_request(method, path, host, headers, body)
  local parts = { method, " ", path, " HTTP/1.1\r\nHost: ", host, "\r\n" }
  for _, h in ipairs(headers) do
    parts[#parts + 1] = h[1] .. ": " .. h[2] .. "\r\n"
  end
  parts[#parts + 1] = "Content-Length: " .. #(body or "") .. "\r\n\r\n"
  parts[#parts + 1] = body or ""
  return table.concat(parts)
end

return M
