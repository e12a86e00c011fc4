-- dline.nvim: commands only. Nothing is loaded or started until a command is used.
if vim.g.loaded_dline then return end
vim.g.loaded_dline = true

vim.api.nvim_create_user_command("Dline", function(opts) require("dline.commands").run(opts) end, {
  nargs = "*",
  bang = true,
  -- :'<,'>Dline new|send|add: the lines go with the message.
  range = true,
  desc = "Dline: AI coding agent (see :help dline)",
  complete = function(arg_lead, cmd_line) return require("dline.commands").complete(arg_lead, cmd_line) end,
})
