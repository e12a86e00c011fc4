--- *dline.log* The plugin's log file, and an append-only file writer.
---
--- What it does: appends lines to a file without blocking the editor (libuv file writes, one
--- at a time so that lines stay in order), and keeps the last errors in memory for
--- `:checkhealth dline`. The sidecar's stderr is written through the same appender.
--- What it does not do: rotate files or show messages (callers use vim.notify).

local uv = vim.uv or vim.loop

local M = {}
local H = {}

M.levels = { debug = 1, info = 2, warn = 3, error = 4 }

---@class dline.Appender
---@field write fun(self: dline.Appender, data: string)
---@field close fun(self: dline.Appender)

--- An appender for `path`. Its folder is created now (on the main loop); writes are queued
--- and may be called from libuv callbacks.
---@return dline.Appender
function M.new_appender(path)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local self = { path = path, queue = {}, busy = false, fd = nil, closed = false, failed = nil }

  local function pump()
    if self.busy or #self.queue == 0 or self.failed then return end
    self.busy = true
    local data = table.concat(self.queue)
    self.queue = {}
    local function write(fd)
      uv.fs_write(fd, data, -1, function(err)
        self.busy = false
        if err then self.failed = err end
        if self.closed and #self.queue == 0 then
          uv.fs_close(fd, function() end)
          self.fd = nil
          return
        end
        pump()
      end)
    end
    if self.fd then return write(self.fd) end
    uv.fs_open(path, "a", 384 --[[ 0600 ]], function(err, fd)
      if err then
        self.busy = false
        self.failed = err
        return
      end
      self.fd = fd
      write(fd)
    end)
  end

  function self.write(_, data)
    if self.closed or data == nil or data == "" then return end
    self.queue[#self.queue + 1] = data
    pump()
  end

  function self.close(_)
    self.closed = true
    if not self.busy and self.fd then
      uv.fs_close(self.fd, function() end)
      self.fd = nil
    end
  end

  return self
end

---@class dline.Logger
---@field file string
---@field recent_errors string[]

--- A logger writing `TIME LEVEL message` lines to `opts.file` at or above `opts.level`.
---@param opts { file: string, level: string }
---@return dline.Logger
function M.new(opts)
  local self = setmetatable({
    file = opts.file,
    level = M.levels[opts.level] or M.levels.info,
    appender = M.new_appender(opts.file),
    recent_errors = {},
  }, { __index = H.Logger })
  return self
end

H.Logger = {}

function H.Logger.log(self, level, message)
  if (M.levels[level] or 4) < self.level then return end
  local line = ("%s %s %s\n"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), level:upper(), message)
  self.appender:write(line)
  if level == "error" then
    table.insert(self.recent_errors, os.date("!%H:%M:%S ") .. message)
    if #self.recent_errors > 10 then table.remove(self.recent_errors, 1) end
  end
end

for name in pairs(M.levels) do
  H.Logger[name] = function(self, message) self:log(name, message) end
end

function H.Logger.close(self) self.appender:close() end

return M
