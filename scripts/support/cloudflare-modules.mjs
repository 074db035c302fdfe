// For the doc generators, which import the app in Node: workerd's own `cloudflare:*` modules do not
// exist there. A library the app imports (@cloudflare/workers-oauth-provider) imports
// `cloudflare:workers` at load time but uses nothing from it while the app is only being described,
// so empty classes stand in. Used as `tsx --import ./scripts/support/cloudflare-modules.mjs …`.
import { register } from "node:module";

const stub = `
export class WorkerEntrypoint {}
export class DurableObject {}
export class WorkflowEntrypoint {}
export class RpcTarget {}
export const env = {};
`;

const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier.startsWith("cloudflare:")) return { url: "data:text/javascript," + encodeURIComponent(${JSON.stringify(stub)}), shortCircuit: true };
  return next(specifier, context);
}
`;

register(`data:text/javascript,${encodeURIComponent(hooks)}`);
