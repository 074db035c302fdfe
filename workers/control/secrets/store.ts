import { and, eq, inArray, or } from "drizzle-orm";
import { sha256Hex } from "../../auth/crypto";
import { open, seal } from "../../auth/secret-box";
import type { Env } from "../../core/env";
import type { Db } from "../../db/client";
import { iso } from "../../db/client";
import { type CompanySecretRow, companySecrets, companySecretVersions } from "../../db/schema";
import { type Redactable, Scrubber } from "./scrub";

/**
 * Company secrets: values sealed with AES-256-GCM under SECRETS_MASTER_KEY (the secret id is the
 * additional data, so a ciphertext moved to another secret does not open), plus their SHA-256 so
 * "did the value change?" needs no decryption. Values leave this module only through
 * resolveSecretEnv, into a run's environment, and companyScrubber, which removes them from run
 * output; never into a response, the activity log or a log line.
 */

/** Keys as the spec allows them: `[a-z0-9_.-]`. */
export const SECRET_KEY_PATTERN = /^[a-z0-9_.-]+$/;
export const SECRET_KEY_MAX = 128;
/** 64 KiB of UTF-8: enough for a certificate bundle, small enough for an environment variable. */
export const SECRET_VALUE_MAX_BYTES = 64 * 1024;

/** `"OpenAI API Key"` → `"openai_api_key"`: lower-cased, anything outside the key alphabet becomes `_`. */
export const deriveSecretKey = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]/g, "_")
    .slice(0, SECRET_KEY_MAX);

export const utf8Length = (value: string): number => new TextEncoder().encode(value).length;

export interface SealedVersion {
  secretId: string;
  version: number;
  ciphertext: string;
  valueSha256: string;
  createdAt: number;
}

export async function sealVersion(
  env: Env,
  secretId: string,
  version: number,
  value: string,
  now: number,
): Promise<SealedVersion> {
  const [ciphertext, valueSha256] = await Promise.all([
    seal(env.SECRETS_MASTER_KEY, value, secretId),
    sha256Hex(value),
  ]);
  return { secretId, version, ciphertext, valueSha256, createdAt: now };
}

/** Metadata only: there is deliberately no field that could carry the value or its ciphertext. */
export const secretResource = (row: CompanySecretRow) => ({
  id: row.id,
  companyId: row.companyId,
  name: row.name,
  key: row.key,
  description: row.description,
  latestVersion: row.latestVersion,
  createdByUserId: row.createdByUserId,
  createdByAgentId: row.createdByAgentId,
  createdAt: iso(row.createdAt),
  updatedAt: iso(row.updatedAt),
});

/** Whether `value` differs from the latest version's (compared by SHA-256, nothing is decrypted). */
export async function valueChanged(db: Db, row: CompanySecretRow, value: string): Promise<boolean> {
  const [latest, digest] = await Promise.all([
    db
      .select({ valueSha256: companySecretVersions.valueSha256 })
      .from(companySecretVersions)
      .where(
        and(eq(companySecretVersions.secretId, row.id), eq(companySecretVersions.version, row.latestVersion)),
      )
      .get(),
    sha256Hex(value),
  ]);
  return latest?.valueSha256 !== digest;
}

export interface SecretRef {
  variable: string;
  secretId: string;
  version: "latest" | number;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const invalid = (variable: string, why: string) => new Error(`adapterConfig.env.${variable}: ${why}`);

/** Why a reference's pinned version cannot be handed out (only the current one can), or null. */
function staleVersion(ref: SecretRef, latest: number): string | null {
  if (ref.version === "latest" || ref.version === latest) return null;
  if (ref.version > latest) return `version ${ref.version} of secret ${ref.secretId} does not exist`;
  return (
    `version ${ref.version} of secret ${ref.secretId} was rotated away (the current one is ${latest}); ` +
    'bind "latest" or the current version'
  );
}

/** One env entry: a plain string, or a reference `{type: "secret_ref", secretId, version?}`. */
function parseEntry(variable: string, value: unknown): string | SecretRef {
  if (variable === "" || variable.includes("=") || variable.includes("\0"))
    throw invalid(variable, "is not a valid environment variable name");
  if (typeof value === "string") return value;
  if (!isPlainObject(value) || value.type !== "secret_ref")
    throw invalid(
      variable,
      'must be a string or {"type": "secret_ref", "secretId": "…", "version"?: "latest" | n}',
    );
  const { secretId, version = "latest" } = value;
  if (typeof secretId !== "string" || secretId === "") throw invalid(variable, "secret_ref needs a secretId");
  if (version !== "latest" && !(typeof version === "number" && Number.isInteger(version) && version >= 1))
    throw invalid(variable, 'secret_ref version must be "latest" or a positive integer');
  return { variable, secretId, version };
}

/**
 * The run's environment from `adapterConfig.env`: plain strings as they are, secret references
 * decrypted. A reference to a secret that does not exist in `companyId` (including another
 * company's), to a missing version, or one that does not decrypt throws an Error naming the
 * variable; the runner fails the run with that message (which never contains a value).
 */
export async function resolveSecretEnv(
  env: Env,
  db: Db,
  companyId: string,
  adapterEnv: unknown,
): Promise<Record<string, string>> {
  if (adapterEnv === undefined || adapterEnv === null) return {};
  if (!isPlainObject(adapterEnv))
    throw new Error("adapterConfig.env must be an object of VARIABLE → string or secret_ref");
  const resolved: Record<string, string> = {};
  const refs: SecretRef[] = [];
  for (const [variable, value] of Object.entries(adapterEnv)) {
    const entry = parseEntry(variable, value);
    if (typeof entry === "string") resolved[variable] = entry;
    else refs.push(entry);
  }
  if (refs.length === 0) return resolved;
  const values = await decryptRefs(env, db, companyId, refs);
  for (const ref of refs) resolved[ref.variable] = values.get(ref.variable) ?? "";
  return resolved;
}

/** The current version of each secret the references name, of `companyId` only (others are absent). */
async function latestVersions(db: Db, companyId: string, refs: SecretRef[]): Promise<Map<string, number>> {
  const ids = [...new Set(refs.map((ref) => ref.secretId))];
  const secrets = await db
    .select({ id: companySecrets.id, latestVersion: companySecrets.latestVersion })
    .from(companySecrets)
    .where(and(eq(companySecrets.companyId, companyId), inArray(companySecrets.id, ids)));
  return new Map(secrets.map((row) => [row.id, row.latestVersion]));
}

/** Two queries whatever the number of references: the secrets, then exactly the versions named. */
async function decryptRefs(
  env: Env,
  db: Db,
  companyId: string,
  refs: SecretRef[],
): Promise<Map<string, string>> {
  const latest = await latestVersions(db, companyId, refs);
  const wanted = refs.map((ref) => {
    const latestVersion = latest.get(ref.secretId);
    if (latestVersion === undefined)
      throw invalid(ref.variable, `secret ${ref.secretId} does not exist in this company`);
    // Rotating a secret retires its old value: a reference pinned to it gets nothing, never the old value.
    const stale = staleVersion(ref, latestVersion);
    if (stale) throw invalid(ref.variable, stale);
    return { ...ref, version: latestVersion };
  });
  const versions = await db
    .select()
    .from(companySecretVersions)
    .where(
      or(
        ...wanted.map((ref) =>
          and(
            eq(companySecretVersions.secretId, ref.secretId),
            eq(companySecretVersions.version, ref.version),
          ),
        ),
      ),
    );
  const out = new Map<string, string>();
  for (const ref of wanted) {
    const row = versions.find((v) => v.secretId === ref.secretId && v.version === ref.version);
    if (!row) throw invalid(ref.variable, `version ${ref.version} of secret ${ref.secretId} does not exist`);
    try {
      out.set(ref.variable, await open(env.SECRETS_MASTER_KEY, row.ciphertext, row.secretId));
    } catch {
      throw invalid(
        ref.variable,
        `secret ${ref.secretId} could not be decrypted (is SECRETS_MASTER_KEY the one it was sealed with?)`,
      );
    }
  }
  return out;
}

/**
 * The secret references of an adapterConfig.env, as `VARIABLE → secretId@version`, to compare what
 * two configurations bind. Entries that are not references (or not well-formed ones) are skipped:
 * resolveSecretEnv reports those when a run starts.
 */
export function secretBindings(adapterEnv: unknown): Map<string, string> {
  const bindings = new Map<string, string>();
  if (!isPlainObject(adapterEnv)) return bindings;
  for (const [variable, value] of Object.entries(adapterEnv)) {
    if (!isPlainObject(value) || value.type !== "secret_ref") continue;
    bindings.set(variable, `${String(value.secretId)}@${String(value.version ?? "latest")}`);
  }
  return bindings;
}

/**
 * Checks the secret references of an adapterConfig.env as it is saved: each well-formed, of a
 * secret of `companyId`, and not pinned to a version rotated away. Answers why not, or null.
 */
export async function bindingProblem(db: Db, companyId: string, adapterEnv: unknown): Promise<string | null> {
  if (!isPlainObject(adapterEnv)) return null;
  const refs: SecretRef[] = [];
  try {
    for (const [variable, value] of Object.entries(adapterEnv)) {
      if (!isPlainObject(value)) continue;
      const entry = parseEntry(variable, value);
      if (typeof entry !== "string") refs.push(entry);
    }
  } catch (error) {
    return (error as Error).message;
  }
  if (refs.length === 0) return null;
  const latest = await latestVersions(db, companyId, refs);
  for (const ref of refs) {
    const current = latest.get(ref.secretId);
    if (current === undefined)
      return `adapterConfig.env.${ref.variable}: secret ${ref.secretId} does not exist in this company`;
    const stale = staleVersion(ref, current);
    if (stale) return `adapterConfig.env.${ref.variable}: ${stale}`;
  }
  return null;
}

/**
 * A scrubber for the output of `companyId`'s runs: every version of every secret of the company
 * (rotated-away values leak as badly as current ones), labelled by the secret's key. A version that
 * does not decrypt (another master key) cannot be in any run's environment either, and is skipped.
 */
export async function companyScrubber(env: Env, db: Db, companyId: string): Promise<Scrubber> {
  const rows = await db
    .select({
      secretId: companySecretVersions.secretId,
      ciphertext: companySecretVersions.ciphertext,
      key: companySecrets.key,
    })
    .from(companySecretVersions)
    .innerJoin(companySecrets, eq(companySecrets.id, companySecretVersions.secretId))
    .where(eq(companySecrets.companyId, companyId));
  const secrets = await Promise.all(
    rows.map(async (row): Promise<Redactable | null> => {
      try {
        return { label: row.key, value: await open(env.SECRETS_MASTER_KEY, row.ciphertext, row.secretId) };
      } catch {
        return null;
      }
    }),
  );
  return new Scrubber(secrets.filter((secret): secret is Redactable => secret !== null));
}
