// What the local stack (`npm start`, `npm run dev`) logs, decided once from its environment.
//
// Request lines ("GET /api/health 200 OK (1ms)") are info lines. workerd hands each one to Node over
// a loopback HTTP request, which cost a quarter to a third of a core at a few hundred requests per
// second (issue 18: GET /api/health 976 req/s at info against 2,587 at warn). So they are opt-in:
//   LOG_LEVEL    debug | info | log | warn | error | none; default warn (warnings and errors, which
//                every part of the stack prints as they happen). info or debug shows request lines.
//   LOG_REQUESTS 1: request lines too (raises a quieter LOG_LEVEL, or the default, to info).

export const DEFAULT_LOG_LEVEL = "warn";

/** How much each level shows; wrangler's and Miniflare's levels, by name. */
const VERBOSITY = { none: 0, error: 1, warn: 2, info: 3, log: 3, debug: 4 };

/**
 * @param {Record<string, string | undefined>} env
 * @returns {{ level: string, requests: boolean }}
 */
export function logSettings(env) {
  const requested = env.LOG_LEVEL;
  if (requested !== undefined && !Object.hasOwn(VERBOSITY, requested)) {
    throw new Error(
      `LOG_LEVEL must be one of ${Object.keys(VERBOSITY).join(", ")}, got ${JSON.stringify(requested)}`,
    );
  }
  let level = requested ?? DEFAULT_LOG_LEVEL;
  if (env.LOG_REQUESTS === "1" && VERBOSITY[level] < VERBOSITY.info) level = "info";
  return { level, requests: VERBOSITY[level] >= VERBOSITY.info };
}
