-- Integration tests against the real dline-core binary: start on first use, handshake,
-- Initialize, auth, unary calls with keep-alive, Connect error codes, server streams,
-- restart after a crash with the stream re-opened, stop when Neovim exits.
local T = require("dline_test")
local connect = require("dline.connect")
local S = T.suite()

local function session()
  local dline = require("dline")
  dline.setup({ start_timeout_ms = 30000 })
  local s = dline.session()
  T.defer(function() s:stop() end)
  return s
end

S.case("the first call starts the sidecar in the editor's cwd and Initialize answers the isolated roots", function()
  local s = session()
  T.eq(s:state(), "not started", "nothing runs before first use")
  local health = T.call(s, "SystemService", "Health", {})
  T.eq(health.status, "ok", "health")
  T.eq(s:state(), "running", "state")
  T.eq(s.info.dataRoot, vim.env.DLINE_DIR .. "/data", "data root")
  T.eq(s.info.homeRoot, vim.env.DLINE_HOME_DIR, "home root")
  T.eq(s.info.documentsRoot, vim.env.DLINE_DOCS_DIR, "documents root")
  T.eq(s.info.protocolVersion, 1, "protocol")
  local pid = s.sidecar:pid()
  T.eq(health.pid, pid, "the pid we spawned serves")
  T.eq(type(health.uptimeMs), "string", "int64 arrives as a string")
  T.eq(vim.loop.fs_realpath("/proc/" .. pid .. "/cwd"), vim.loop.fs_realpath(vim.loop.cwd()), "sidecar cwd")
  T.eq(s.core_path, vim.env.DLINE_CORE, "found through $DLINE_CORE")
  -- stderr goes to the sidecar log file, not to the editor.
  T.wait(function()
    local text = T.read(require("dline").config().sidecar_log_file)
    return text and text:find("serving", 1, true)
  end, "the sidecar's stderr in its log file")
end)

S.case("sequential unary calls reuse one kept-alive connection", function()
  local s = session()
  T.call(s, "SystemService", "Health", {})
  for _ = 1, 5 do
    T.call(s, "SystemService", "Health", {})
    T.eq(s.client.transport:idle_count(), 1, "one idle connection after each call")
  end
  -- Concurrent calls open more connections, then they are kept for reuse.
  local done = 0
  for _ = 1, 3 do
    s:call("SystemService", "Health", {}, function(err)
      T.eq(err, nil, "concurrent call")
      done = done + 1
    end)
  end
  T.wait(function() return done == 3 end, "concurrent calls")
  T.truthy(s.client.transport:idle_count() >= 1, "kept connections")
end)

S.case("a wrong bearer token is unauthenticated, for unary calls and streams", function()
  local s = session()
  T.call(s, "SystemService", "Health", {})
  local bad = connect.new({ url = s.sidecar.handshake.url, token = "not-the-token" })
  local err = T.await(function(cb) bad:unary("SystemService", "Health", {}, cb) end)
  T.eq(err.code, "unauthenticated", "unary")
  local ended
  bad:stream("HistoryService", "WatchHistory", {}, {
    on_message = function() end,
    on_end = function(e) ended = e end,
  })
  T.wait(function() return ended ~= nil end, "the stream's end")
  T.eq(ended.code, "unauthenticated", "stream end-of-stream error")
  T.truthy(not ended.message:find(s.sidecar.handshake.token, 1, true), "the token is not echoed")
end)

S.case("errors carry their Connect code and sentence", function()
  local s = session()
  local err = T.call_err(s, "TaskService", "GetTask", { taskId = "no-such-task" })
  T.eq(err.code, "not_found", "missing task")
  T.truthy(err.message ~= "", "a sentence")
  err = T.call_err(
    s,
    "SettingsService",
    "UpdateSettings",
    { scope = "SETTINGS_SCOPE_GLOBAL", patch = { noSuchSetting = 1 } }
  )
  T.eq(err.code, "invalid_argument", "unknown setting")
  local raw = T.await(function(cb) s.client:unary("SystemService", "NoSuchMethod", {}, cb) end)
  T.eq(raw.code, "unimplemented", "unknown method")
  -- A deadline shorter than the call: deadline_exceeded, reported once.
  local calls = 0
  local dl
  s.client:unary("SystemService", "Health", {}, function(e)
    calls = calls + 1
    dl = e
  end, { timeout_ms = 0 })
  T.wait(function() return dl ~= nil end, "the deadline")
  vim.wait(100)
  T.eq(calls, 1, "one callback")
end)

S.case("a server stream delivers messages as they happen and cancels cleanly", function()
  local s = session()
  local got = {}
  local watch = s:watch({
    service = "SettingsService",
    method = "WatchSettings",
    request = function() return { scope = "SETTINGS_SCOPE_GLOBAL" } end,
    seq = function() end,
    on_message = function(msg) table.insert(got, msg) end,
  })
  T.wait(function() return watch.opens == 1 end, "the stream to open")
  vim.wait(300)
  local before = #got
  local res = T.call(
    s,
    "SettingsService",
    "UpdateSettings",
    { scope = "SETTINGS_SCOPE_GLOBAL", patch = { checkpointsEnabled = false } }
  )
  T.truthy(res.revision, "revision")
  T.wait(function()
    for i = before + 1, #got do
      local settings = got[i].settings or {}
      if settings.checkpointsEnabled == false then return true end
    end
  end, "the change on the stream")
  watch.close()
  local count = #got
  T.call(
    s,
    "SettingsService",
    "UpdateSettings",
    { scope = "SETTINGS_SCOPE_GLOBAL", patch = { checkpointsEnabled = true } }
  )
  vim.wait(300)
  T.eq(#got, count, "nothing after close")
end)

S.case("a killed sidecar is restarted with a new token and streams re-open", function()
  local s = session()
  local notices = {}
  local watch = s:watch({
    service = "SettingsService",
    method = "WatchSettings",
    request = function() return { scope = "SETTINGS_SCOPE_GLOBAL" } end,
    seq = function() end,
    on_message = function(msg) table.insert(notices, msg) end,
  })
  T.wait(function() return watch.opens == 1 end, "the stream to open")
  local first_pid, first_token = s.sidecar:pid(), s.sidecar.handshake.token
  vim.loop.kill(first_pid, "sigkill")
  T.wait(function() return s.ready and s.sidecar:pid() and s.sidecar:pid() ~= first_pid end, "a new sidecar")
  T.eq(s.sidecar.starts, 2, "one restart")
  T.truthy(s.sidecar.handshake.token ~= first_token, "a fresh token")
  T.wait(function() return not T.alive(first_pid) end, "the old process gone")
  local health = T.call(s, "SystemService", "Health", {})
  T.eq(health.pid, s.sidecar:pid(), "calls go to the new sidecar")
  T.wait(function() return watch.opens == 2 end, "the stream re-opened")
  T.call(
    s,
    "SettingsService",
    "UpdateSettings",
    { scope = "SETTINGS_SCOPE_GLOBAL", patch = { checkpointsEnabled = false } }
  )
  T.wait(function()
    local last = notices[#notices]
    return last and last.settings and last.settings.checkpointsEnabled == false
  end, "a change after the restart")
  watch.close()
end)

S.case("the sidecar stops when Neovim exits", function()
  local pid_file = T.base() .. "/child-sidecar.pid"
  local script = T.base() .. "/child.lua"
  T.write(
    script,
    ([[
    local s = require("dline").session()
    s:call("SystemService", "Health", {}, function(err, res)
      local f = io.open(%q, "w")
      f:write(err and ("error " .. err.code) or tostring(res.pid))
      f:close()
      vim.cmd("qall!")
    end)
  ]]):format(pid_file)
  )
  local init = T.repo_root() .. "/adapters/neovim/tests/minimal_init.lua"
  T.sh({ vim.env.DLINE_TEST_NVIM, "--headless", "--clean", "-u", init, "-c", "luafile " .. script })
  local pid = tonumber(T.read(pid_file))
  T.truthy(pid, "the child's sidecar pid: " .. tostring(T.read(pid_file)))
  T.wait(function() return not T.alive(pid) end, "the sidecar to exit after its editor")
end)

S.case("a missing binary gives a clear error naming the places tried", function()
  vim.env.DLINE_CORE = T.base() .. "/nowhere/dline-core"
  require("dline").setup({ core_path = T.base() .. "/also-nowhere" })
  local s = require("dline").session()
  local err = T.call_err(s, "SystemService", "Health", {})
  T.eq(err.code, "failed_precondition", "code")
  T.contains(err.message, "also-nowhere", "names setup{core_path}")
end)

return S
