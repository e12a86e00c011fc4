--- *dline.transport* HTTP/1.1 requests over libuv sockets, with keep-alive.
---
--- What it does: opens TCP connections (or a Unix socket for `unix:` addresses), writes one
--- request at a time per connection, feeds the response to dline.http, and keeps finished
--- connections for reuse. Callbacks run inside libuv callbacks (fast context): callers must
--- not touch the editor API there (dline.connect schedules onto the main loop).
--- What it does not do: the Connect protocol (see dline.connect).

local http = require("dline.http")
local uv = vim.uv or vim.loop

local M = {}
local H = {}

---@class dline.Transport
---@field host string
---@field port integer|nil
---@field socket_path string|nil
---@field idle table[]  connections waiting for reuse
---@field max_idle integer
---@field closed boolean

--- `base_url` is "http://127.0.0.1:PORT" (or "[::1]:PORT") or "unix:/path/to.sock".
---@return dline.Transport|nil, string|nil
function M.new(base_url, opts)
  opts = opts or {}
  local self = setmetatable({ idle = {}, max_idle = opts.max_idle or 4, closed = false }, { __index = M })
  local socket_path = base_url:match("^unix:(.+)$")
  if socket_path then
    self.socket_path, self.host = socket_path, "localhost"
    return self
  end
  local host, port = base_url:match("^http://%[([^%]]+)%]:(%d+)/?$")
  if not host then
    host, port = base_url:match("^http://([^:/]+):(%d+)/?$")
  end
  if not host then return nil, "unsupported sidecar address: " .. base_url end
  self.host, self.port = host, tonumber(port)
  self.host_header = host:find(":", 1, true) and ("[" .. host .. "]:" .. port) or (host .. ":" .. port)
  return self
end

-- Connections ---------------------------------------------------------------------------

function H.close_conn(conn)
  if conn.closed then return end
  conn.closed = true
  if not conn.handle:is_closing() then conn.handle:close() end
end

--- Opens a connection; `cb(err, conn)` runs when it is connected.
function H.open(self, cb)
  local conn = { closed = false, reused = false }
  local function on_connect(err)
    if err then
      H.close_conn(conn)
      return cb(err)
    end
    conn.reader = function(read_err, data)
      if conn.on_read then return conn.on_read(read_err, data) end
      -- Idle: the server closed the connection (or sent bytes nobody asked for).
      H.close_conn(conn)
      H.forget_idle(self, conn)
    end
    conn.handle:read_start(conn.reader)
    cb(nil, conn)
  end
  if self.socket_path then
    conn.handle = uv.new_pipe(false)
    conn.handle:connect(self.socket_path, on_connect)
  else
    conn.handle = uv.new_tcp()
    conn.handle:nodelay(true)
    local ok, err = pcall(conn.handle.connect, conn.handle, self.host, self.port, on_connect)
    if not ok then
      H.close_conn(conn)
      return cb(tostring(err))
    end
  end
end

function H.forget_idle(self, conn)
  for i, c in ipairs(self.idle) do
    if c == conn then
      table.remove(self.idle, i)
      return
    end
  end
end

function H.take_idle(self)
  while #self.idle > 0 do
    local conn = table.remove(self.idle)
    if not conn.closed then return conn end
  end
  return nil
end

function H.release(self, conn)
  conn.on_read = nil
  if self.closed or conn.closed or #self.idle >= self.max_idle then return H.close_conn(conn) end
  conn.reused = true
  table.insert(self.idle, conn)
end

-- Requests ------------------------------------------------------------------------------

---@class dline.TransportRequest
---@field method string
---@field path string
---@field headers string[][]  {name, value} pairs
---@field body string
---@field on_headers fun(status: integer, headers: table)|nil
---@field on_body fun(data: string)|nil
---@field on_complete fun()  the whole response was read
---@field on_error fun(message: string)  the request failed (connection refused, reset, bad HTTP)

---@class dline.RequestHandle
---@field cancel fun()  closes the connection; no callback runs afterwards
---@field pause fun()   stops reading the response (backpressure)
---@field resume fun()  reads again

--- Sends one request. Exactly one of on_complete / on_error runs (unless cancelled).
---@param req dline.TransportRequest
---@return dline.RequestHandle
function M.request(self, req)
  local handle = { cancelled = false, finished = false }
  local conn_ref
  local bytes = http.format_request(req.method, req.path, self.host_header or self.host, req.headers, req.body)

  local function fail(message)
    if handle.finished or handle.cancelled then return end
    handle.finished = true
    req.on_error(message)
  end

  local function send(conn, may_retry)
    conn_ref = conn
    local got_bytes = false
    local parser
    parser = http.new_response_parser({
      on_headers = req.on_headers,
      on_body = function(data)
        if not handle.cancelled then (req.on_body or function() end)(data) end
      end,
      on_complete = function()
        if handle.cancelled or handle.finished then return end
        handle.finished = true
        if parser.keep_alive then
          H.release(self, conn)
        else
          H.close_conn(conn)
        end
        req.on_complete()
      end,
    })
    local function retry_or_fail(message)
      H.close_conn(conn)
      -- A kept-alive connection the server had just closed: try once on a fresh one.
      if may_retry and not got_bytes and not handle.cancelled then
        return H.open(self, function(err, fresh)
          if err then return fail(err) end
          if handle.cancelled then return H.close_conn(fresh) end
          send(fresh, false)
        end)
      end
      fail(message)
    end
    conn.on_read = function(err, data)
      if handle.cancelled or handle.finished then return end
      if err then return retry_or_fail("connection error: " .. tostring(err)) end
      if data == nil then
        local finish_err = parser:finish()
        if finish_err then return retry_or_fail(finish_err) end
        return H.close_conn(conn)
      end
      got_bytes = true
      local parse_err = parser:feed(data)
      if parse_err then
        H.close_conn(conn)
        fail("bad HTTP response: " .. parse_err)
      end
    end
    conn.handle:write(bytes, function(err)
      if err then retry_or_fail("write failed: " .. tostring(err)) end
    end)
  end

  local idle = H.take_idle(self)
  if idle then
    send(idle, true)
  else
    H.open(self, function(err, conn)
      if err then return fail("cannot connect to the sidecar: " .. tostring(err)) end
      if handle.cancelled then return H.close_conn(conn) end
      send(conn, false)
    end)
  end

  function handle.cancel()
    if handle.cancelled or handle.finished then return end
    handle.cancelled = true
    if conn_ref then H.close_conn(conn_ref) end
  end
  --- Backpressure: stop reading the response until `resume` (the peer's writes then wait).
  function handle.pause()
    if conn_ref and not conn_ref.closed and not conn_ref.paused then
      conn_ref.paused = true
      conn_ref.handle:read_stop()
    end
  end
  function handle.resume()
    if conn_ref and not conn_ref.closed and conn_ref.paused then
      conn_ref.paused = false
      conn_ref.handle:read_start(conn_ref.reader)
    end
  end
  return handle
end

--- Closes idle connections; requests in flight finish or fail on their own.
function M.close(self)
  self.closed = true
  for _, conn in ipairs(self.idle) do
    H.close_conn(conn)
  end
  self.idle = {}
end

--- How many idle connections are kept (for tests of keep-alive).
function M.idle_count(self)
  local n = 0
  for _, c in ipairs(self.idle) do
    if not c.closed then n = n + 1 end
  end
  return n
end

return M
