import { ApiError, titleOf } from "../http/errors";
import { fromBase64, randomBytes, toBase64 } from "./crypto";

/**
 * AES-256-GCM for values that must be readable again (company secrets, routine webhook signing
 * secrets), under the `SECRETS_MASTER_KEY` Worker secret (32 random bytes, base64). The additional
 * data binds a ciphertext to its owner (a secret id, a trigger id), so a ciphertext copied onto
 * another row does not decrypt. Format: `v1.<iv b64>.<ciphertext b64>`.
 */
const VERSION = "v1";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** 503, not 500: the deployment is missing configuration, which an operator can fix. */
function notConfigured(): never {
  throw new ApiError(
    503,
    titleOf(503),
    "SECRETS_MASTER_KEY is not configured (wrangler secret put SECRETS_MASTER_KEY)",
  );
}

function masterKey(encoded: string | undefined): Promise<CryptoKey> {
  if (!encoded) notConfigured();
  let key = keys.get(encoded);
  if (!key) {
    const raw = fromBase64(encoded);
    if (raw.length !== 32) notConfigured();
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(encoded, key);
  }
  return key;
}

export async function seal(
  masterKeyB64: string | undefined,
  plaintext: string,
  owner: string,
): Promise<string> {
  const iv = randomBytes(12);
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(owner) },
    await masterKey(masterKeyB64),
    encoder.encode(plaintext),
  );
  return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

export async function open(masterKeyB64: string | undefined, boxed: string, owner: string): Promise<string> {
  const [version, iv, body] = boxed.split(".");
  if (version !== VERSION || !iv || !body) throw new Error("Unknown secret box format");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(owner) },
    await masterKey(masterKeyB64),
    fromBase64(body),
  );
  return decoder.decode(plain);
}
