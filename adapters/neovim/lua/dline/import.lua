--- *dline.import* `:Dline import-cline`: the explicit, read-only import of Cline's tasks.
---
--- What it does: asks the sidecar what it finds (DiscoverCline), confirms with
--- vim.ui.select, imports (ImportCline) and reports the outcome. Errors (for instance
--- `unimplemented` from a sidecar without the import) are shown as one clear line.

local M = {}

local function dline() return require("dline") end

function M.run(cb)
  dline().session():call("ImportService", "DiscoverCline", {}, function(err, res)
    if err then
      dline().notify_error("import-cline", err)
      return cb and cb(err)
    end
    local importable = 0
    for _, item in ipairs(res.items or {}) do
      if (item.skippedReason or "") == "" and (item.importedTaskId or "") == "" then importable = importable + 1 end
    end
    if importable == 0 then
      dline().notify(("import-cline: nothing to import (%d item(s) found)"):format(#(res.items or {})))
      return cb and cb(nil, { results = {} })
    end
    local yes = ("Import %d Cline task(s)"):format(importable)
    require("dline.ui").select(
      { yes, "Cancel" },
      { prompt = "Import from Cline (read-only)", kind = "dline.confirm" },
      function(choice)
        if choice ~= yes then return cb and cb("cancelled") end
        dline().session():call("ImportService", "ImportCline", { all = true }, function(import_err, result)
          if import_err then
            dline().notify_error("import-cline", import_err)
            return cb and cb(import_err)
          end
          local counts = {}
          for _, r in ipairs(result.results or {}) do
            counts[r.outcome or "?"] = (counts[r.outcome or "?"] or 0) + 1
          end
          local parts = {}
          for outcome, n in pairs(counts) do
            table.insert(parts, n .. " " .. outcome)
          end
          table.sort(parts)
          dline().notify("import-cline: " .. (#parts > 0 and table.concat(parts, ", ") or "nothing imported"))
          if cb then cb(nil, result) end
        end)
      end
    )
  end)
end

return M
