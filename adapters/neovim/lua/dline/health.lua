--- *dline.health* `:checkhealth dline`: Neovim version, the sidecar (found, state, version),
--- the model (a profile, or one from the sidecar's environment), git, the storage roots, and
--- the errors seen lately.
---
--- The sidecar section reports the one this editor runs, if any; the model section asks the
--- sidecar for its profiles, starting it when it is not running yet.

local M = {}
local H = {}

-- vim.health (0.9+: start/ok/warn/error; 0.8: report_*), or the health# functions of 0.7.
function H.reporter()
  local h = vim.health or {}
  local function pick(new, old)
    if h[new] then return h[new] end
    if h[old] then return h[old] end
    return function(msg, advice)
      if advice then return vim.fn["health#" .. old](msg, advice) end
      return vim.fn["health#" .. old](msg)
    end
  end
  return {
    start = pick("start", "report_start"),
    ok = pick("ok", "report_ok"),
    warn = pick("warn", "report_warn"),
    error = pick("error", "report_error"),
    info = pick("info", "report_info"),
  }
end

function H.writable_dir(path)
  if not path or path == "" then return false end
  -- The closest existing folder must be writable (the sidecar creates the rest).
  local dir = path
  while vim.fn.isdirectory(dir) == 0 do
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then return false end
    dir = parent
  end
  return vim.fn.filewritable(dir) == 2
end

--- Waits (at most `ms`) for a session call; returns err, response.
function H.call(session, service, method, request, ms)
  local done, err, res = false, nil, nil
  session:call(service, method, request, function(e, r)
    done, err, res = true, e, r
  end, { timeout_ms = ms })
  vim.wait(ms + 500, function() return done end, 20)
  if not done then
    return { code = "deadline_exceeded", message = "no answer within " .. math.floor(ms / 1000) .. " s" }
  end
  return err, res
end

--- The sidecar's profiles and the default profile id (starting the sidecar when needed).
function H.profiles(dline)
  local session = dline.session()
  local err, res = H.call(session, "SettingsService", "ListProfiles", vim.empty_dict(), 15000)
  if err then return { err = err } end
  local _, setting = H.call(session, "SettingsService", "ResolveSetting", { key = "defaultProfileId" }, 5000)
  return { profiles = res.profiles or {}, default = setting and type(setting.value) == "string" and setting.value or "" }
end

function H.check_model(r, dline, found)
  r.start("Model")
  local config = dline.config()
  if found.err then
    return r.error("cannot ask the sidecar for its profiles: " .. require("dline.connect").format_error(found.err))
  end
  local profiles = found.profiles
  local advice = {
    ":Dline profile add sets up a model (provider, model, base URL, key)",
    "or start Neovim with OPENAI_BASE_URL and OPENAI_MODEL (and OPENAI_API_KEY), or ANTHROPIC_API_KEY, in its environment",
  }
  if #profiles == 0 then return r.warn("no model is configured: a new task fails until one is", advice) end
  local default = config.profile_id ~= "" and config.profile_id or found.default
  for _, p in ipairs(profiles) do
    local from = p.source == "PROFILE_SOURCE_ENVIRONMENT" and ", from the sidecar's environment (this session only)"
      or ""
    local mark = p.id == default and " (new tasks use it)" or ""
    local keyless = p.source ~= "PROFILE_SOURCE_ENVIRONMENT" and not (p.secretsSet and #p.secretsSet > 0)
    local line = ("%s: %s %s at %s%s%s"):format(
      p.id,
      p.provider,
      p.model,
      p.baseUrl ~= "" and p.baseUrl or "the provider's default URL",
      from,
      mark
    )
    if keyless then
      r.warn(line .. ": no API key is set", { "fine for a local server; otherwise :Dline profile add stores one" })
    else
      r.ok(line)
    end
  end
  if default ~= "" and not vim.tbl_contains(vim.tbl_map(function(p) return p.id end, profiles), default) then
    r.warn(("new tasks use profile '%s', which does not exist"):format(default), advice)
  end
end

function M.check()
  local r = H.reporter()
  local dline = require("dline")
  local config = dline.config()

  r.start("Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7.2") == 1 then
    r.ok("Neovim " .. version)
  else
    r.error("Neovim " .. version .. " is too old", { "dline.nvim needs Neovim 0.7.2 or newer" })
  end

  r.start("Sidecar (dline-core)")
  local path, tried = require("dline.sidecar").locate(config.core_path, vim.env.DLINE_CORE)
  if path then
    r.ok("found: " .. path)
  else
    r.error("dline-core not found; tried: " .. table.concat(tried, ", "), {
      "put dline-core on PATH or in the plugin's bin/ folder, set setup{ core_path = ... } or $DLINE_CORE, or build it with `npm run build` in a Dline checkout",
    })
  end
  -- The model check asks the sidecar (and so starts it) first: the state below is then current.
  local profiles = path and H.profiles(dline)
    or { err = { code = "failed_precondition", message = "dline-core not found" } }
  local session = dline.has_session() and dline.session() or nil
  if not session then
    r.info("not started in this editor (it starts on the first :Dline command)")
  else
    local state = session:state()
    if state == "running" and session.sidecar.handshake then
      local hs = session.sidecar.handshake
      r.ok(
        ("running: version %s, protocol %s, pid %s, %s"):format(
          tostring(hs.version),
          tostring(hs.protocol),
          tostring(hs.pid),
          hs.url
        )
      )
      local done, err, health = false, nil, nil
      session:call("SystemService", "Health", {}, function(e, res)
        done, err, health = true, e, res
      end, { timeout_ms = 2000 })
      vim.wait(2500, function() return done end, 20)
      if err then
        r.error("Health call failed: " .. require("dline.connect").format_error(err))
      elseif health then
        r.ok(("Health: %s, up %d s"):format(health.status, math.floor((tonumber(health.uptimeMs) or 0) / 1000)))
      else
        r.warn("Health did not answer within 2 s")
      end
    elseif state == "failed" then
      r.error(
        "failed: " .. tostring(session.sidecar.last_error),
        { ":Dline restart tries again; see " .. config.sidecar_log_file }
      )
    else
      r.warn(state .. (session.sidecar and session.sidecar.last_error and (": " .. session.sidecar.last_error) or ""))
    end
  end

  H.check_model(r, dline, profiles)

  r.start("Git (checkpoints)")
  if vim.fn.executable("git") == 1 then
    r.ok(vim.trim(vim.fn.system({ "git", "--version" })))
  else
    r.warn("git not found: Git must be installed to use checkpoints.")
  end

  r.start("Storage roots")
  local info = session and session.info
  local home = vim.env.HOME or ""
  local roots = {
    {
      "data root",
      info and info.dataRoot or (vim.env.DLINE_DIR and (vim.env.DLINE_DIR .. "/data")) or (home .. "/.dline/data"),
    },
    { "resource home", info and info.homeRoot or vim.env.DLINE_HOME_DIR or (home .. "/.dline") },
    { "documents root", info and info.documentsRoot or vim.env.DLINE_DOCS_DIR or (home .. "/Documents/dline") },
  }
  for _, root in ipairs(roots) do
    if H.writable_dir(root[2]) then
      r.ok(root[1] .. ": " .. root[2])
    else
      r.error(root[1] .. " is not writable: " .. root[2])
    end
  end

  r.start("Recent errors")
  local errors = dline.logger().recent_errors
  if #errors == 0 then
    r.ok("none")
  else
    for _, e in ipairs(errors) do
      r.warn(e)
    end
  end
  r.info("plugin log: " .. config.log_file .. "; sidecar log: " .. config.sidecar_log_file)
end

return M
