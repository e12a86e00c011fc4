--- *dline.config* Options of `require("dline").setup()`, their defaults and validation.
---
--- What it does: merges the user's options over the defaults and rejects unknown keys and
--- wrong types with a message naming the key and the expected type.

local M = {}
local H = {}

--- Defaults (documented in `:help dline-config`).
function M.defaults()
  local cache = vim.fn.stdpath("cache") .. "/dline"
  return {
    -- Path of the dline-core executable; nil: $DLINE_CORE, then bin/dline-core next to the
    -- plugin, then a Dline checkout's dist/dline-core, then dline-core on PATH.
    core_path = nil,
    -- Extra arguments after `dline-core serve` (e.g. { "--log-level", "debug" }).
    core_args = {},
    -- The plugin's log file and the file receiving the sidecar's stderr.
    log_file = cache .. "/dline.log",
    sidecar_log_file = cache .. "/sidecar.log",
    -- debug | info | warn | error
    log_level = "info",
    -- How long the sidecar may take to print its handshake before it counts as failed.
    start_timeout_ms = 20000,
    -- Deadline of one unary call.
    request_timeout_ms = 30000,
    -- Restart policy when the sidecar dies: at most `max_restarts` within `window_ms`,
    -- waiting `base_delay_ms`, doubling up to `max_delay_ms`; then it stays stopped and
    -- says so (`:Dline restart` tries again). Every client uses these numbers (docs/clients.md).
    restart = { max_restarts = 5, window_ms = 180000, base_delay_ms = 250, max_delay_ms = 8000 },
    -- Profile for new tasks; "" uses the configured default profile.
    profile_id = "",
    -- Where the chat sidebar opens: "right" or "left" (vertical split), "below" (split), "tab"
    -- or "current" (the current window). One sidebar per tab page shows every task's chat.
    -- `width` / `height`: at most half the screen (it follows VimResized; dline.sidebar.fit).
    chat = { position = "right", width = 80, height = 20, input_height = 3 },
    -- Compare opens one tab per changed file, up to this many; all files go to the quickfix list.
    compare = { max_tabs = 8 },
    -- Ask with vim.ui.select when the task needs an approval or an answer.
    prompt_on_ask = true,
    -- Before asking to approve an edit, show the change in diff tabs (gp in the chat shows it
    -- again).
    preview = true,
    -- A buffer without unsaved changes shows its file again when something else changes it
    -- (a restore in another window or from the CLI): see dline.disk_watch.
    follow_disk_changes = true,
  }
end

H.schema = {
  core_path = { "string", true },
  core_args = { "table" },
  log_file = { "string" },
  sidecar_log_file = { "string" },
  log_level = { "string" },
  start_timeout_ms = { "number" },
  request_timeout_ms = { "number" },
  restart = {
    "table",
    fields = {
      max_restarts = { "number" },
      window_ms = { "number" },
      base_delay_ms = { "number" },
      max_delay_ms = { "number" },
    },
  },
  profile_id = { "string" },
  chat = {
    "table",
    fields = { position = { "string" }, width = { "number" }, height = { "number" }, input_height = { "number" } },
  },
  compare = { "table", fields = { max_tabs = { "number" } } },
  prompt_on_ask = { "boolean" },
  preview = { "boolean" },
  follow_disk_changes = { "boolean" },
}

function H.check(schema, value, prefix)
  if type(value) ~= "table" then
    error(("(dline) setup: %s must be a table, got %s"):format(prefix ~= "" and prefix or "options", type(value)), 0)
  end
  for key, v in pairs(value) do
    local name = prefix == "" and key or (prefix .. "." .. key)
    local spec = schema[key]
    if not spec then error(("(dline) setup: unknown option '%s'"):format(name), 0) end
    if type(v) ~= spec[1] then error(("(dline) setup: '%s' must be a %s, got %s"):format(name, spec[1], type(v)), 0) end
    if spec.fields then H.check(spec.fields, v, name) end
  end
end

--- Validates `user` and returns the merged options; raises "(dline) setup: ..." on error.
function M.resolve(user)
  user = user or {}
  H.check(H.schema, user, "")
  local merged = vim.tbl_deep_extend("force", M.defaults(), user)
  if not require("dline.log").levels[merged.log_level] then
    error(("(dline) setup: 'log_level' must be one of debug, info, warn, error, got '%s'"):format(merged.log_level), 0)
  end
  local positions = { right = true, left = true, below = true, tab = true, current = true }
  if not positions[merged.chat.position] then
    error(
      ("(dline) setup: 'chat.position' must be right, left, below, tab or current, got '%s'"):format(
        merged.chat.position
      ),
      0
    )
  end
  return merged
end

return M
