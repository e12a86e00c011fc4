--- *dline.settings* Global settings in an editable JSON buffer.
---
--- What it does: `:Dline settings` shows the global settings (GetSettings) as JSON in a
--- buffer; `:write` sends the keys that changed (UpdateSettings with the revision read, so a
--- concurrent change elsewhere is refused instead of overwritten).

local M = {}
local H = {}

local function dline() return require("dline") end

--- JSON with sorted keys and two-space indentation.
function M.pretty(value, indent)
  indent = indent or ""
  if type(value) == "table" and getmetatable(value) ~= nil and next(value) == nil then return "{}" end
  if type(value) ~= "table" or value == vim.NIL then return vim.json.encode(value) end
  local inner = indent .. "  "
  if (vim.islist or vim.tbl_islist)(value) and next(value) ~= nil then
    local parts = {}
    for _, v in ipairs(value) do
      table.insert(parts, inner .. M.pretty(v, inner))
    end
    return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
  end
  local keys = vim.tbl_keys(value)
  if #keys == 0 then return "{}" end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    table.insert(parts, inner .. vim.json.encode(k) .. ": " .. M.pretty(value[k], inner))
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

function M.open(cb)
  dline().session():call("SettingsService", "GetSettings", { scope = "SETTINGS_SCOPE_GLOBAL" }, function(err, res)
    if err then return dline().notify_error("settings", err) end
    local name = "dline://settings"
    local existing = vim.fn.bufnr(name)
    if existing ~= -1 then vim.api.nvim_buf_delete(existing, { force = true }) end
    local buf = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "json"
    local state = { settings = res.settings or {}, revision = res.revision or "0" }
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(M.pretty(state.settings), "\n", { plain = true }))
    vim.bo[buf].modified = false
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = buf,
      callback = function() H.save(buf, state) end,
    })
    vim.api.nvim_set_current_buf(buf)
    if cb then cb(buf) end
  end)
end

function H.save(buf, state)
  local ok, edited = pcall(vim.json.decode, table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  if not ok or type(edited) ~= "table" then
    return dline().notify("settings: the buffer is not a JSON object", vim.log.levels.ERROR)
  end
  local patch = {}
  for k, v in pairs(edited) do
    if not vim.deep_equal(v, state.settings[k]) then patch[k] = v end
  end
  for k in pairs(state.settings) do
    if edited[k] == nil then patch[k] = vim.NIL end
  end
  if next(patch) == nil then
    vim.bo[buf].modified = false
    return dline().notify("settings: nothing changed")
  end
  dline().session():call("SettingsService", "UpdateSettings", {
    scope = "SETTINGS_SCOPE_GLOBAL",
    patch = patch,
    expectedRevision = state.revision,
  }, function(err, res)
    if err then return dline().notify_error("settings", err) end
    state.revision = res.revision
    state.settings = res.settings or edited
    if vim.api.nvim_buf_is_valid(buf) then vim.bo[buf].modified = false end
    dline().notify("settings saved (revision " .. tostring(res.revision) .. ")")
  end)
end

return M
