--- *dline.ask* Asks the user what the task asks: approvals and follow-up questions, with
--- vim.ui.select (and vim.ui.input for free text), so that any picker the user installed
--- (telescope, fzf-lua, dressing) shows them.
---
--- What it does: turns an `Ask` into choices and calls `answer(approve, text)` with the
--- decision. Dismissing the prompt answers nothing: the task keeps waiting, and
--- `:Dline approve` / `:Dline deny` / the chat input answer later.

local M = {}

M.APPROVE = "Approve"
M.APPROVE_FEEDBACK = "Approve with feedback…"
M.DENY = "Deny"
M.DENY_FEEDBACK = "Deny with feedback…"
M.OWN_ANSWER = "Answer in my own words…"

local function input(prompt, cb)
  require("dline.ui").input({ prompt = prompt }, function(text)
    if text ~= nil then cb(text) end
  end)
end

--- The one line an approval asks: the exact command line (and where it runs) for a command,
--- the change in numbers for an edit ("write_to_file notes.txt (+3 -1)"); the summary names
--- the tool already.
function M.approval_prompt(ask)
  local render = require("dline.chat_render")
  -- Asked again (its file changed on disk while it waited): why comes first.
  local again = (ask.askedAgainBecause or "") ~= "" and (render.one_line(ask.askedAgainBecause) .. " ") or ""
  if ask.kind == "ASK_KIND_COMMAND_APPROVAL" then
    local c = ask.command or {}
    local line = render.one_line((c.command or "") ~= "" and c.command or ask.summary)
    local where = (c.workingDirectory or "") ~= "" and (" (in " .. render.one_line(c.workingDirectory) .. ")") or ""
    return ("%sDline wants to run: %s%s"):format(again, line, where)
  end
  local stats = {}
  for _, edit in ipairs(ask.edits or {}) do
    table.insert(
      stats,
      #(ask.edits or {}) > 1 and (render.one_line(edit.path) .. " " .. render.edit_stat(edit)) or render.edit_stat(edit)
    )
  end
  return ("%sDline wants to: %s%s"):format(
    again,
    render.one_line(ask.summary),
    #stats > 0 and (" " .. table.concat(stats, ", ")) or ""
  )
end

--- Asks for feedback text (vim.ui.input); `cb(text)` unless dismissed.
M.input = input

---@param ask table  the Ask message (askId, kind, tool, summary, detail, options)
---@param answer fun(approve: boolean, text: string)
function M.prompt(ask, answer)
  -- The model's words, with control characters made visible, on one line.
  local summary = require("dline.visible")(ask.summary or ""):gsub("\n", "\\n")
  if ask.kind == "ASK_KIND_FOLLOWUP" then
    local options = ask.options or {}
    if #options == 0 then
      return input("Dline asks: " .. summary .. " ", function(text) answer(true, text) end)
    end
    local items = vim.list_extend(vim.deepcopy(options), { M.OWN_ANSWER })
    return require("dline.ui").select(
      items,
      { prompt = "Dline asks: " .. summary, kind = "dline.followup" },
      function(choice)
        if choice == nil then return end
        if choice == M.OWN_ANSWER then
          return input(summary .. " ", function(text) answer(true, text) end)
        end
        answer(true, choice)
      end
    )
  end
  if ask.kind == "ASK_KIND_RESUME" then
    return require("dline.ui").select(
      { "Resume", "Not now" },
      { prompt = "Dline: " .. summary, kind = "dline.resume" },
      function(choice)
        if choice ~= nil then answer(choice == "Resume", "") end
      end
    )
  end
  local prompt = M.approval_prompt(ask)
  require("dline.ui").select(
    { M.APPROVE, M.APPROVE_FEEDBACK, M.DENY, M.DENY_FEEDBACK },
    { prompt = prompt, kind = "dline.approval" },
    function(choice)
      if choice == M.APPROVE then
        answer(true, "")
      elseif choice == M.DENY then
        answer(false, "")
      elseif choice == M.APPROVE_FEEDBACK or choice == M.DENY_FEEDBACK then
        input("Feedback: ", function(text) answer(choice == M.APPROVE_FEEDBACK, text) end)
      end
    end
  )
end

return M
