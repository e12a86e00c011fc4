--- *dline.capabilities* `:Dline capabilities`: list rules, workflows, skills, subagents, hooks
--- and MCP servers, and toggle one at workspace scope.
---
--- What it does: ListCapabilities for the editor's working directory, shown with
--- vim.ui.select grouped by kind (with the effective state, the workspace toggle and an MCP
--- server's status); the chosen one gets a second vim.ui.select: Enable / Disable / Inherit
--- in this workspace (SetCapabilityToggle, scope workspace). Inherit removes the workspace's
--- entry, so the global toggle (or the default, enabled) decides again.
---
--- Workspace trust: the workspace's own hooks (.agents/hooks) and MCP servers (.agents/mcp)
--- come from the repository and run only once the person trusted the workspace. They are
--- labelled "untrusted" until then, and the list ends with "Trust this workspace..." (or
--- "Stop trusting this workspace" once trusted). `:Dline trust` asks for a confirmation that
--- says what trusting allows, then calls SettingsService.TrustWorkspace; `:Dline untrust`
--- stops trusting at once (running workspace MCP servers are stopped).

local M = {}
local H = {}

local function dline() return require("dline") end

-- The order kinds are listed in, with their labels.
H.KINDS = { "rules", "workflows", "skills", "subagents", "hooks", "mcp" }
H.KIND_LABELS =
  { rules = "rule", workflows = "workflow", skills = "skill", subagents = "subagent", hooks = "hook", mcp = "MCP" }

H.MCP_STATES = {
  MCP_SERVER_STATE_STOPPED = "stopped",
  MCP_SERVER_STATE_STARTING = "starting",
  MCP_SERVER_STATE_CONNECTED = "connected",
  MCP_SERVER_STATE_RESTARTING = "restarting",
  MCP_SERVER_STATE_FAILED = "failed",
  MCP_SERVER_STATE_UNTRUSTED = "untrusted",
}

--- The trust confirmation's choices (the first trusts).
M.TRUST_CHOICES = {
  {
    label = "Trust: let Dline run this workspace's hooks (.agents/hooks) and MCP servers (.agents/mcp)",
    trusted = true,
  },
  { label = "Cancel", trusted = false },
}
M.TRUST_PROMPT =
  "Trust %s? Its own hooks and MCP servers come from the repository and run as programs with your permissions."

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
  local parts =
    { ("[%s] %s"):format(H.KIND_LABELS[c.kind] or c.kind or "?", (c.name or "") ~= "" and c.name or c.resource or "?") }
  table.insert(parts, c.enabled and "on" or "off")
  local workspace = c.toggle and c.toggle.workspace
  if workspace == "TOGGLE_STATE_ENABLED" or workspace == "TOGGLE_STATE_DISABLED" then
    table.insert(parts, "(workspace: " .. (workspace == "TOGGLE_STATE_ENABLED" and "enabled" or "disabled") .. ")")
  end
  if c.origin and c.origin ~= "" then table.insert(parts, c.origin) end
  if c.untrusted and not (c.mcp and c.mcp.state == "MCP_SERVER_STATE_UNTRUSTED") then
    table.insert(parts, "untrusted")
  end
  if c.kind == "mcp" and c.mcp then
    local state = H.MCP_STATES[c.mcp.state] or "stopped"
    local tools = c.mcp.tools and #c.mcp.tools > 0 and (" (%d tools)"):format(#c.mcp.tools) or ""
    table.insert(parts, "mcp: " .. state .. tools)
    if (c.mcp.lastError or "") ~= "" then table.insert(parts, "last error: " .. c.mcp.lastError) end
  end
  if (c.error or "") ~= "" then table.insert(parts, "! " .. c.error) end
  return (table.concat(parts, "  "):gsub("\n", " "))
end

--- Trusts (`trusted` true, after the confirmation menu unless `opts.confirmed`) or stops
--- trusting the workspace `opts.workspace_root` (default: the working directory).
--- `cb(err, trusted)`: whether the workspace is trusted afterwards, "cancelled", or the RPC error.
function M.set_trust(trusted, opts, cb)
  opts = opts or {}
  local root = opts.workspace_root or (vim.uv or vim.loop).cwd()
  local function finish(err, value)
    if cb then cb(err, value) end
  end
  local function apply()
    dline()
      .session()
      :call("SettingsService", "TrustWorkspace", { workspaceRoot = root, trusted = trusted }, function(err, res)
        if err then
          dline().notify_error("capabilities", err)
          return finish(err)
        end
        local now = res.workspaceTrusted == true
        dline().notify(
          ("capabilities: %s is %s"):format(
            root,
            now and "trusted: its hooks and MCP servers may run" or "not trusted: its hooks and MCP servers do not run"
          )
        )
        finish(nil, now)
      end)
  end
  if not trusted or opts.confirmed then return apply() end
  require("dline.ui").select(M.TRUST_CHOICES, {
    prompt = M.TRUST_PROMPT:format(root),
    kind = "dline.trust",
    format_item = function(choice) return choice.label end,
  }, function(choice)
    if not (choice and choice.trusted) then return finish("cancelled") end
    apply()
  end)
end

--- The entry that ends the list: trust (when the workspace has untrusted hooks or MCP servers)
--- or stop trusting (when it is trusted); none otherwise.
function M.trust_entry(workspace_trusted, capabilities)
  if workspace_trusted then
    return { trust_action = false, label = "Stop trusting this workspace (its hooks and MCP servers stop running)" }
  end
  for _, c in ipairs(capabilities or {}) do
    if c.untrusted then
      return { trust_action = true, label = "Trust this workspace... (run its hooks and MCP servers)" }
    end
  end
end

--- Lists, picks, toggles. `opts.workspace_root` defaults to the working directory.
--- `cb(err, toggle)` (tests): the resulting CapabilityToggle, "cancelled", or the RPC error;
--- after the trust entry, what M.set_trust gives.
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
      dline().notify(
        ("capabilities: %s: %s (%s)"):format(p.path or "?", p.message or "", p.code or ""),
        vim.log.levels.WARN
      )
    end
    local list = M.sorted(res.capabilities)
    local trust = M.trust_entry(res.workspaceTrusted == true, res.capabilities)
    if trust and trust.trust_action then
      dline().notify(
        "capabilities: this workspace's hooks and MCP servers do not run until you trust it (:Dline trust)",
        vim.log.levels.WARN
      )
    end
    if trust then table.insert(list, trust) end
    if #list == 0 then
      dline().notify("capabilities: none found (rules, workflows, skills, subagents, hooks, MCP servers)")
      return finish(nil, nil)
    end
    local function format(item) return item.trust_action ~= nil and item.label or M.label(item) end
    require("dline.ui").select(
      list,
      { prompt = "Dline capabilities (" .. root .. ")", kind = "dline.capabilities", format_item = format },
      function(cap)
        if not cap then return finish("cancelled") end
        if cap.trust_action ~= nil then return M.set_trust(cap.trust_action, { workspace_root = root }, cb) end
        require("dline.ui").select(M.ACTIONS, {
          prompt = M.label(cap),
          kind = "dline.capability_toggle",
          format_item = function(a) return a.label end,
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
            dline().notify(
              ("capabilities: %s %s is now %s"):format(
                H.KIND_LABELS[cap.kind] or cap.kind,
                (cap.name or "") ~= "" and cap.name or cap.resource,
                toggle.enabled and "enabled" or "disabled"
              )
            )
            finish(nil, toggle)
          end)
        end)
      end
    )
  end)
end

return M
