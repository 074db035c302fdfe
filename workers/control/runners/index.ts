/**
 * Runners: the machines that run a company's agents, registered by its owners (like self-hosted CI
 * runners), and which companies each one serves. HTTP in routes.ts (the API) and link.ts (where a
 * runner dials in).
 *
 * This index is what the rest of the code may import from here.
 */

export { reportedModels } from "./reported-models";
export {
  apiBaseUrl,
  companiesWithConnectedRunner,
  coveredCompanyIds,
  followNewCompany,
  RUNNER_SILENCE_MS,
  runnerConnected,
  runnerDisconnected,
  runnerSeen,
  servingRunners,
} from "./store";
