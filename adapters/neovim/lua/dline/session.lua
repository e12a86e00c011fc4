--- *dline.session* One editor's connection to its sidecar: start on first use, Initialize,
--- calls that wait for readiness, and streams that resume with `after_seq`.
---
--- What it does: owns the dline.sidecar process and the dline.connect client built from its
--- handshake; calls Initialize after every (re)start; queues calls made while the sidecar
--- starts; re-opens resumable streams after a restart or a dropped connection, passing the
--- last seq seen so that nothing is lost or repeated.
--- What it does not do: render anything (chat, history, checkpoints do).

local connect = require("dline.connect")
local sidecar_mod = require("dline.sidecar")

local uv = vim.uv or vim.loop

local M = {}
local H = {}

M.client_name = "dline.nvim"
M.client_version = "0.1.0"

-- Errors after which re-opening a stream cannot help.
H.final_codes = {
  invalid_argument = true,
  not_found = true,
  permission_denied = true,
  unimplemented = true,
  failed_precondition = true,
  data_loss = true,
}

---@class dline.Session
---@field config table
---@field logger dline.Logger
---@field sidecar dline.Sidecar|nil
---@field client dline.ConnectClient|nil
---@field ready boolean  Initialize succeeded on the current process
---@field info table|nil  the InitializeResponse
---@field core_path string|nil
---@field streams table  open resumable streams

---@return dline.Session
function M.new(config, logger)
  return setmetatable(
    { config = config, logger = logger, ready = false, waiters = {}, streams = {}, listeners = {} },
    { __index = M }
  )
end

--- Registers `fn(event)` for "ready" / "down" notices.
function M.on(self, fn) table.insert(self.listeners, fn) end

function H.emit(self, event)
  for _, fn in ipairs(self.listeners) do
    pcall(fn, event)
  end
end

--- Starts the sidecar unless it runs. Returns an error sentence when it cannot be found.
function M.start(self)
  if
    self.sidecar
    and (self.sidecar.state == "running" or self.sidecar.state == "starting" or self.sidecar.state == "restarting")
  then
    return nil
  end
  if not self.sidecar then
    local path, tried = sidecar_mod.locate(self.config.core_path, vim.env.DLINE_CORE)
    if not path then
      self.last_error = "dline-core not found; tried: " .. table.concat(tried, ", ")
      self.logger:error(self.last_error)
      return self.last_error
    end
    self.core_path = path
    local sc
    sc = sidecar_mod.new({
      path = path,
      args = self.config.core_args,
      cwd = uv.cwd(),
      logger = self.logger,
      stderr_file = self.config.sidecar_log_file,
      start_timeout_ms = self.config.start_timeout_ms,
      restart = self.config.restart,
      on_ready = function(hs)
        if self.sidecar == sc then H.on_ready(self, hs) end
      end,
      on_down = function(reason, restarting)
        if self.sidecar == sc then H.on_down(self, reason, restarting) end
      end,
    })
    self.sidecar = sc
  end
  self.sidecar:start()
  return nil
end

function H.on_ready(self, hs)
  if self.client then self.client:close() end
  local client, err = connect.new({
    url = hs.url,
    token = hs.token,
    timeout_ms = self.config.request_timeout_ms,
    user_agent = M.client_name .. "/" .. M.client_version,
  })
  if not client then
    self.last_error = err
    self.logger:error(err)
    return H.fail_waiters(self, connect.error("unavailable", err))
  end
  self.client = client
  client:unary("SystemService", "Initialize", {
    clientName = M.client_name,
    clientVersion = M.client_version,
    workspaceRoots = { uv.cwd() },
  }, function(init_err, info)
    if self.client ~= client then return end
    if init_err then
      self.last_error = "Initialize failed: " .. connect.format_error(init_err)
      self.logger:error(self.last_error)
      return H.fail_waiters(self, init_err)
    end
    self.info = info
    self.ready = true
    self.last_error = nil
    local waiters = self.waiters
    self.waiters = {}
    for _, w in ipairs(waiters) do
      w(nil)
    end
    H.emit(self, "ready")
  end)
end

function H.on_down(self, reason, restarting)
  self.ready = false
  if self.client then
    self.client:close()
    self.client = nil
  end
  if not restarting then
    H.fail_waiters(self, connect.error("unavailable", "the sidecar is not running: " .. reason))
  end
  H.emit(self, restarting and "restarting" or "down")
end

function H.fail_waiters(self, err)
  local waiters = self.waiters
  self.waiters = {}
  for _, w in ipairs(waiters) do
    w(err)
  end
end

--- Runs `fn(err)` once the sidecar is ready (at once if it is), starting it if needed.
function M.when_ready(self, fn)
  if self.ready and self.client then return fn(nil) end
  local start_err = self:start()
  if start_err then return fn(connect.error("failed_precondition", start_err)) end
  table.insert(self.waiters, fn)
end

--- Calls a unary method once the sidecar is ready. `cb(err, response)` on the main loop.
function M.call(self, service, method, request, cb, opts)
  self:when_ready(function(err)
    if err then return cb(err) end
    self.client:unary(service, method, request, cb, opts)
  end)
end

---@class dline.WatchSpec
---@field service string
---@field method string
---@field request fun(after_seq: string): table  builds the request for a (re)open
---@field seq fun(msg: table): string|nil  the seq a message carries
---@field after_seq string|nil  where to start ("0" by default)
---@field on_message fun(msg: table)
---@field on_error fun(err: dline.RpcError)|nil  a final error; the watch is closed

---@class dline.Watch
---@field close fun()
---@field last_seq string
---@field opens integer  how many times the stream was opened

--- Opens a stream that is re-opened after the sidecar restarts or the connection drops,
--- from the last seq seen; messages at or below that seq are dropped (never shown twice).
---@param spec dline.WatchSpec
---@return dline.Watch
function M.watch(self, spec)
  local watch = { closed = false, last_seq = spec.after_seq or "0", opens = 0, failures = 0 }
  local stream
  local open

  local function reopen_later()
    if watch.closed then return end
    watch.failures = watch.failures + 1
    local delay = math.min(100 * 2 ^ (watch.failures - 1), 5000)
    local timer = uv.new_timer()
    timer:start(delay, 0, function()
      timer:close()
      vim.schedule(open)
    end)
  end

  open = function()
    if watch.closed then return end
    self:when_ready(function(err)
      if watch.closed then return end
      if err then
        if self.sidecar and (self.sidecar.state == "failed" or self.sidecar.state == "stopped") then
          watch.closed = true
          if spec.on_error then spec.on_error(err) end
          return
        end
        return reopen_later()
      end
      watch.opens = watch.opens + 1
      local client = self.client
      stream = client:stream(spec.service, spec.method, spec.request(watch.last_seq), {
        on_message = function(msg)
          if watch.closed then return end
          watch.failures = 0
          local seq = spec.seq(msg)
          if seq then
            if tonumber(seq) <= tonumber(watch.last_seq) then return end
            watch.last_seq = seq
          end
          spec.on_message(msg)
        end,
        on_end = function(end_err)
          if watch.closed then return end
          if end_err and H.final_codes[end_err.code] then
            watch.closed = true
            self.logger:warn(("%s.%s ended: %s"):format(spec.service, spec.method, connect.format_error(end_err)))
            if spec.on_error then spec.on_error(end_err) end
            return
          end
          self.logger:info(
            ("%s.%s ended (%s); re-opening after seq %s"):format(
              spec.service,
              spec.method,
              end_err and connect.format_error(end_err) or "closed",
              watch.last_seq
            )
          )
          reopen_later()
        end,
      })
    end)
  end

  function watch.close()
    watch.closed = true
    self.streams[watch] = nil
    if stream then stream.cancel() end
  end

  self.streams[watch] = true
  open()
  return watch
end

--- Stops the sidecar (closing its stdin) and every stream; used on VimLeavePre.
function M.stop(self)
  for watch in pairs(self.streams) do
    watch.close()
  end
  if self.client then
    self.client:close()
    self.client = nil
  end
  self.ready = false
  if self.sidecar then self.sidecar:stop() end
end

--- Forgets failures and starts again (:Dline restart).
function M.restart(self)
  if self.sidecar then
    self.sidecar:reset()
    if self.sidecar.state == "running" or self.sidecar.state == "starting" then
      -- A deliberate restart: stop this process; the supervisor does not restart it, we do.
      local old = self.sidecar
      old:stop(1000)
      self.sidecar = nil
      self.ready = false
    end
  end
  return self:start()
end

--- "stopped" | "starting" | "running" | "restarting" | "failed" | "not started"
function M.state(self) return self.sidecar and self.sidecar.state or "not started" end

return M
