// The whole extension: the `hindsight` debug type's adapter is `hindsight dap`, an executable
// that speaks the Debug Adapter Protocol on stdin/stdout.
'use strict';

const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('hindsight', {
      createDebugAdapterDescriptor() {
        const command = vscode.workspace.getConfiguration('hindsight').get('executable') || 'hindsight';
        return new vscode.DebugAdapterExecutable(command, ['dap']);
      },
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
