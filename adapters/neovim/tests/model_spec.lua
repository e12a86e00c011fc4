-- Setting up a model from Neovim, through the real sidecar: :checkhealth dline warns when no
-- model is configured, :Dline profile add (vim.ui.select / vim.ui.input) stores a profile and
-- its key and makes it the default, and a task started without a model offers that dialog,
-- keeps the prompt, and runs with it once the model is set up.
local T = require("dline_test")
local S = T.suite()

local function session()
  require("dline").setup({ chat = { position = "current" } })
  local s = require("dline").session()
  T.defer(function() s:stop() end)
  return s
end

--- Answers the profile dialog for a scripted model server at `url`.
local function script_dialog(url, extra_select)
  local selects = T.script_select(function(items, opts)
    if opts.kind == "dline.provider" then
      for _, p in ipairs(items) do
        if p.id == "openai" then return p end
      end
    end
    if extra_select then return extra_select(items, opts) end
  end)
  local inputs = T.script_input(function(opts)
    if opts.prompt:find("^Model") then return "scripted-model" end
    if opts.prompt:find("^Base URL") then return url end
    if opts.prompt:find("^Profile name") then return "My Local Model" end
    if opts.prompt:find("^API key") then return T.TEST_KEY end
  end)
  return selects, inputs
end

S.case(":checkhealth dline warns when no model is configured, and :Dline profile add fixes it", function()
  local s = session()
  T.call(s, "SystemService", "Health", {})
  vim.cmd("checkhealth dline")
  local text = T.buffer_text(0)
  T.contains(text, "no model is configured", "the warning")
  T.contains(text, ":Dline profile add", "the advice")
  local server = T.model_server({ apiKey = T.TEST_KEY, turns = {} })
  local selects, inputs = script_dialog(server.url)
  local saved
  require("dline.profile").add(function(err, profile) saved = { err = err, profile = profile } end)
  T.wait(function() return saved ~= nil end, "the profile to be saved")
  T.eq(saved.err, nil, "saved")
  T.eq(selects[1].labels[2]:find("OpenAI", 1, true) ~= nil, true, "the providers offered")
  T.eq(
    vim.tbl_map(function(o) return o.prompt end, inputs),
    { "Model: ", "Base URL: ", "Profile name: ", "API key (empty: none, e.g. a local server): " },
    "the questions"
  )
  local profiles = T.call(s, "SettingsService", "ListProfiles", vim.empty_dict()).profiles
  T.eq(#profiles, 1, "one profile")
  T.eq(
    { profiles[1].id, profiles[1].provider, profiles[1].baseUrl, profiles[1].model },
    { "my-local-model", "openai", server.url, "scripted-model" },
    "the profile"
  )
  T.eq(profiles[1].secretsSet, { "api_key" }, "its key is set (never read back)")
  local default = T.call(s, "SettingsService", "ResolveSetting", { key = "defaultProfileId" })
  T.eq(default.value, "my-local-model", "the only profile is the default")
  vim.cmd("bwipeout!")
  vim.cmd("checkhealth dline")
  text = T.buffer_text(0)
  T.truthy(not text:find("no model is configured", 1, true), "no warning any more")
  T.contains(text, "my-local-model: openai scripted-model at " .. server.url .. " (new tasks use it)", "the model")
  T.truthy(not text:find(T.TEST_KEY, 1, true), "the key never shows")
end)

S.case("a task started without a model offers the profile dialog, keeps the prompt, and runs with it", function()
  session()
  local server = T.model_server({
    apiKey = T.TEST_KEY,
    turns = {
      {
        text = "Hello from the new model.",
        toolCalls = { { name = "attempt_completion", input = { result = "greeted" } } },
      },
    },
  })
  local offered
  local selects = script_dialog(server.url, function(items, opts)
    if opts.kind == "dline.no_model" then
      offered = opts.prompt
      return items[1]
    end
  end)
  vim.cmd("Dline new say hello to the new model")
  local controller
  T.wait(function()
    controller = require("dline.task").current()
    return controller ~= nil and controller.status == "TASK_STATUS_COMPLETED"
  end, "the task to run once the model is set up", 30000)
  T.contains(offered, "No model is configured: your prompt is kept in the chat input", "the offer")
  T.truthy(#selects >= 2, "the dialog ran")
  T.contains(controller.chat:text(), "## You\nsay hello to the new model", "the prompt was not lost")
  T.contains(controller.chat:text(), "Hello from the new model.", "the model answered")
  T.eq(
    vim.api.nvim_buf_get_lines(require("dline.sidebar").input_buffer(), 0, -1, false),
    { "" },
    "the input area is empty again"
  )
end)

S.case("declining the model setup keeps the prompt in the chat input", function()
  session()
  T.script_select(function(items, opts)
    if opts.kind == "dline.no_model" then return items[2] end
  end)
  local messages = {}
  vim.notify = function(msg) table.insert(messages, msg) end
  vim.cmd("Dline new a prompt worth keeping")
  T.wait(
    function()
      return vim.api.nvim_buf_get_lines(require("dline.sidebar").input_buffer(), 0, -1, false)[1]
        == "a prompt worth keeping"
    end,
    "the prompt in the input area"
  )
end)

return S
