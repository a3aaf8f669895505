/** How history names an action an agent made for a person. */

/** What an API token without a label is called in history. */
export const UNNAMED_API_TOKEN = "API token";

/** "Claude via Olivia Owner" for an agent's action, the person's name alone for their own. */
export function actingName(personName: string, agent: { name: string } | null): string {
  return agent ? `${agent.name} via ${personName}` : personName;
}
