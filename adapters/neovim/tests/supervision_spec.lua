-- Supervision against misbehaving fake sidecars (tests/fixtures/fake-sidecar): one that
-- never hands shake, one that speaks another protocol, one that dies mid-stream.
local T = require("dline_test")
local S = T.suite()

local fake = T.repo_root() .. "/adapters/neovim/tests/fixtures/fake-sidecar"

local function session(mode, opts)
  local dline = require("dline")
  dline.setup(vim.tbl_deep_extend("force", {
    core_path = fake,
    core_args = { "--mode", mode },
    restart = { max_restarts = 2, window_ms = 60000, base_delay_ms = 50, max_delay_ms = 200 },
  }, opts or {}))
  local s = dline.session()
  T.defer(function() s:stop() end)
  return s
end

S.case("a sidecar that never hands shake is killed, restarted with backoff, then given up on", function()
  -- Long enough for the fake (a headless Neovim) to count its start on a loaded machine.
  local s = session("no-handshake", { start_timeout_ms = 2000 })
  local err = T.call_err(s, "SystemService", "Health", {})
  T.eq(err.code, "unavailable", "code")
  T.contains(err.message, "no handshake within 2000 ms", "reason")
  T.contains(err.message, "gave up after 2 restarts", "gave up")
  T.eq(s:state(), "failed", "state")
  T.eq(s.sidecar.starts, 3, "first start and two restarts")
  T.eq(T.read(T.base() .. "/fake-starts"), "3", "three processes ran")
  -- Health reports the error for :checkhealth; :Dline restart tries again.
  T.contains(s.sidecar.last_error, "gave up", "last error kept")
  T.eq(s:restart(), nil, "restart")
  T.eq(s:state(), "starting", "starting again")
end, { timeout = 60000 })

S.case("a sidecar speaking another protocol version is stopped without restarts", function()
  local s = session("bad-protocol")
  local err = T.call_err(s, "SystemService", "Health", {})
  T.contains(err.message, "protocol 99", "reason")
  T.eq(s.sidecar.starts, 1, "no restart loop")
end)

S.case(
  "a sidecar dying mid-stream is restarted and the stream resumes after the last seq, without duplicates",
  function()
    local s = session("die-mid-stream")
    local seqs, text = {}, {}
    local watch = s:watch({
      service = "TaskService",
      method = "Subscribe",
      request = function(after_seq) return { taskId = "t1", afterSeq = after_seq } end,
      seq = function(msg) return msg.event.seq end,
      on_message = function(msg)
        table.insert(seqs, tonumber(msg.event.seq))
        table.insert(text, msg.event.messageDelta.text)
      end,
    })
    T.wait(function() return #seqs >= 6 end, "six events")
    vim.wait(200)
    T.eq(seqs, { 1, 2, 3, 4, 5, 6 }, "every event once, in order")
    T.eq(table.concat(text), "part1 part2 part3 part4 part5 part6 ", "text")
    T.eq(s.sidecar.starts, 2, "restarted once")
    local requests = vim.split(vim.trim(T.read(T.base() .. "/fake-requests")), "\n")
    T.eq(requests[1], "start 1 subscribe after 0", "first subscribe")
    T.eq(requests[2], "start 2 subscribe after 3", "resumed after the last seq seen")
    watch.close()
  end
)

return S
