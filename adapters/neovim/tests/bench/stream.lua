-- Run by bench/neovim-stream.bench.ts in a headless Neovim: reads one long Connect stream from
-- $BENCH_URL three ways and prints one JSON line per way:
--   raw     bytes read from the socket, nothing decoded (the baseline)
--   client  dline.connect: de-chunking, envelopes, JSON, delivery on the main loop
--   chat    the same, each event applied to a chat buffer (what the user sees)
-- While each runs, a 2 ms repeating timer records how late it fires: the longest gap is the
-- longest time the main loop was blocked.
local root = vim.env.BENCH_PLUGIN
vim.opt.runtimepath:prepend(root)
local uv = vim.loop
local connect = require("dline.connect")
local transport = require("dline.transport")

local function out(obj)
  io.stdout:write(vim.json.encode(obj) .. "\n")
  io.stdout:flush()
end

local function watch_loop()
  local timer = uv.new_timer()
  local last = uv.hrtime()
  local max_gap, over, ticks = 0, 0, 0
  timer:start(2, 2, function()
    local now = uv.hrtime()
    local gap = (now - last) / 1e6
    if gap > max_gap then max_gap = gap end
    if gap > 16 then over = over + 1 end
    ticks = ticks + 1
    last = now
  end)
  -- The timer runs in the loop; vim.schedule'd work between ticks shows up as lateness.
  return function()
    timer:stop()
    timer:close()
    return max_gap, over, ticks
  end
end

local function body()
  local payload = vim.json.encode({ taskId = "bench" })
  return string.char(0, 0, 0, 0, #payload) .. payload
end

local function raw()
  local t = transport.new(vim.env.BENCH_URL)
  local bytes, done = 0, false
  local stop = watch_loop()
  local started = uv.hrtime()
  t:request({
    method = "POST",
    path = "/dline.v1.TaskService/Subscribe",
    headers = { { "Content-Type", "application/connect+json" } },
    body = body(),
    on_body = function(d) bytes = bytes + #d end,
    on_complete = function() done = true end,
    on_error = function(e) error(e) end,
  })
  vim.wait(120000, function() return done end, 1)
  local seconds = (uv.hrtime() - started) / 1e9
  local max_gap, over, ticks = stop()
  out({ way = "raw", bytes = bytes, seconds = seconds, maxGapMs = max_gap, over16 = over, ticks = ticks })
end

local function client(render)
  local c = connect.new({ url = vim.env.BENCH_URL, token = "bench" })
  local chat
  if render then
    chat = require("dline.chat").new("bench-task")
    chat:open({ position = "current", width = 80, height = 20, input_height = 3 })
  end
  local events, done = 0, false
  local stop = watch_loop()
  local started = uv.hrtime()
  c:stream("TaskService", "Subscribe", { taskId = "bench" }, {
    on_message = function(msg)
      events = events + 1
      if chat then chat:apply(msg.event) end
    end,
    on_end = function(err)
      if err then error(connect.format_error(err)) end
      done = true
    end,
  })
  vim.wait(300000, function() return done end, 1)
  local seconds = (uv.hrtime() - started) / 1e9
  local max_gap, over, ticks = stop()
  out({
    way = render and "chat" or "client",
    events = events,
    seconds = seconds,
    maxGapMs = max_gap,
    over16 = over,
    ticks = ticks,
  })
end

local ok, err = pcall(function()
  raw()
  client(false)
  client(true)
end)
if not ok then
  io.stderr:write(tostring(err) .. "\n")
  vim.cmd("cquit 1")
end
vim.cmd("qall!")
