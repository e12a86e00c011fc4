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
  vim.ui.input({ prompt = prompt }, function(text)
    if text ~= nil then cb(text) end
  end)
end

---@param ask table  the Ask message (askId, kind, tool, summary, detail, options)
---@param answer fun(approve: boolean, text: string)
function M.prompt(ask, answer)
  -- The model's words, with control characters made visible, on one line.
  local summary = require("dline.visible")(ask.summary or ""):gsub("\n", "\\n")
  if ask.kind == "ASK_KIND_FOLLOWUP" then
    local options = ask.options or {}
    if #options == 0 then
      return input("Dline asks: " .. summary .. " ", function(text)
        answer(true, text)
      end)
    end
    local items = vim.list_extend(vim.deepcopy(options), { M.OWN_ANSWER })
    return vim.ui.select(items, { prompt = "Dline asks: " .. summary, kind = "dline.followup" }, function(choice)
      if choice == nil then return end
      if choice == M.OWN_ANSWER then
        return input(summary .. " ", function(text)
          answer(true, text)
        end)
      end
      answer(true, choice)
    end)
  end
  if ask.kind == "ASK_KIND_RESUME" then
    return vim.ui.select({ "Resume", "Not now" }, { prompt = "Dline: " .. summary, kind = "dline.resume" }, function(choice)
      if choice ~= nil then answer(choice == "Resume", "") end
    end)
  end
  local verb = ask.kind == "ASK_KIND_COMMAND_APPROVAL" and "run" or "use " .. (ask.tool or "a tool")
  local prompt = ("Dline wants to %s: %s"):format(verb, summary)
  vim.ui.select({ M.APPROVE, M.APPROVE_FEEDBACK, M.DENY, M.DENY_FEEDBACK }, { prompt = prompt, kind = "dline.approval" }, function(choice)
    if choice == M.APPROVE then
      answer(true, "")
    elseif choice == M.DENY then
      answer(false, "")
    elseif choice == M.APPROVE_FEEDBACK or choice == M.DENY_FEEDBACK then
      input("Feedback: ", function(text)
        answer(choice == M.APPROVE_FEEDBACK, text)
      end)
    end
  end)
end

return M
