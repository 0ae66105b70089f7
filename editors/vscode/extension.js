// git-mem for VS Code: starts `git-mem lsp` (the Language Server in src/lsp/) for every file of
// the workspace. `npm run build` bundles this file with vscode-languageclient (a devDependency of
// this folder only) into dist/extension.js; `npm run package` makes a .vsix (not published).
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const command = vscode.workspace.getConfiguration('git-mem').get('path') || 'git-mem';
  const run = { command, args: ['lsp'], options: folder ? { cwd: folder.uri.fsPath } : {} };
  client = new LanguageClient(
    'git-mem',
    'git-mem',
    { run, debug: run },
    {
      // every file on disk: memories are anchored to code of any language
      documentSelector: [{ scheme: 'file' }],
    },
  );
  await client.start();
  context.subscriptions.push(client);
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
