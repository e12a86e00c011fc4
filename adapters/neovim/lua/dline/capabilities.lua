--- *dline.capabilities* `:Dline capabilities`: list rules, workflows, skills, subagents, hooks
--- and MCP servers, and toggle one at workspace scope.
---
--- What it does: ListCapabilities for the editor's working directory, shown with
--- vim.ui.select grouped by kind (with the effective state, the workspace toggle and an MCP
--- server's status); the chosen one gets a second vim.ui.select: Enable / Disable / Inherit
--- in this workspace (SetCapabilityToggle, scope workspace). Inherit removes the workspace's
--- entry, so the global toggle (or the default, enabled) decides again.

local M = {}
local H = {}

local function dline()
  return require("dline")
end

-- The order kinds are listed in, with their labels.
H.KINDS = { "rules", "workflows", "skills", "subagents", "hooks", "mcp" }
H.KIND_LABELS = { rules = "rule", workflows = "workflow", skills = "skill", subagents = "subagent", hooks = "hook", mcp = "MCP" }

H.MCP_STATES = {
  MCP_SERVER_STATE_STOPPED = "stopped",
  MCP_SERVER_STATE_STARTING = "starting",
  MCP_SERVER_STATE_CONNECTED = "connected",
  MCP_SERVER_STATE_RESTARTING = "restarting",
  MCP_SERVER_STATE_FAILED = "failed",
}

--- The choices of the second menu, in order, with the ToggleState each sets.
M.ACTIONS = {
  { label = "Enable in this workspace", state = "TOGGLE_STATE_ENABLED" },
  { label = "Disable in this workspace", state = "TOGGLE_STATE_DISABLED" },
  { label = "Inherit (remove this workspace's toggle)", state = "TOGGLE_STATE_INHERIT" },
}

--- Capabilities sorted by kind (in H.KINDS order), then name.
function M.sorted(capabilities)
  local rank = {}
  for i, k in ipairs(H.KINDS) do
    rank[k] = i
  end
  local list = vim.deepcopy(capabilities or {})
  table.sort(list, function(a, b)
    local ra, rb = rank[a.kind] or 99, rank[b.kind] or 99
    if ra ~= rb then return ra < rb end
    return (a.name or a.resource or "") < (b.name or b.resource or "")
  end)
  return list
end

--- One line per capability: "[rule] name  on|off  (workspace: disabled)  mcp: connected  ! error".
function M.label(c)
  local parts = { ("[%s] %s"):format(H.KIND_LABELS[c.kind] or c.kind or "?", (c.name or "") ~= "" and c.name or c.resource or "?") }
  table.insert(parts, c.enabled and "on" or "off")
  local workspace = c.toggle and c.toggle.workspace
  if workspace == "TOGGLE_STATE_ENABLED" or workspace == "TOGGLE_STATE_DISABLED" then
    table.insert(parts, "(workspace: " .. (workspace == "TOGGLE_STATE_ENABLED" and "enabled" or "disabled") .. ")")
  end
  if c.origin and c.origin ~= "" then table.insert(parts, c.origin) end
  if c.kind == "mcp" and c.mcp then
    local state = H.MCP_STATES[c.mcp.state] or "stopped"
    local tools = c.mcp.tools and #c.mcp.tools > 0 and (" (%d tools)"):format(#c.mcp.tools) or ""
    table.insert(parts, "mcp: " .. state .. tools)
    if (c.mcp.lastError or "") ~= "" then table.insert(parts, "last error: " .. c.mcp.lastError) end
  end
  if (c.error or "") ~= "" then table.insert(parts, "! " .. c.error) end
  return (table.concat(parts, "  "):gsub("\n", " "))
end

--- Lists, picks, toggles. `opts.workspace_root` defaults to the working directory.
--- `cb(err, toggle)` (tests): the resulting CapabilityToggle, "cancelled", or the RPC error.
function M.open(opts, cb)
  opts = opts or {}
  local root = opts.workspace_root or (vim.uv or vim.loop).cwd()
  local function finish(err, value)
    if cb then cb(err, value) end
  end
  local session = dline().session()
  session:call("SettingsService", "ListCapabilities", { workspaceRoot = root }, function(err, res)
    if err then
      dline().notify_error("capabilities", err)
      return finish(err)
    end
    for _, p in ipairs(res.problems or {}) do
      dline().notify(("capabilities: %s: %s (%s)"):format(p.path or "?", p.message or "", p.code or ""), vim.log.levels.WARN)
    end
    local list = M.sorted(res.capabilities)
    if #list == 0 then
      dline().notify("capabilities: none found (rules, workflows, skills, subagents, hooks, MCP servers)")
      return finish(nil, nil)
    end
    vim.ui.select(list, { prompt = "Dline capabilities (" .. root .. ")", kind = "dline.capabilities", format_item = M.label }, function(cap)
      if not cap then return finish("cancelled") end
      vim.ui.select(M.ACTIONS, {
        prompt = M.label(cap),
        kind = "dline.capability_toggle",
        format_item = function(a)
          return a.label
        end,
      }, function(action)
        if not action then return finish("cancelled") end
        local request = {
          scope = "TOGGLE_SCOPE_WORKSPACE",
          workspaceRoot = root,
          kind = cap.kind,
          resource = cap.resource,
          state = action.state,
        }
        session:call("SettingsService", "SetCapabilityToggle", request, function(set_err, set_res)
          if set_err then
            dline().notify_error("capabilities", set_err)
            return finish(set_err)
          end
          local toggle = set_res.toggle or {}
          dline().notify(("capabilities: %s %s is now %s"):format(H.KIND_LABELS[cap.kind] or cap.kind, (cap.name or "") ~= "" and cap.name or cap.resource, toggle.enabled and "enabled" or "disabled"))
          finish(nil, toggle)
        end)
      end)
    end)
  end)
end

return M
