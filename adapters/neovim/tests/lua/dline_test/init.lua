--- The test helpers: suites of named cases, assertions, waiting on the event loop, temp
--- files, and the scripted model server. Each case runs in its own child Neovim (run.lua).

local uv = vim.uv or vim.loop

local T = {}

-- Suites ---------------------------------------------------------------------------------

--- A suite: `local S = T.suite(); S.case("name", fn); return S`.
function T.suite()
  local suite = { cases = {} }
  function suite.case(name, fn, opts)
    table.insert(suite.cases, { name = name, fn = fn, timeout = opts and opts.timeout })
  end
  return suite
end

--- Runs case `index` of spec `file` in this (child) Neovim, then exits: status 0 and
--- "DLINE_TEST_OK" on stdout when it passed.
function T.run_case(file, index)
  local suite = dofile(file)
  local case = suite.cases[index]
  local ok, err = xpcall(case.fn, debug.traceback)
  T.cleanup()
  if ok then
    io.stdout:write("DLINE_TEST_OK\n")
    io.stdout:flush()
    vim.cmd("qall!")
  else
    io.stderr:write(tostring(err) .. "\n")
    io.stderr:flush()
    vim.cmd("cquit 1")
  end
end

local cleanups = {}

--- Registers `fn` to run when the case ends (pass or fail).
function T.defer(fn) table.insert(cleanups, fn) end

function T.cleanup()
  for i = #cleanups, 1, -1 do
    pcall(cleanups[i])
  end
  cleanups = {}
end

-- Assertions ----------------------------------------------------------------------------

function T.fail(message) error(message, 0) end

function T.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    T.fail(("%s: expected %s, got %s"):format(what or "value", vim.inspect(expected), vim.inspect(actual)))
  end
end

function T.truthy(value, what)
  if not value then T.fail((what or "value") .. ": expected a true value, got " .. vim.inspect(value)) end
  return value
end

function T.matches(text, pattern, what)
  if type(text) ~= "string" or not text:find(pattern) then
    T.fail(("%s: %s does not match %q"):format(what or "text", vim.inspect(text), pattern))
  end
end

function T.contains(text, needle, what)
  if type(text) ~= "string" or not text:find(needle, 1, true) then
    T.fail(("%s: %s does not contain %q"):format(what or "text", vim.inspect(text), needle))
  end
end

-- Waiting -------------------------------------------------------------------------------

local error_notices

--- From now on, an error shown with vim.notify fails the next T.wait at once (instead of
--- letting it time out): for flows where any error message is a failure.
function T.fail_on_error_notices()
  error_notices = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    if level == vim.log.levels.ERROR then table.insert(error_notices, msg) end
    return notify(msg, level)
  end
end

--- Records every vim.notify from now on (and still shows it): a list of { msg, level }.
function T.capture_notify()
  local notices = {}
  local shown = vim.notify
  vim.notify = function(msg, level)
    table.insert(notices, { msg = msg, level = level })
    return shown(msg, level)
  end
  return notices
end

--- The notices T.capture_notify recorded whose text holds `needle` (plain text).
function T.notices_with(notices, needle)
  return vim.tbl_filter(function(n) return n.msg:find(needle, 1, true) ~= nil end, notices)
end

--- Runs the event loop until `cond()` is true; fails with `what` after `timeout_ms`.
function T.wait(cond, what, timeout_ms)
  local failed
  local ok = vim.wait(timeout_ms or 20000, function()
    if error_notices and #error_notices > 0 then
      failed = error_notices[1]
      return true
    end
    return cond()
  end, 10)
  if failed then T.fail(("while waiting for %s: %s"):format(what or "a condition", failed)) end
  if not ok then T.fail("timed out waiting for " .. (what or "a condition")) end
end

--- Calls `fn(cb)` and waits for `cb(...)`; returns its arguments.
function T.await(fn, what, timeout_ms)
  local result
  fn(function(...) result = { n = select("#", ...), ... } end)
  T.wait(function() return result ~= nil end, what or "a callback", timeout_ms)
  return unpack(result, 1, result.n)
end

--- A session call that must succeed; returns the response.
function T.call(session, service, method, request)
  local err, res = T.await(function(cb) session:call(service, method, request, cb) end, service .. "." .. method)
  if err then T.fail(("%s.%s failed: %s: %s"):format(service, method, err.code, err.message)) end
  return res
end

--- A session call that must fail; returns the error.
function T.call_err(session, service, method, request)
  local err, res = T.await(function(cb) session:call(service, method, request, cb) end, service .. "." .. method)
  if not err then T.fail(("%s.%s succeeded: %s"):format(service, method, vim.inspect(res))) end
  return err
end

-- Files and processes -------------------------------------------------------------------

function T.base() return vim.env.DLINE_TEST_BASE or vim.fn.tempname() end

function T.write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function T.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  return text
end

--- Runs a command to completion (tests only; the plugin never blocks like this).
function T.sh(cmd)
  local output = vim.fn.system(cmd)
  if vim.v.shell_error ~= 0 then
    T.fail(("command failed (%d): %s\n%s"):format(vim.v.shell_error, vim.inspect(cmd), output))
  end
  return output
end

--- Whether process `pid` is alive.
function T.alive(pid)
  if not pid then return false end
  local ok = pcall(uv.kill, pid, 0)
  if not ok then return false end
  return uv.kill(pid, 0) == 0
end

--- The repository root (for fixtures).
function T.repo_root()
  local here = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fn.fnamemodify(here, ":p:h:h:h:h:h:h")
end

--- Starts the scripted model server (test/model-server, bundled by the vitest wrapper) with
--- `script`; returns its url and a stop function. Stopped when the case ends.
function T.model_server(script)
  local bundle = vim.env.DLINE_TEST_MODEL_SERVER
  if not bundle or bundle == "" then
    T.fail("DLINE_TEST_MODEL_SERVER is not set: run the suite through test/neovim/neovim.test.ts")
  end
  local file = T.base() .. "/model-script-" .. tostring(uv.hrtime()) .. ".json"
  T.write(file, vim.json.encode(script))
  local stdin, stdout = uv.new_pipe(false), uv.new_pipe(false)
  local url
  local handle = uv.spawn(
    vim.env.DLINE_TEST_NODE or "node",
    { args = { bundle, file }, stdio = { stdin, stdout, nil } },
    function() end
  )
  T.truthy(handle, "model server process")
  local buf = ""
  stdout:read_start(function(_, data)
    if not data then return end
    buf = buf .. data
    local line = buf:match("^([^\n]*)\n")
    if line and not url then url = vim.json.decode(line).url end
  end)
  T.wait(function() return url ~= nil end, "the model server's url")
  local server = { url = url }
  function server.stop()
    if not stdin:is_closing() then stdin:close() end
    if not stdout:is_closing() then stdout:close() end
  end
  T.defer(server.stop)
  return server
end

--- Another Dline window holding the checkpoint repository of `workspace` (this case's roots):
--- a separate node process (test/checkpoints/fixtures/save-driver.ts, bundled by the vitest
--- wrapper) that makes its baseline, takes the repository's lock and keeps it. Returns its pid
--- and kill() (SIGKILL: its lock is taken over at once); killed when the case ends.
function T.hold_checkpoints(workspace)
  local bundle = vim.env.DLINE_TEST_LOCK_HOLDER
  if not bundle or bundle == "" then
    T.fail("DLINE_TEST_LOCK_HOLDER is not set: run the suite through test/neovim/neovim.test.ts")
  end
  local base = T.base()
  local config = vim.json.encode({
    base = base,
    home = base .. "/home",
    workspace = workspace,
    taskId = "other-window",
    turns = 0,
    files = {},
    holdLock = true,
  })
  local stdout = uv.new_pipe(false)
  local out = ""
  local handle, pid = uv.spawn(
    vim.env.DLINE_TEST_NODE or "node",
    { args = { bundle, config }, stdio = { nil, stdout, nil } },
    function() end
  )
  T.truthy(handle, "lock holder process")
  stdout:read_start(function(_, data) out = out .. (data or "") end)
  local holder = { pid = pid }
  function holder.kill()
    if not handle:is_closing() then
      handle:kill("sigkill")
      handle:close()
    end
    if not stdout:is_closing() then stdout:close() end
  end
  T.defer(holder.kill)
  T.wait(function() return out:find("holding", 1, true) ~= nil end, "the other window to hold the checkpoints", 30000)
  return holder
end

T.TEST_KEY = "sk-test-SECRET-0123456789"

--- Starts the scripted model server with `turns`, configures profile "scripted" for it in the
--- session's sidecar, and makes it the plugin's profile for new tasks. `format`: "openai"
--- (default) or "anthropic".
function T.configure_model(session, turns, format)
  format = format or "openai"
  local server = T.model_server({ apiKey = T.TEST_KEY, turns = turns })
  T.call(session, "SettingsService", "UpsertProfile", {
    profile = {
      id = "scripted",
      name = "scripted " .. format,
      provider = format,
      baseUrl = server.url,
      model = "scripted-model",
      contextWindow = "100000",
      inputPricePerMtok = 3,
      outputPricePerMtok = 15,
    },
  })
  T.call(session, "SettingsService", "SetSecret", { profileId = "scripted", name = "api_key", value = T.TEST_KEY })
  require("dline").config().profile_id = "scripted"
  return server
end

--- The requests the model server received (decoded JSON bodies).
function T.model_requests(server)
  local out = vim.fn.system({ "curl", "-s", server.url .. "/__requests" })
  return vim.json.decode(out)
end

--- Replaces vim.ui.select with a scripted chooser: `choose(items, opts)` returns the item
--- to pick (or nil to cancel). Every call is recorded in the returned list.
function T.script_select(choose)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    local entry = { items = items, opts = opts or {}, labels = {} }
    for i, item in ipairs(items) do
      entry.labels[i] = (opts and opts.format_item) and opts.format_item(item) or tostring(item)
    end
    table.insert(calls, entry)
    local pick = choose(items, opts or {}, entry)
    vim.schedule(function()
      if pick == nil then return on_choice(nil, nil) end
      for i, item in ipairs(items) do
        if item == pick then return on_choice(item, i) end
      end
      on_choice(nil, nil)
    end)
  end
  return calls
end

--- Replaces vim.ui.input with scripted answers (a function of the prompt options).
function T.script_input(answer)
  local calls = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(calls, opts)
    local value = answer(opts or {})
    vim.schedule(function() on_confirm(value) end)
  end
  return calls
end

--- The lines of buffer `buf` joined with newlines.
function T.buffer_text(buf) return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") end

return T
