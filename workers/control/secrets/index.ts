/**
 * Company secrets: encrypted at rest, versioned, resolved into a run's environment. HTTP in routes.ts.
 *
 * This index is what the rest of the code may import from here.
 */

export type { SecretSchema } from "./schemas";
export { type Scrubber, scrubChunks, scrubStep } from "./scrub";
export { bindingProblem, companyScrubber, resolveSecretEnv, secretBindings } from "./store";
