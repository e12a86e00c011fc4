-- Model text that tries to redraw the screen: a command with escape sequences that would draw
-- another command over itself, a reply with a title-setting sequence, a carriage return and a
-- direction override. Through the real sidecar and the scripted model server, the chat buffer
-- and the approval prompt show every control character as a visible escape.
local T = require("dline_test")
local ask = require("dline.ask")
local S = T.suite()

local SPOOF = "touch PWNED #\r\27[2K\27[1A\27[2K? command_approval: execute_command ls -la"

S.case(
  "a command with escape sequences is shown with its control characters in the chat and the approval prompt",
  function()
    T.fail_on_error_notices()
    require("dline").setup({ chat = { position = "current" } })
    local s = require("dline").session()
    T.defer(function() s:stop() end)
    T.configure_model(s, {
      {
        text = "Listing.\27]0;owned\7 \226\128\174done",
        toolCalls = { { name = "execute_command", input = { command = SPOOF, requires_approval = true } } },
      },
      { toolCalls = { { name = "attempt_completion", input = { result = "ok\r\27[2K" } } } },
    })
    local selects = T.script_select(function(_, opts)
      if opts.kind == "dline.approval" then return ask.DENY end
      return nil
    end)
    local before = require("dline.task").current()
    vim.cmd("Dline new list the files")
    local controller
    T.wait(function()
      controller = require("dline.task").current()
      return controller ~= nil and controller ~= before and controller.status == "TASK_STATUS_COMPLETED"
    end, "the task to end", 30000)
    local text = controller.chat:text()
    T.truthy(not text:find("[\27\r\7]"), "no raw ESC, CR or BEL in the chat buffer:\n" .. text)
    T.truthy(not text:find("\226\128\174", 1, true), "no raw direction override in the chat buffer")
    T.contains(text, "Listing.\\e]0;owned\\x07 \\u202edone", "the reply's control characters, visible")
    T.eq(selects[1].opts.kind, "dline.approval", "the approval was asked")
    local prompt = selects[1].opts.prompt
    T.truthy(not prompt:find("[\27\r]"), "no raw ESC or CR in the approval prompt: " .. prompt)
    T.contains(
      prompt,
      "touch PWNED #\\r\\e[2K\\e[1A\\e[2K? command_approval: execute_command ls -la",
      "the prompt shows the command, visible"
    )
    T.truthy(vim.fn.filereadable(vim.loop.cwd() .. "/PWNED") == 0, "the denied command did not run")
  end
)

return S
