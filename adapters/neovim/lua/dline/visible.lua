--- *dline.visible* Model-supplied text with its control characters made visible, before it is
--- shown (chat buffer, prompts): an escape sequence or a carriage return in a command could
--- otherwise redraw the terminal or the prompt, and a direction override reorder it. Newlines
--- and tabs stay; a CR LF pair is a newline; other C0 and C1 controls, DEL and the Unicode
--- direction overrides become `\r`, `\e`, `\x07`, `\u202e`.

local named = { ["\r"] = "\\r", ["\27"] = "\\e", ["\8"] = "\\b", ["\12"] = "\\f", ["\11"] = "\\v", ["\0"] = "\\0" }

---@param text string
---@return string
return function(text)
  text = (text or ""):gsub("\r\n", "\n")
  text = text:gsub("[%z\1-\8\11-\31\127]", function(c) return named[c] or ("\\x%02x"):format(c:byte()) end)
  -- C1 controls (UTF-8 C2 80..9F) and the direction embeddings, overrides and isolates.
  text = text:gsub("\194([\128-\159])", function(c) return ("\\x%02x"):format(c:byte()) end)
  text = text:gsub("\226\128([\170-\174])", function(c) return ("\\u%04x"):format(0x2000 + c:byte() - 128) end)
  text = text:gsub("\226\129([\166-\169])", function(c) return ("\\u%04x"):format(0x2040 + c:byte() - 128) end)
  return text
end
