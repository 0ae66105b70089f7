/** Stub: the agents capability fills this in (merge hooks into .claude/settings.json). */
export async function installClaudeHooks(_workTree: string, _o: { local: boolean }): Promise<Record<string, unknown>> {
  return { hook: 'claude', action: 'not-implemented', path: '' };
}
export async function uninstallClaudeHooks(_workTree: string, _o: { local: boolean }): Promise<Record<string, unknown>> {
  return { hook: 'claude', action: 'not-implemented', path: '' };
}
