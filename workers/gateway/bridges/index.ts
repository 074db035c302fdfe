/** Bridge credentials (routes.ts: the admin API): how the bridge link recognises a bridge. */
export { BRIDGE_ID_PATTERN, bridgeForCredential, touchCredential } from "./store";
