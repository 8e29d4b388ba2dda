-- nvim-dap: the `hindsight` adapter and three configurations for C, C++ and Rust.
-- Put this in your config (e.g. ~/.config/nvim/after/plugin/hindsight.lua).
-- Going back: require('dap').step_back() and require('dap').reverse_continue().
local dap = require('dap')

dap.adapters.hindsight = {
  type = 'executable',
  command = 'hindsight', -- or the full path of the binary
  args = { 'dap' },
  name = 'hindsight',
}

local function program()
  return vim.fn.input('Program: ', vim.fn.getcwd() .. '/', 'file')
end

local configurations = {
  {
    name = 'hindsight: record and replay',
    type = 'hindsight',
    request = 'launch',
    mode = 'record',
    program = program,
    args = {},
  },
  {
    name = 'hindsight: replay the latest trace',
    type = 'hindsight',
    request = 'launch',
    mode = 'replay',
  },
  {
    name = 'hindsight: debug live',
    type = 'hindsight',
    request = 'launch',
    mode = 'live',
    program = program,
    args = {},
  },
}

dap.configurations.c = configurations
dap.configurations.cpp = configurations
dap.configurations.rust = configurations
