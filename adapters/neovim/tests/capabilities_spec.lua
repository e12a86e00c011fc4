-- :Dline capabilities against the real sidecar: a workspace rule is listed (grouped by kind,
-- with its state) and toggled at workspace scope through the two vim.ui.select menus; a
-- workspace hook is listed untrusted, :Dline trust (after its confirmation) and :Dline untrust,
-- and the list's trust entry, change the workspace's trust (TrustWorkspace).
local T = require("dline_test")
local S = T.suite()

local function capture_notify()
  local messages = {}
  vim.notify = function(msg, level) table.insert(messages, { msg = msg, level = level }) end
  return messages
end

local function list(session, root)
  return T.call(session, "SettingsService", "ListCapabilities", { workspaceRoot = root }).capabilities or {}
end

local function find(caps, kind, resource)
  for _, c in ipairs(caps) do
    if c.kind == kind and c.resource == resource then return c end
  end
end

--- Runs :Dline capabilities, picking the item labelled with `needle`, then `action`.
local function toggle_via_command(needle, action)
  local calls = T.script_select(function(items, opts, entry)
    if opts.kind == "dline.capabilities" then
      for i, label in ipairs(entry.labels) do
        if label:find(needle, 1, true) then return items[i] end
      end
      return nil
    end
    for i, label in ipairs(entry.labels) do
      if label:find(action, 1, true) then return items[i] end
    end
  end)
  local messages = capture_notify()
  vim.cmd("Dline capabilities")
  T.wait(function()
    for _, m in ipairs(messages) do
      if m.msg:find("is now", 1, true) or m.level == vim.log.levels.ERROR then return true end
    end
    return false
  end, "the toggle's result")
  for _, m in ipairs(messages) do
    T.truthy(m.level ~= vim.log.levels.ERROR, "no error: " .. m.msg)
  end
  return calls, messages
end

S.case(":Dline capabilities lists a workspace rule and toggles it at workspace scope", function()
  local root = (vim.uv or vim.loop).cwd()
  T.write(root .. "/.agents/rules/style.md", "# Style\nUse two spaces.\n")
  local s = require("dline").session()
  local rule = T.truthy(find(list(s, root), "rules", "style.md"), "the rule, listed by the sidecar")
  T.eq(rule.enabled, true, "enabled before")

  local calls, messages = toggle_via_command("style.md", "Disable")
  T.eq(#calls, 2, "two menus")
  T.eq(calls[1].opts.kind, "dline.capabilities", "first menu")
  local label
  for _, l in ipairs(calls[1].labels) do
    if l:find("style.md", 1, true) then label = l end
  end
  T.matches(label, "^%[rule%] ", "labelled with its kind")
  T.contains(label, "  on", "shows the enabled state")
  T.eq(#calls[2].items, 3, "enable / disable / inherit")
  T.contains(messages[#messages].msg, "is now disabled", "reported")

  local after = find(list(s, root), "rules", "style.md")
  -- proto3 JSON leaves false booleans out.
  T.eq(after.enabled or false, false, "disabled afterwards")
  T.eq(after.toggle.workspace, "TOGGLE_STATE_DISABLED", "by a workspace toggle")
  T.eq(after.toggle.global, "TOGGLE_STATE_INHERIT", "global untouched")

  -- The list shows the new state; Inherit removes the workspace's entry.
  calls = toggle_via_command("style.md", "Inherit")
  for _, l in ipairs(calls[1].labels) do
    if l:find("style.md", 1, true) then T.contains(l, "off  (workspace: disabled)", "label after disabling") end
  end
  local inherited = find(list(s, root), "rules", "style.md")
  T.eq(inherited.enabled, true, "enabled again")
  T.eq(inherited.toggle.workspace, "TOGGLE_STATE_INHERIT", "no workspace entry")
  s:stop()
end)

--- Waits for a notification containing `needle` (fails on an error notification).
local function wait_message(messages, needle)
  T.wait(function()
    for _, m in ipairs(messages) do
      T.truthy(m.level ~= vim.log.levels.ERROR, "no error: " .. m.msg)
      if m.msg:find(needle, 1, true) then return true end
    end
    return false
  end, needle)
end

local function trusted(session, root)
  return T.call(session, "SettingsService", "ListCapabilities", { workspaceRoot = root }).workspaceTrusted == true
end

S.case(
  ":Dline capabilities shows an untrusted workspace hook; :Dline trust (confirmed) and :Dline untrust change the trust",
  function()
    local root = (vim.uv or vim.loop).cwd()
    T.write(root .. "/.agents/hooks/UserPromptSubmit.sh", "#!/bin/sh\ncat >/dev/null\n")
    vim.loop.fs_chmod(root .. "/.agents/hooks/UserPromptSubmit.sh", 493) -- 0755
    local s = require("dline").session()
    local function workspace_hook()
      for _, c in ipairs(list(s, root)) do
        if c.kind == "hooks" and c.origin == "workspace" then return c end
      end
    end
    local hook = T.truthy(workspace_hook(), "the hook, listed by the sidecar")
    T.eq(hook.untrusted, true, "untrusted before")

    -- The list labels it untrusted and ends with the trust entry; cancelling the menu changes nothing.
    local calls = T.script_select(function() return nil end)
    local messages = capture_notify()
    vim.cmd("Dline capabilities")
    T.wait(function() return #calls == 1 end, "the capabilities menu")
    local labels = calls[1].labels
    local hook_label
    for _, l in ipairs(labels) do
      if l:find("[hook]", 1, true) then hook_label = l end
    end
    T.contains(T.truthy(hook_label, "a hook line"), "untrusted", "the hook is labelled untrusted")
    T.contains(labels[#labels], "Trust this workspace", "the last entry trusts")
    wait_message(messages, ":Dline trust")

    -- :Dline trust asks first; Cancel keeps it untrusted.
    local answer = "Cancel"
    calls = T.script_select(function(items, _, entry)
      for i, label in ipairs(entry.labels) do
        if label:find(answer, 1, true) then return items[i] end
      end
    end)
    local result
    require("dline.capabilities").set_trust(
      true,
      { workspace_root = root },
      function(err, value) result = { err = err, value = value } end
    )
    T.wait(function() return result ~= nil end, "the cancelled trust")
    T.eq(result.err, "cancelled", "cancelled")
    T.eq(calls[1].opts.kind, "dline.trust", "a confirmation menu")
    T.contains(calls[1].opts.prompt, root, "names the workspace")
    T.contains(
      calls[1].labels[1],
      "run this workspace's hooks (.agents/hooks) and MCP servers (.agents/mcp)",
      "says what trusting allows"
    )
    T.eq(trusted(s, root), false, "still untrusted")

    answer = "Trust:"
    messages = capture_notify()
    vim.cmd("Dline trust")
    wait_message(messages, "is trusted")
    T.eq(trusted(s, root), true, "trusted through :Dline trust")
    local after = workspace_hook()
    T.eq(after.untrusted or false, false, "the hook is no longer untrusted")
    T.eq(after.enabled, true, "and runs")

    messages = capture_notify()
    vim.cmd("Dline untrust")
    wait_message(messages, "is not trusted")
    T.eq(trusted(s, root), false, "untrusted through :Dline untrust")

    -- The list's trust entry trusts too (after the same confirmation).
    calls = T.script_select(function(items, opts, entry)
      for i, label in ipairs(entry.labels) do
        if
          (opts.kind == "dline.capabilities" and label:find("Trust this workspace", 1, true))
          or (opts.kind == "dline.trust" and label:find("Trust:", 1, true))
        then
          return items[i]
        end
      end
    end)
    result = nil
    require("dline.capabilities").open(
      { workspace_root = root },
      function(err, value) result = { err = err, value = value } end
    )
    T.wait(function() return result ~= nil end, "trust from the list")
    T.eq(result.err, nil, "no error")
    T.eq(result.value, true, "trusted from the list")
    T.eq(#calls, 2, "the list, then the confirmation")
    T.eq(trusted(s, root), true, "trusted from the list")
    s:stop()
  end
)

S.case("capability labels are grouped by kind and show an MCP server's status", function()
  local caps = require("dline.capabilities")
  local sorted = caps.sorted({
    {
      kind = "mcp",
      name = "files",
      resource = "files",
      enabled = false,
      error = "spawn ENOENT",
      mcp = { state = "MCP_SERVER_STATE_FAILED", lastError = "spawn ENOENT" },
    },
    { kind = "skills", name = "b", resource = "b", enabled = true },
    { kind = "rules", name = ".agents/rules/z.md", resource = "z.md", enabled = true, origin = "workspace" },
    { kind = "rules", name = ".agents/rules/a.md", resource = "a.md", enabled = true, origin = "workspace" },
  })
  local kinds = vim.tbl_map(function(c) return c.kind .. ":" .. c.resource end, sorted)
  T.eq(kinds, { "rules:a.md", "rules:z.md", "skills:b", "mcp:files" }, "order")
  T.eq(caps.label(sorted[1]), "[rule] .agents/rules/a.md  on  workspace", "rule label")
  T.eq(caps.label(sorted[4]), "[MCP] files  off  mcp: failed  last error: spawn ENOENT  ! spawn ENOENT", "mcp label")
  T.eq(
    caps.label({
      kind = "hooks",
      name = "PreToolUse",
      resource = "PreToolUse.sh",
      origin = "workspace",
      untrusted = true,
    }),
    "[hook] PreToolUse  off  workspace  untrusted",
    "untrusted hook"
  )
  T.eq(
    caps.label({
      kind = "mcp",
      name = "proj",
      resource = "proj",
      origin = "workspace",
      untrusted = true,
      mcp = { state = "MCP_SERVER_STATE_UNTRUSTED" },
    }),
    "[MCP] proj  off  workspace  mcp: untrusted",
    "untrusted MCP server (said once)"
  )
  T.eq(caps.trust_entry(false, sorted), nil, "no trust entry without untrusted entries")
  T.eq(caps.trust_entry(true, {}).trust_action, false, "stop trusting once trusted")
end)

return S
