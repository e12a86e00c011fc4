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
    vim.api.nvim_create_autocmd("VimLeavePre", {
      group = group,
      callback = function()
        if H.state.session then H.state.session:stop() end
      end,
    })
  end
  return H.state.session
end

--- Whether a session exists (for :checkhealth, which must not start one).
function M.has_session() return H.state.session ~= nil end

--- Shows a message prefixed "(dline)".
function M.notify(message, level) vim.notify("(dline) " .. message, level or vim.log.levels.INFO) end

--- Shows an RPC error cleanly: "(dline) what: code: message".
function M.notify_error(what, err)
  local text = type(err) == "table" and require("dline.connect").format_error(err) or tostring(err)
  M.logger():warn(what .. ": " .. text)
  M.notify(what .. ": " .. text, vim.log.levels.ERROR)
end

return M
