import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { BASE, call, fetchWorker } from "../../helpers";
import { activityOf, type BoardUser, boardUser, type SeededCompany, seedCompany, seedOrg } from "../helpers";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const GIF_HEADER = [...new TextEncoder().encode("GIF89a")];

/** Signature bytes followed by `size` bytes in all, with a varying tail so byte-identity means something. */
function image(header: number[], size = 256): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set(header);
  for (let i = header.length; i < size; i++) bytes[i] = (i * 31) % 256;
  return bytes;
}

function form(bytes: Uint8Array | null, type: string, field = "file"): FormData {
  const data = new FormData();
  if (bytes) data.append(field, new File([bytes], "logo", { type }));
  else data.append("other", "value");
  return data;
}

let owner: BoardUser;
let company: SeededCompany;
let org: Awaited<ReturnType<typeof seedOrg>>;

beforeAll(async () => {
  owner = await boardUser();
  company = await seedCompany(owner);
  org = await seedOrg(company.id);
});

const upload = (body: BodyInit, headers: Record<string, string> = owner.headers, id = company.id) =>
  call<{ assetId: string; error?: string }>("POST", `/api/companies/${id}/logo`, { rawBody: body, headers });

const assetCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM company_assets").first<{ n: number }>())?.n ?? 0;

describe("POST /api/companies/{id}/logo", () => {
  it("stores the image in R2 and company_assets, serves it back byte-identical, and can become the logo", async () => {
    const bytes = image(PNG_SIGNATURE, 4096);
    const res = await upload(form(bytes, "image/png"));
    expect(res.status).toBe(201);
    const { assetId } = res.body;
    expect(Object.keys(res.body)).toEqual(["assetId"]);

    const object = await env.ASSETS.get(`companies/${company.id}/logos/${assetId}`);
    expect(object).not.toBeNull();
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(bytes);
    const row = await env.DB.prepare("SELECT * FROM company_assets WHERE id = ?")
      .bind(assetId)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({
      company_id: company.id,
      kind: "logo",
      content_type: "image/png",
      byte_size: 4096,
      created_by_user_id: owner.userId,
    });

    const served = await fetchAsset(company.id, assetId, owner.headers);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);

    const patched = await call("PATCH", `/api/companies/${company.id}`, {
      body: { logoAssetId: assetId },
      headers: owner.headers,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ logoAssetId: assetId });
    expect((await activityOf(company.id)).map((entry) => entry.action)).toEqual([
      "company.logo_uploaded",
      "company.updated",
    ]);
  });

  it("accepts the CEO agent (JPEG) and refuses other agents with 403", async () => {
    const jpeg = image([0xff, 0xd8, 0xff, 0xe0]);
    const res = await upload(form(jpeg, "image/jpeg"), org.ceo.headers);
    expect(res.status).toBe(201);
    const before = await assetCount();
    expect((await upload(form(jpeg, "image/jpeg"), org.engineer.headers)).status).toBe(403);
    expect(await assetCount()).toBe(before);
  });

  it("answers 415 for a type outside png/jpeg/webp/gif, and for a body that is not multipart", async () => {
    const before = await assetCount();
    const text = await upload(form(new TextEncoder().encode("hello"), "text/plain"));
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ code: "unsupported_media_type" });
    const svg = await upload(form(new TextEncoder().encode("<svg/>"), "image/svg+xml"));
    expect(svg.status).toBe(415);
    const raw = await upload(image(PNG_SIGNATURE), { ...owner.headers, "content-type": "image/png" });
    expect(raw.status).toBe(415);
    expect(await assetCount()).toBe(before);
  });

  it("answers 413 above 2 MiB", async () => {
    const res = await upload(form(image(PNG_SIGNATURE, 2 * 1024 * 1024 + 1), "image/png"));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: "payload_too_large" });
    const exact = await upload(form(image(PNG_SIGNATURE, 2 * 1024 * 1024), "image/png"));
    expect(exact.status).toBe(201);
  });

  it("answers 400 when the file is missing or empty", async () => {
    expect((await upload(form(null, "image/png"))).status).toBe(400);
    expect((await upload(form(new Uint8Array(0), "image/png"))).status).toBe(400);
  });

  it("answers 400 when the bytes are not the declared type", async () => {
    const before = await assetCount();
    const gifAsPng = await upload(form(image(GIF_HEADER), "image/png"));
    expect(gifAsPng.status).toBe(400);
    expect(gifAsPng.body.error).toContain("declared as image/png");
    const textAsGif = await upload(form(new TextEncoder().encode("not an image at all"), "image/gif"));
    expect(textAsGif.status).toBe(400);
    expect(await assetCount()).toBe(before);
  });

  it("answers 404 for a company the caller cannot see", async () => {
    const outsider = await boardUser();
    expect((await upload(form(image(PNG_SIGNATURE), "image/png"), outsider.headers)).status).toBe(404);
    const other = await seedCompany(outsider);
    expect((await upload(form(image(PNG_SIGNATURE), "image/png"), owner.headers, other.id)).status).toBe(404);
  });
});

/** Raw fetch: the asset route answers bytes, which `call()` would try to decode as text. */
const fetchAsset = (companyId: string, assetId: string, headers: Record<string, string>) =>
  fetchWorker(`${BASE}/api/companies/${companyId}/assets/${assetId}`, { headers });

describe("GET /api/companies/{id}/assets/{assetId}", () => {
  it("serves to the company's agents and answers 404 across companies and for unknown ids", async () => {
    const res = await upload(form(image(GIF_HEADER), "image/gif"));
    expect(res.status).toBe(201);
    const byAgent = await fetchAsset(company.id, res.body.assetId, org.engineer.headers);
    expect(byAgent.status).toBe(200);
    expect(byAgent.headers.get("content-type")).toBe("image/gif");

    const outsider = await boardUser();
    const other = await seedCompany(outsider);
    const crossPath = await fetchAsset(other.id, res.body.assetId, outsider.headers);
    const crossCaller = await fetchAsset(company.id, res.body.assetId, outsider.headers);
    const unknown = await fetchAsset(company.id, crypto.randomUUID(), owner.headers);
    for (const response of [crossPath, crossCaller, unknown]) expect(response.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "Asset not found", code: "not_found" });
  });
});
