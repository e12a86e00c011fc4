--- *dline.sidecar* Finds, starts, supervises and stops the dline-core process.
---
--- What it does: locates the executable (setup{core_path}; else $DLINE_CORE, bin/dline-core
--- next to the plugin, a Dline checkout's dist/dline-core, then dline-core on PATH), spawns `dline-core serve` in the editor's working directory, reads the
--- one-line JSON handshake from stdout, writes stderr to a log file, and restarts the
--- process with backoff when it dies (a small policy object decides). Stopping closes its
--- stdin, which makes the sidecar flush and exit; a process that lingers is killed.
--- What it does not do: RPC (dline.connect) or re-initialising (dline.session).

local uv = vim.uv or vim.loop

local M = {}
local H = {}

M.PROTOCOL = 1

-- Locating ------------------------------------------------------------------------------

--- The plugin's root folder (this file is <root>/lua/dline/sidecar.lua).
function H.plugin_root()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

--- Returns the executable path, or nil and the list of places tried. An explicit core_path is
--- the only candidate (falling back would hide a wrong setting); otherwise $DLINE_CORE, the
--- binary next to the plugin (<root>/bin/dline-core, where a release archive's user puts it),
--- the repository's dist/dline-core when the plugin runs from a Dline checkout
--- (adapters/neovim), then `dline-core` on PATH.
---@return string|nil, string[]
function M.locate(core_path, env_value)
  local tried = {}
  local candidates = {}
  if core_path and core_path ~= "" then
    candidates[#candidates + 1] = { core_path, "setup{ core_path }" }
  else
    if env_value and env_value ~= "" then candidates[#candidates + 1] = { env_value, "$DLINE_CORE" } end
    local root = H.plugin_root()
    candidates[#candidates + 1] = { root .. "/bin/dline-core", "next to the plugin" }
    candidates[#candidates + 1] =
      { vim.fn.fnamemodify(root, ":h:h") .. "/dist/dline-core", "the repository's dist/dline-core" }
    local on_path = vim.fn.exepath("dline-core")
    candidates[#candidates + 1] = { on_path ~= "" and on_path or "dline-core", "PATH" }
  end
  for _, c in ipairs(candidates) do
    local path = vim.fn.expand(c[1])
    if vim.fn.executable(path) == 1 and vim.fn.isdirectory(path) == 0 then
      return vim.fn.fnamemodify(path, ":p"), tried
    end
    tried[#tried + 1] = ("%s (%s)"):format(path, c[2])
  end
  return nil, tried
end

-- Restart policy ------------------------------------------------------------------------

---@class dline.RestartPolicy
---@field next_delay fun(self: dline.RestartPolicy, now_ms: number): number|nil
---@field reset fun(self: dline.RestartPolicy)

--- Allows `max_restarts` restarts within `window_ms`, waiting base_delay_ms * 2^n (capped);
--- `next_delay` answers nil once the budget is spent.
---@return dline.RestartPolicy
function M.restart_policy(opts)
  local self = { times = {} }
  function self.next_delay(_, now_ms)
    local recent = {}
    for _, t in ipairs(self.times) do
      if now_ms - t < opts.window_ms then recent[#recent + 1] = t end
    end
    self.times = recent
    if #recent >= opts.max_restarts then return nil end
    local delay = math.min(opts.base_delay_ms * (2 ^ #recent), opts.max_delay_ms)
    table.insert(self.times, now_ms)
    return delay
  end
  function self.reset(_) self.times = {} end
  return self
end

-- The process ---------------------------------------------------------------------------

---@class dline.Handshake
---@field url string
---@field token string
---@field pid integer
---@field version string
---@field protocol integer

---@class dline.SidecarOptions
---@field path string
---@field args string[]
---@field cwd string
---@field logger dline.Logger
---@field stderr_file string
---@field start_timeout_ms integer
---@field restart table  see dline.config
---@field on_ready fun(handshake: dline.Handshake)  main loop
---@field on_down fun(reason: string, restarting: boolean)  main loop; the process is gone

---@class dline.Sidecar
---@field state string  "stopped" | "starting" | "running" | "restarting" | "failed"
---@field handshake dline.Handshake|nil
---@field last_error string|nil
---@field starts integer  how many processes were spawned

---@param opts dline.SidecarOptions
---@return dline.Sidecar
function M.new(opts)
  local self = setmetatable(
    { opts = opts, state = "stopped", starts = 0, policy = M.restart_policy(opts.restart) },
    { __index = M }
  )
  self.stderr = require("dline.log").new_appender(opts.stderr_file)
  return self
end

function H.close(handle)
  if handle and not handle:is_closing() then handle:close() end
end

--- Starts the process if it is not running or starting.
function M.start(self)
  if self.state == "starting" or self.state == "running" then return end
  self.wanted = true
  H.spawn(self)
end

function H.spawn(self)
  local opts = self.opts
  self.state = "starting"
  self.handshake = nil
  self.starts = self.starts + 1
  local generation = self.starts
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local proc = { stdin = stdin, stdout = stdout, stderr = stderr, exited = false }
  self.proc = proc
  local handle, pid_or_err = uv.spawn(opts.path, {
    args = vim.list_extend({ "serve" }, vim.deepcopy(opts.args or {})),
    cwd = opts.cwd,
    stdio = { stdin, stdout, stderr },
  }, function(code, signal)
    proc.exited = true
    H.close(proc.handle)
    H.close(stdin)
    -- stdout/stderr close when drained (their read callbacks see EOF).
    vim.schedule(
      function()
        H.on_exit(
          self,
          generation,
          ("exited with code %d%s"):format(code, signal ~= 0 and (", signal " .. signal) or "")
        )
      end
    )
  end)
  if not handle then
    H.close(stdin)
    H.close(stdout)
    H.close(stderr)
    self.proc = nil
    self.last_error = ("cannot start %s: %s"):format(opts.path, tostring(pid_or_err))
    opts.logger:error(self.last_error)
    self.state = "failed"
    self.wanted = false
    vim.schedule(function() opts.on_down(self.last_error, false) end)
    return
  end
  proc.handle, proc.pid = handle, pid_or_err
  opts.logger:info(("started %s (pid %d)"):format(opts.path, proc.pid))

  local line_buf = ""
  stdout:read_start(function(err, data)
    if err or data == nil then
      H.close(stdout)
      return
    end
    if self.handshake or self.proc ~= proc then return end
    line_buf = line_buf .. data
    local newline = line_buf:find("\n", 1, true)
    if not newline then return end
    local line = line_buf:sub(1, newline - 1)
    line_buf = ""
    vim.schedule(function() H.on_handshake_line(self, proc, line) end)
  end)
  stderr:read_start(function(err, data)
    if err or data == nil then
      H.close(stderr)
      return
    end
    self.stderr:write(data)
  end)

  proc.timer = uv.new_timer()
  proc.timer:start(opts.start_timeout_ms, 0, function()
    vim.schedule(function()
      if self.proc == proc and self.state == "starting" then
        self.last_error = ("no handshake within %d ms"):format(opts.start_timeout_ms)
        proc.failure = self.last_error
        opts.logger:error("sidecar: " .. self.last_error .. "; killing it")
        H.kill(proc)
      end
    end)
  end)
end

function H.on_handshake_line(self, proc, line)
  if self.proc ~= proc or self.state ~= "starting" then return end
  H.stop_timer(proc)
  local ok, hs = pcall(vim.json.decode, line)
  if not ok or type(hs) ~= "table" or hs.dline ~= "ready" or type(hs.url) ~= "string" or type(hs.token) ~= "string" then
    self.last_error = "the sidecar's first line is not a handshake: " .. line:sub(1, 200)
    proc.failure = self.last_error
    self.opts.logger:error(self.last_error)
    return H.kill(proc)
  end
  if hs.protocol ~= M.PROTOCOL then
    self.last_error = ("the sidecar speaks protocol %s; this plugin speaks %d: update one of them"):format(
      tostring(hs.protocol),
      M.PROTOCOL
    )
    self.opts.logger:error(self.last_error)
    proc.failure = self.last_error
    self.wanted = false
    return H.kill(proc)
  end
  self.state = "running"
  self.handshake = { url = hs.url, token = hs.token, pid = hs.pid, version = hs.version, protocol = hs.protocol }
  self.opts.logger:info(
    ("sidecar ready: version %s, pid %s, %s"):format(tostring(hs.version), tostring(hs.pid), hs.url)
  )
  self.opts.on_ready(self.handshake)
end

function H.stop_timer(proc)
  if proc.timer then
    proc.timer:stop()
    H.close(proc.timer)
    proc.timer = nil
  end
end

function H.kill(proc)
  if proc.exited or not proc.handle then return end
  pcall(proc.handle.kill, proc.handle, "sigkill")
end

function H.on_exit(self, generation, reason)
  local proc = self.proc
  if not proc or generation ~= self.starts then return end
  H.stop_timer(proc)
  self.proc = nil
  self.handshake = nil
  if proc.failure then reason = reason .. " (" .. proc.failure .. ")" end
  if not self.wanted then
    self.state = proc.failure and "failed" or "stopped"
    if proc.failure then self.last_error = "the sidecar " .. reason end
    self.opts.logger:info("sidecar stopped: " .. reason)
    return self.opts.on_down(reason, false)
  end
  self.last_error = "the sidecar " .. reason
  self.opts.logger:error(self.last_error)
  local delay = self.policy:next_delay(uv.now())
  if not delay then
    self.state = "failed"
    self.wanted = false
    self.last_error = self.last_error
      .. ("; gave up after %d restarts within %d s (:Dline restart tries again)"):format(
        self.opts.restart.max_restarts,
        math.floor(self.opts.restart.window_ms / 1000)
      )
    self.opts.logger:error(self.last_error)
    return self.opts.on_down(self.last_error, false)
  end
  self.state = "restarting"
  self.opts.logger:warn(("restarting the sidecar in %d ms"):format(delay))
  self.opts.on_down(reason, true)
  local timer = uv.new_timer()
  timer:start(delay, 0, function()
    H.close(timer)
    vim.schedule(function()
      if self.wanted and self.state == "restarting" then H.spawn(self) end
    end)
  end)
end

--- Stops the process: closes its stdin (the sidecar flushes and exits), kills it if it is
--- still there after `grace_ms`. No restart follows.
function M.stop(self, grace_ms)
  self.wanted = false
  local proc = self.proc
  if not proc then
    if self.state ~= "failed" then self.state = "stopped" end
    return
  end
  H.stop_timer(proc)
  H.close(proc.stdin)
  local timer = uv.new_timer()
  timer:start(grace_ms or 3000, 0, function()
    H.close(timer)
    H.kill(proc)
  end)
end

--- Forgets earlier failures (for :Dline restart).
function M.reset(self)
  self.policy:reset()
  self.last_error = nil
  if self.state == "failed" then self.state = "stopped" end
end

--- The pid of the running process, if any.
function M.pid(self) return self.proc and self.proc.pid or nil end

return M
