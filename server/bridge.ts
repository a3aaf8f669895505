/**
 * The in-process door between the Next.js app and the Quire server. Next
 * bundles the app separately from the server's own modules, so the server
 * installs one bridge object on globalThis at start and the app's server
 * components and auth callbacks reach actions and accounts only through it:
 * one database connection, one set of actions, whichever bundle calls.
 */
import type { ToolInput, ToolName, ToolOutput } from "./actions/registry";

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
}

export interface QuireBridge {
  /** Runs one tool action for a signed-in user (a human, web call). Throws DomainError. */
  callTool<T extends ToolName, const I extends ToolInput<T>>(tool: T, userId: string, input: I): Promise<ToolOutput<T, I>>;
  /** The user if the email/password pair is right, else null. */
  verifyCredentials(email: string, password: string): Promise<SignedInUser | null>;
  hasUsers(): Promise<boolean>;
  /** Creates the first (owner) account; DomainError ALREADY_INITIALIZED once any user exists. */
  createOwner(input: { email: string; name: string; password: string }): Promise<SignedInUser>;
}

const BRIDGE_KEY = Symbol.for("quire.bridge");
type BridgeHolder = { [BRIDGE_KEY]?: QuireBridge };

export function installBridge(bridge: QuireBridge): void {
  (globalThis as BridgeHolder)[BRIDGE_KEY] = bridge;
}

export function getBridge(): QuireBridge {
  const bridge = (globalThis as BridgeHolder)[BRIDGE_KEY];
  if (!bridge) throw new Error("Quire server bridge is not installed: start the app with `npm start` (bin/quire.js serve), not `next` directly.");
  return bridge;
}
