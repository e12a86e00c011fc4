--- *dline* The Dline coding agent in Neovim.
---
--- What it does: the public API (`setup`, `session`, and the functions behind `:Dline`),
--- built on one dline.session per editor, created on first use. The agent, its tasks,
--- settings, history and checkpoints live in the dline-core sidecar; this plugin renders
--- them and sends the user's words and decisions back.
--- What it does not do: write any of Dline's files itself.

local M = {}
local H = {}

H.state = { config = nil, session = nil, logger = nil }

--- Configures the plugin (optional: defaults apply without it). See `:help dline-config`.
---@param opts table|nil
function M.setup(opts)
  H.state.config = require("dline.config").resolve(opts)
  if H.state.session then
    -- A new configuration applies to the next sidecar.
    H.state.session.config = H.state.config
  end
  return M
end

function M.config()
  if not H.state.config then H.state.config = require("dline.config").resolve({}) end
  return H.state.config
end

function M.logger()
  if not H.state.logger then
    local config = M.config()
    H.state.logger = require("dline.log").new({ file = config.log_file, level = config.log_level })
  end
  return H.state.logger
end

--- The editor's session with its sidecar (created, not started, on first call).
---@return dline.Session
function M.session()
  if not H.state.session then
    local session = require("dline.session").new(M.config(), M.logger())
    H.state.session = session
    session:on(function(event)
      if event == "restarting" then
        M.notify("the sidecar stopped unexpectedly; restarting it", vim.log.levels.WARN)
      elseif event == "down" and session.sidecar and session.sidecar.state == "failed" then
        M.notify(tostring(session.sidecar.last_error), vim.log.levels.ERROR)
      end
    end)
    local group = vim.api.nvim_create_augroup("dline_session", { clear = true })
    local disk_watch = M.config().follow_disk_changes and require("dline.disk_watch").start(group) or nil
    vim.api.nvim_create_autocmd("VimLeavePre", {
      group = group,
      callback = function()
        if disk_watch then disk_watch:stop() end
        if H.state.session then H.state.session:stop() end
      end,
    })
  end
  return H.state.session
end

--- Whether a session exists (for :checkhealth, which must not start one).
function M.has_session() return H.state.session ~= nil end

--- The notices shown lately, whole (`:Dline messages`), oldest first.
H.notices = {}
H.MAX_NOTICES = 50

--- Whether vim.notify is Neovim's own, which echoes: a message of several lines, or wider than
--- the command line, stops the editor at "Press ENTER". A replacement (nvim-notify, noice, a
--- user's own) shows any message as it sees fit and gets each one whole.
function H.echoing_notify()
  local ok, info = pcall(debug.getinfo, vim.notify, "S")
  return ok and info and (info.source or ""):match("vim/_editor%.lua$") ~= nil
end

--- Shows a message prefixed "(dline)". Neovim's own vim.notify gets one line that fits on the
--- command line (the first, cut if need be, pointing to `:Dline messages` for the rest), so
--- that no notice waits for ENTER; a vim.notify of the user's gets the whole message.
function M.notify(message, level)
  local text = "(dline) " .. message
  level = level or vim.log.levels.INFO
  table.insert(H.notices, { text = text, level = level, time = os.time() })
  if #H.notices > H.MAX_NOTICES then table.remove(H.notices, 1) end
  if not H.echoing_notify() then return vim.notify(text, level) end
  vim.notify(M.one_line_notice(text, vim.v.echospace), level)
end

--- `text` as one line of at most `width` cells: its first line (cut with "…" if too wide),
--- and when something was left out, where the whole message is.
function M.one_line_notice(text, width)
  local first, rest = text:match("^([^\n]*)\n?(.*)$")
  if rest == "" and vim.fn.strdisplaywidth(first) <= width then return first end
  local more = rest ~= ""
      and (" [+%d line%s: :Dline messages]"):format(
        #vim.split(rest, "\n", { plain = true }),
        rest:find("\n") and "s" or ""
      )
    or " [:Dline messages]"
  local room = math.max(width - vim.fn.strdisplaywidth(more), 10)
  if vim.fn.strdisplaywidth(first) > room then
    -- Cut by display cells (wide characters count two), leaving room for the "…".
    local cut = ""
    for _, ch in ipairs(vim.fn.split(first, "\\zs")) do
      if vim.fn.strdisplaywidth(cut .. ch) > room - 1 then break end
      cut = cut .. ch
    end
    first = cut .. "…"
  end
  return first .. more
end

--- Shows a message of several lines whole, asked for (a list to read before answering a
--- question): echoed as it is (Neovim's own paging, "-- More --"), not cut to one line, and
--- kept for `:Dline messages` like a notice. `own_line`: start on a new line (after the answer
--- to Neovim's own select, which leaves the cursor on its line).
function M.show_whole(message, own_line)
  local text = "(dline) " .. message
  table.insert(H.notices, { text = text, level = vim.log.levels.INFO, time = os.time() })
  if #H.notices > H.MAX_NOTICES then table.remove(H.notices, 1) end
  vim.api.nvim_echo({ { (own_line and "\n" or "") .. text } }, false, {})
end

--- Shows the notices of this session whole (`:Dline messages`), newest last.
function M.show_notices()
  if #H.notices == 0 then return vim.api.nvim_echo({ { "(dline) no messages yet" } }, false, {}) end
  local chunks = {}
  local groups = { [vim.log.levels.WARN] = "WarningMsg", [vim.log.levels.ERROR] = "ErrorMsg" }
  for i, n in ipairs(H.notices) do
    table.insert(chunks, { os.date("%H:%M:%S ", n.time) .. n.text .. (i < #H.notices and "\n" or ""), groups[n.level] })
  end
  vim.api.nvim_echo(chunks, false, {})
end

--- Shows an RPC error cleanly: "(dline) what: message" (the log has its code too).
function M.notify_error(what, err)
  local connect = require("dline.connect")
  M.logger():warn(what .. ": " .. connect.format_error(err))
  M.notify(what .. ": " .. connect.error_text(err), vim.log.levels.ERROR)
end

return M
