-- The test runner: runs every case of tests/*_spec.lua in its own child Neovim (fresh XDG
-- folders, HOME and Dline roots in a temp folder), two at a time, and prints one line per
-- case and a closing "N passed, N failed" line. Exit code 0 only when every case passed.
--
--   nvim --headless --clean -u NONE -c 'luafile adapters/neovim/tests/run.lua'
--
-- Environment: DLINE_TEST_SPECS (comma-separated spec file names, default all),
-- DLINE_TEST_FILTER (a Lua pattern over case names), DLINE_TEST_JOBS (parallel children),
-- DLINE_CORE (the sidecar; default the repository's dist/dline-core), DLINE_TEST_NVIM (the
-- nvim to run the children with; default this one), DLINE_TEST_MODEL_SERVER (bundled
-- scripted model server for task tests), DLINE_TEST_LOCK_HOLDER (bundled checkpoint driver
-- that holds a workspace's checkpoint repository, as another window).
local uv = vim.uv or vim.loop
local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h")
vim.opt.runtimepath:append(tests)
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(tests, ":h"))

local function out(line)
  io.stdout:write(line .. "\n")
  io.stdout:flush()
end

local specs = {}
local wanted = vim.env.DLINE_TEST_SPECS
for _, file in ipairs(vim.fn.globpath(tests, "*_spec.lua", false, true)) do
  local name = vim.fn.fnamemodify(file, ":t")
  if not wanted or wanted == "" or vim.tbl_contains(vim.split(wanted, ",", { trimempty = true }), name) then
    table.insert(specs, file)
  end
end
table.sort(specs)

local jobs = {}
for _, file in ipairs(specs) do
  local ok, suite = pcall(dofile, file)
  if not ok or type(suite) ~= "table" or not suite.cases then
    out(("not ok - %s: cannot load: %s"):format(vim.fn.fnamemodify(file, ":t"), tostring(suite)))
    table.insert(jobs, { failed_to_load = true })
  else
    for i, case in ipairs(suite.cases) do
      if not vim.env.DLINE_TEST_FILTER or case.name:find(vim.env.DLINE_TEST_FILTER) then
        table.insert(
          jobs,
          { file = file, index = i, name = vim.fn.fnamemodify(file, ":t") .. ": " .. case.name, timeout = case.timeout }
        )
      end
    end
  end
end

local nvim = vim.env.DLINE_TEST_NVIM or vim.v.progpath
local core = vim.env.DLINE_CORE or (vim.fn.fnamemodify(tests, ":h:h:h") .. "/dist/dline-core")
local parallel = tonumber(vim.env.DLINE_TEST_JOBS or "2")
local passed, failed = 0, 0
local running, next_job = 0, 1
for _, job in ipairs(jobs) do
  if job.failed_to_load then failed = failed + 1 end
end

local function run(job)
  running = running + 1
  local base = vim.fn.tempname() .. "-case"
  local dirs = { "home", "xdg-config", "xdg-data", "xdg-state", "xdg-cache", "xdg-runtime", "workspace", "tmp" }
  for _, d in ipairs(dirs) do
    vim.fn.mkdir(base .. "/" .. d, "p")
  end
  local env = {
    "PATH=" .. (vim.env.PATH or "/usr/bin:/bin"),
    "HOME=" .. base .. "/home",
    "XDG_CONFIG_HOME=" .. base .. "/xdg-config",
    "XDG_DATA_HOME=" .. base .. "/xdg-data",
    "XDG_STATE_HOME=" .. base .. "/xdg-state",
    "XDG_CACHE_HOME=" .. base .. "/xdg-cache",
    "XDG_RUNTIME_DIR=" .. base .. "/xdg-runtime",
    "TMPDIR=" .. base .. "/tmp",
    "DLINE_DIR=" .. base .. "/dline",
    "DLINE_HOME_DIR=" .. base .. "/dline-home",
    "DLINE_DOCS_DIR=" .. base .. "/docs",
    "DLINE_CORE=" .. core,
    "DLINE_TEST_BASE=" .. base,
    "DLINE_TEST_NVIM=" .. nvim,
  }
  for _, k in ipairs({ "DLINE_TEST_MODEL_SERVER", "DLINE_TEST_LOCK_HOLDER", "DLINE_TEST_NODE", "DLINE_TEST_KEEP" }) do
    if vim.env[k] then table.insert(env, k .. "=" .. vim.env[k]) end
  end
  local stdout, stderr = uv.new_pipe(false), uv.new_pipe(false)
  local output = {}
  local handle
  local timer = uv.new_timer()
  local timed_out = false
  local command = ("lua require('dline_test').run_case(%q, %d)"):format(job.file, job.index)
  local pending = 3 -- the exit, stdout's end, stderr's end
  local exit_code
  local function finalize()
    pending = pending - 1
    if pending > 0 then return end
    vim.schedule(function()
      running = running - 1
      local text = table.concat(output)
      if exit_code == 0 and text:find("DLINE_TEST_OK", 1, true) then
        passed = passed + 1
        out("ok - " .. job.name)
      else
        failed = failed + 1
        out(("not ok - %s (exit %d%s)"):format(job.name, exit_code, timed_out and ", timed out" or ""))
        for line in text:gmatch("[^\n]+") do
          if not line:find("DLINE_TEST_OK", 1, true) then out("    " .. line) end
        end
      end
      if not vim.env.DLINE_TEST_KEEP then vim.fn.delete(base, "rf") end
    end)
  end
  handle = uv.spawn(nvim, {
    args = { "--headless", "--clean", "-u", tests .. "/minimal_init.lua", "-c", command },
    cwd = base .. "/workspace",
    env = env,
    stdio = { nil, stdout, stderr },
  }, function(code)
    exit_code = code
    timer:stop()
    timer:close()
    handle:close()
    finalize()
  end)
  if not handle then
    running = running - 1
    failed = failed + 1
    out("not ok - " .. job.name .. " (cannot start " .. nvim .. ")")
    return
  end
  local function reader(_, data)
    if data then table.insert(output, data) end
  end
  stdout:read_start(function(err, data)
    if data == nil or err then
      stdout:close()
      return finalize()
    end
    reader(err, data)
  end)
  stderr:read_start(function(err, data)
    if data == nil or err then
      stderr:close()
      return finalize()
    end
    reader(err, data)
  end)
  timer:start(job.timeout or 90000, 0, function()
    timed_out = true
    handle:kill("sigkill")
  end)
end

while next_job <= #jobs or running > 0 do
  while running < parallel and next_job <= #jobs do
    local job = jobs[next_job]
    next_job = next_job + 1
    if not job.failed_to_load then run(job) end
  end
  vim.wait(50, function() return running < parallel and next_job <= #jobs end, 10)
end

out(("%d passed, %d failed"):format(passed, failed))
-- No case at all is a failure, unless a filter chose none of this spec's cases.
if failed > 0 or (passed == 0 and (vim.env.DLINE_TEST_FILTER or "") == "") then
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
