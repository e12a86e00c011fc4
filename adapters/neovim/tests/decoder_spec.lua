-- Unit tests of the HTTP response parser, the chunked decoder and the Connect envelope
-- decoder: every split of the input at every byte boundary gives the same result.
local T = require("dline_test")
local http = require("dline.http")
local envelope = require("dline.envelope")
local S = T.suite()

local function chunked(parts)
  local out = {}
  for _, p in ipairs(parts) do
    out[#out + 1] = ("%x\r\n%s\r\n"):format(#p, p)
  end
  out[#out + 1] = "0\r\n\r\n"
  return table.concat(out)
end

--- Feeds `bytes` to a fresh decoder split into pieces at the given cut points.
local function feed_split(make, bytes, cuts)
  local dec, result = make()
  local prev = 1
  for _, cut in ipairs(cuts) do
    local err = dec:feed(bytes:sub(prev, cut))
    if err then return nil, err end
    prev = cut + 1
  end
  local err = dec:feed(bytes:sub(prev))
  if err then return nil, err end
  return result()
end

S.case("dechunker decodes a body split at every pair of byte boundaries", function()
  local body = chunked({ "hello ", "chunked", " world", string.rep("x", 17) })
  local function make()
    local got, ended = {}, 0
    local dec = http.new_dechunker(function(d) got[#got + 1] = d end, function() ended = ended + 1 end)
    return dec, function() return { text = table.concat(got), ended = ended, done = dec.done } end
  end
  local expected = { text = "hello chunked world" .. string.rep("x", 17), ended = 1, done = true }
  T.eq(feed_split(make, body, {}), expected, "whole")
  for i = 1, #body - 1 do
    T.eq(feed_split(make, body, { i }), expected, "split at " .. i)
    for j = i + 1, #body - 1, 3 do
      T.eq(feed_split(make, body, { i, j }), expected, ("split at %d,%d"):format(i, j))
    end
  end
  -- Byte by byte.
  local cuts = {}
  for i = 1, #body - 1 do
    cuts[i] = i
  end
  T.eq(feed_split(make, body, cuts), expected, "byte by byte")
end)

S.case("dechunker accepts chunk extensions and trailers and rejects garbage", function()
  local got = {}
  local dec = http.new_dechunker(function(d) got[#got + 1] = d end, function() end)
  T.eq(dec:feed("5;name=value\r\nabcde\r\n0\r\nX-Trailer: 1\r\n\r\n"), nil, "error")
  T.eq(table.concat(got), "abcde", "body")
  T.truthy(dec.done, "done")
  local bad = http.new_dechunker(function() end, function() end)
  T.truthy(bad:feed("zz\r\n"), "a malformed size line is an error")
  local no_crlf = http.new_dechunker(function() end, function() end)
  T.truthy(no_crlf:feed("2\r\nabXY"), "missing CRLF after data is an error")
end)

S.case("envelope decoder yields the same messages for every split and for coalesced input", function()
  local messages = {}
  for i = 1, 6 do
    messages[i] = { 0, vim.json.encode({ seq = tostring(i), text = string.rep("é", i * 3) }) }
  end
  messages[#messages + 1] = { 2, '{"metadata":{}}' }
  local bytes = {}
  for _, m in ipairs(messages) do
    bytes[#bytes + 1] = envelope.encode(m[1], m[2])
  end
  bytes = table.concat(bytes)
  local function make()
    local got = {}
    local dec = envelope.new_decoder(function(flags, payload) got[#got + 1] = { flags, payload } end)
    return dec, function() return { got = got, buffered = dec:buffered() } end
  end
  local expected = { got = messages, buffered = 0 }
  T.eq(feed_split(make, bytes, {}), expected, "coalesced")
  for i = 1, #bytes - 1 do
    T.eq(feed_split(make, bytes, { i }), expected, "split at " .. i)
    for j = i + 1, #bytes - 1, 5 do
      T.eq(feed_split(make, bytes, { i, j }), expected, ("split at %d,%d"):format(i, j))
    end
  end
  local cuts = {}
  for i = 1, #bytes - 1 do
    cuts[i] = i
  end
  T.eq(feed_split(make, bytes, cuts), expected, "byte by byte")
end)

S.case("envelope decoder keeps an incomplete message and refuses compressed or oversized ones", function()
  local got = {}
  local dec = envelope.new_decoder(function(_, p) got[#got + 1] = p end)
  local one = envelope.encode(0, "{}")
  T.eq(dec:feed(one:sub(1, 4)), nil, "feed")
  T.eq(#got, 0, "nothing before the length is known")
  T.eq(dec:buffered(), 4, "held bytes")
  dec:feed(one:sub(5))
  T.eq(got, { "{}" }, "message")
  T.eq(dec:buffered(), 0, "nothing held")
  T.truthy(envelope.new_decoder(function() end):feed(envelope.encode(1, "x")), "compressed flag is refused")
  T.truthy(
    envelope.new_decoder(function() end):feed(string.char(0, 0x7f, 0xff, 0xff, 0xff)),
    "oversized length is refused"
  )
  T.eq(envelope.encode(0, string.rep("a", 300)):byte(4), 1, "big-endian length")
end)

S.case("response parser handles content-length, chunked and close-delimited bodies split anywhere", function()
  local responses = {
    {
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\n{"a":"bc"}\n',
      200,
      '{"a":"bc"}\n',
      true,
    },
    { "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" .. chunked({ "ab", "cdef" }), 200, "abcdef", true },
    { "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 404, "no", false },
    { "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", 204, "", true },
  }
  for n, r in ipairs(responses) do
    local function make()
      local status, body, complete = nil, {}, false
      local p
      p = http.new_response_parser({
        on_headers = function(s) status = s end,
        on_body = function(d) body[#body + 1] = d end,
        on_complete = function() complete = true end,
      })
      return p,
        function() return { status = status, body = table.concat(body), complete = complete, keep_alive = p.keep_alive } end
    end
    local expected = { status = r[2], body = r[3], complete = true, keep_alive = r[4] }
    for i = 1, #r[1] - 1 do
      T.eq(feed_split(make, r[1], { i }), expected, ("response %d split at %d"):format(n, i))
    end
  end
  -- Close-delimited: complete only at the end of the connection.
  local body = {}
  local p = http.new_response_parser({ on_body = function(d) body[#body + 1] = d end })
  p:feed("HTTP/1.0 200 OK\r\n\r\nuntil close")
  T.eq(p.complete, false, "not complete before EOF")
  T.eq(p:finish(), nil, "finish")
  T.eq(table.concat(body), "until close", "body")
  local cut = http.new_response_parser({})
  cut:feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
  T.truthy(cut:finish(), "EOF mid-body is an error")
end)

S.case("connect.encode sends empty tables as objects and keeps int64 strings", function()
  local connect = require("dline.connect")
  T.eq(connect.encode({}), "{}", "empty request")
  T.eq(connect.encode(nil), "{}", "nil request")
  T.eq(vim.json.decode(connect.encode({ afterSeq = "9007199254740993" })).afterSeq, "9007199254740993", "int64 string")
end)

S.case("setup validates options and names the key", function()
  local ok, err = pcall(require("dline").setup, { core_path = 3 })
  T.eq(ok, false, "wrong type rejected")
  T.contains(err, "'core_path' must be a string", "message")
  ok, err = pcall(require("dline").setup, { nope = true })
  T.eq(ok, false, "unknown key rejected")
  T.contains(err, "unknown option 'nope'", "unknown key")
  ok, err = pcall(require("dline").setup, { chat = { position = "top" } })
  T.eq(ok, false, "wrong enum value rejected")
  T.contains(err, "chat.position", "enum")
  ok, err = pcall(require("dline").setup, { restart = { max_restarts = "5" } })
  T.eq(ok, false, "wrong nested type rejected")
  T.contains(err, "'restart.max_restarts' must be a number", "nested")
  T.truthy(pcall(require("dline").setup, { log_level = "debug", chat = { position = "below" } }), "valid options")
  T.eq(require("dline").config().chat.width, 80, "defaults kept beside the user's options")
end)

S.case("the restart policy backs off and gives up after the budget", function()
  local policy = require("dline.sidecar").restart_policy({
    max_restarts = 3,
    window_ms = 1000,
    base_delay_ms = 100,
    max_delay_ms = 250,
  })
  T.eq(policy:next_delay(0), 100, "first")
  T.eq(policy:next_delay(10), 200, "second")
  T.eq(policy:next_delay(20), 250, "third, capped")
  T.eq(policy:next_delay(30), nil, "budget spent")
  T.eq(policy:next_delay(1015), 200, "two restarts left the window")
  T.eq(policy:next_delay(3000), 100, "the window moved on")
end)

return S
