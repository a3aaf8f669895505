/**
 * Ready-to-paste MCP client configuration for a Quire server: the
 * `mcpServers` entry most clients read (Claude Code, Cursor, Windsurf, …) for
 * Streamable HTTP with a bearer token, and the stdio proxy for clients that
 * only start local commands (Claude Desktop, for example).
 */

/** Shown in place of the token until one has just been created (it is never shown again). */
export const TOKEN_PLACEHOLDER = "<your token>";

const trimBase = (baseUrl: string) => baseUrl.replace(/\/+$/, "");

export const mcpEndpoint = (baseUrl: string) => `${trimBase(baseUrl)}/api/mcp`;

/** The `mcpServers` entry for clients that speak Streamable HTTP. */
export function httpClientConfig(baseUrl: string, token: string): string {
  const entry = { type: "http", url: mcpEndpoint(baseUrl), headers: { Authorization: `Bearer ${token}` } };
  return JSON.stringify({ mcpServers: { quire: entry } }, null, 2);
}

/** The `mcpServers` entry that starts the stdio proxy (`quire mcp-proxy`). */
export function stdioClientConfig(baseUrl: string, token: string): string {
  const entry = { command: "npx", args: ["quire", "mcp-proxy", "--url", trimBase(baseUrl), "--token", token] };
  return JSON.stringify({ mcpServers: { quire: entry } }, null, 2);
}

/** One word for a POSIX shell: as it is when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The stdio proxy as a shell command, to try it in a terminal. */
export function stdioCommand(baseUrl: string, token: string): string {
  return ["npx", "quire", "mcp-proxy", "--url", trimBase(baseUrl), "--token", token].map(shellWord).join(" ");
}
