/**
 * The text every real adapter hands its CLI as standing instructions: the agent's instructions file
 * (read with the agent's own permissions) and then the platform's heartbeat protocol.
 */
import { AdapterConfigError, type LaunchContext } from "./types.ts";

export async function agentInstructions(
  context: LaunchContext,
  instructionsFilePath?: string,
): Promise<string> {
  const parts: string[] = [];
  if (instructionsFilePath) {
    try {
      parts.push(`# Your instructions\n\n${await context.readFileAsAgent(instructionsFilePath)}`);
    } catch (error) {
      throw new AdapterConfigError(
        `instructionsFilePath ${instructionsFilePath} cannot be read: ${(error as Error).message}`,
      );
    }
  }
  const protocol =
    context.run.protocol ||
    "Use the platform's API at $PLATFORM_API_URL with Authorization: Bearer $PLATFORM_API_KEY.";
  parts.push(`# The platform: how you work here\n\n${protocol}`);
  return `${parts.join("\n\n")}\n`;
}
