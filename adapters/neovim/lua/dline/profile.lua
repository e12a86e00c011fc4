--- *dline.profile* Model profiles from Neovim: `:Dline profile add|list|rm`.
---
--- What it does: asks for the provider, a name, the model, the base URL and the API key with
--- vim.ui.select / vim.ui.input (any picker the user installed shows them), stores the profile
--- and its key in the sidecar (UpsertProfile, SetSecret) and can make it the default. Lists the
--- profiles (those of the sidecar's environment too), sets the default, removes one.
--- What it does not do: keep keys (the sidecar stores them, write-only) or show them.

local M = {}
local H = {}

local function dline() return require("dline") end

M.PROVIDERS = {
  {
    id = "anthropic",
    label = "Anthropic (Claude)",
    base_url = "https://api.anthropic.com",
    model = "claude-sonnet-4-5",
    window = 200000,
  },
  {
    id = "openai",
    label = "OpenAI or any OpenAI-compatible server (OpenRouter, Ollama, LM Studio, vLLM…)",
    base_url = "https://api.openai.com/v1",
    model = "gpt-4o-mini",
    window = 128000,
  },
}

--- vim.ui.input; `cb(text)` with the trimmed text, nil when dismissed.
function H.input(prompt, default, cb)
  require("dline.ui").input({ prompt = prompt, default = default }, function(text)
    if text == nil then return cb(nil) end
    cb(vim.trim(text))
  end)
end

--- The key, without echoing it: inputsecret() while vim.ui.input is Neovim's own (which
--- echoes), else the vim.ui.input a plugin put in its place.
function H.secret(prompt, cb)
  local ui = require("dline.ui")
  if not ui.builtin(vim.ui.input) then return H.input(prompt, nil, cb) end
  local ok, key = pcall(vim.fn.inputsecret, ui.own_line(prompt))
  cb(ok and vim.trim(key) or nil)
end

--- "My Claude" -> "my-claude".
function H.slug(name)
  local id = name:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):gsub("%-+$", "")
  return id ~= "" and id or "profile"
end

--- The dialog of :Dline profile add. `cb(err, profile)` once saved (err "cancelled" when a
--- prompt was dismissed).
function M.add(cb)
  cb = cb or function() end
  require("dline.ui").select(M.PROVIDERS, {
    prompt = "Dline model provider",
    kind = "dline.provider",
    format_item = function(p) return p.label end,
  }, function(provider)
    if not provider then return cb("cancelled") end
    H.input("Model: ", provider.model, function(model)
      if not model or model == "" then return cb("cancelled") end
      H.input("Base URL: ", provider.base_url, function(base_url)
        if not base_url or base_url == "" then return cb("cancelled") end
        H.input("Profile name: ", model, function(name)
          if not name or name == "" then return cb("cancelled") end
          H.secret("API key (empty: none, e.g. a local server): ", function(key)
            if key == nil then return cb("cancelled") end
            H.save({
              id = H.slug(name),
              name = name,
              provider = provider.id,
              baseUrl = base_url,
              model = model,
              contextWindow = tostring(provider.window),
            }, key, cb)
          end)
        end)
      end)
    end)
  end)
end

function H.save(profile, key, cb)
  local session = dline().session()
  session:call("SettingsService", "UpsertProfile", { profile = profile }, function(err)
    if err then
      dline().notify_error("profile add", err)
      return cb(err)
    end
    local function finish()
      H.ask_default(profile, function()
        dline().notify(("profile %s saved%s"):format(profile.id, key ~= "" and " with its API key" or ""))
        cb(nil, profile)
      end)
    end
    if key == "" then return finish() end
    session:call(
      "SettingsService",
      "SetSecret",
      { profileId = profile.id, name = "api_key", value = key },
      function(secret_err)
        if secret_err then
          dline().notify_error("profile add: the API key", secret_err)
          return cb(secret_err)
        end
        finish()
      end
    )
  end)
end

--- Makes `profile` the default when the user says so (or when it is the only stored one).
function H.ask_default(profile, done)
  M.list(function(err, profiles)
    if err then return done() end
    local stored = vim.tbl_filter(function(p) return p.source ~= "PROFILE_SOURCE_ENVIRONMENT" end, profiles)
    if #stored <= 1 then return M.set_default(profile.id, done) end
    require("dline.ui").select(
      { "Yes", "No" },
      { prompt = "Use " .. profile.name .. " for new tasks (the default profile)?", kind = "dline.confirm" },
      function(choice)
        if choice == "Yes" then return M.set_default(profile.id, done) end
        done()
      end
    )
  end)
end

function M.set_default(id, cb)
  dline().session():call(
    "SettingsService",
    "UpdateSettings",
    { scope = "SETTINGS_SCOPE_GLOBAL", patch = { defaultProfileId = id } },
    function(err)
      if err then dline().notify_error("default profile", err) end
      if cb then cb(err) end
    end
  )
end

--- The sidecar's profiles: `cb(err, profiles)`.
function M.list(cb)
  dline().session():call("SettingsService", "ListProfiles", vim.empty_dict(), function(err, res)
    if err then return cb(err) end
    cb(nil, res.profiles or {})
  end)
end

function H.describe(p)
  local from = p.source == "PROFILE_SOURCE_ENVIRONMENT" and " (from the environment)" or ""
  local key = (p.secretsSet and #p.secretsSet > 0) and "" or " (no key)"
  return ("%s: %s %s%s%s"):format(
    p.id,
    p.provider,
    p.model,
    from,
    p.source ~= "PROFILE_SOURCE_ENVIRONMENT" and key or ""
  )
end

--- :Dline profile list: pick one to make it the default or remove it.
function M.open()
  M.list(function(err, profiles)
    if err then return dline().notify_error("profiles", err) end
    if #profiles == 0 then
      return dline().notify(
        "no model profile: :Dline profile add sets one up (or start Neovim with OPENAI_BASE_URL/OPENAI_MODEL, or ANTHROPIC_API_KEY)",
        vim.log.levels.WARN
      )
    end
    require("dline.ui").select(
      profiles,
      { prompt = "Dline model profiles", kind = "dline.profile", format_item = H.describe },
      function(p)
        if not p then return end
        local actions = { "Use for new tasks" }
        if p.source ~= "PROFILE_SOURCE_ENVIRONMENT" then table.insert(actions, "Remove") end
        require("dline.ui").select(actions, { prompt = H.describe(p), kind = "dline.profile_action" }, function(action)
          if action == "Use for new tasks" then
            M.set_default(p.id, function(e)
              if not e then dline().notify("new tasks use " .. p.id) end
            end)
          elseif action == "Remove" then
            M.remove(p.id)
          end
        end)
      end
    )
  end)
end

function M.remove(id, cb)
  dline().session():call("SettingsService", "DeleteProfile", { id = id }, function(err)
    if err then
      dline().notify_error("profile rm", err)
    else
      dline().notify("profile " .. id .. " removed")
    end
    if cb then cb(err) end
  end)
end

return M
