// The session page's send pacing fields (settings form): what they say, that a user sets them from the
// page, and that a value out of the API's bounds is shown at its field and changes nothing.
import { describe, expect, it } from "vitest";
import { asSession, call, createUser, type Session } from "../helpers";
import { browse, fieldError, type PageResponse, submit, textOf } from "./helpers";

type Envelope<T> = { status: boolean; data: T };

/** The viewer's cookie plus the flash cookie a 303 set, as the browser sends them on the next GET. */
async function follow(viewer: Session, res: PageResponse): Promise<PageResponse> {
  expect(res.status, res.html.slice(0, 500)).toBe(303);
  const flash = (res.headers.get("set-cookie") ?? "").match(/dashboard\.flash=[^;]*/)?.[0];
  return browse(
    { ...viewer, cookie: flash ? `${viewer.cookie}; ${flash}` : viewer.cookie },
    res.location ?? "/",
  );
}

const flashOf = (html: string) => html.match(/<p class="flash" role="status">([\s\S]*?)<\/p>/)?.[1] ?? null;

/** A session of `viewer`, created through the API (stopped). */
async function newSession(viewer: Session): Promise<{ slug: string }> {
  const res = await call<Envelope<{ sessionId: string }>>("POST", "/api/sessions", {
    body: { name: "Paced" },
    headers: asSession(viewer),
  });
  expect(res.status).toBe(200);
  return { slug: res.body.data.sessionId };
}

const owner = () => createUser("OWNER");

describe("dashboard session settings: send pacing", () => {
  it("sets send pacing (gap and typing, in ms) from the settings form; out of bounds is shown at the field", async () => {
    const viewer = await owner();
    const session = await newSession(viewer);
    const settingsOf = async () =>
      (
        await call<Envelope<{ config: Record<string, unknown> }>>(
          "GET",
          `/api/sessions/${session.slug}/settings`,
          {
            headers: asSession(viewer),
          },
        )
      ).body.data.config;
    /** The number input `name` as the page renders it: its value, and the label and hint a reader sees. */
    const input = (html: string, name: string) => ({
      value: html.match(new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`))?.[1] ?? null,
      number: new RegExp(
        `<input[^>]*type="number"[^>]*name="${name}"|<input[^>]*name="${name}"[^>]*type="number"`,
      ).test(html),
    });

    const page = await browse(viewer, `/sessions/${session.slug}`);
    expect(textOf(page.html)).toContain("Minimum gap between sends (ms)");
    expect(textOf(page.html)).toContain("0 to 60000");
    expect(textOf(page.html)).toContain("Typing before each send (ms)");
    expect(textOf(page.html)).toContain("0 to 10000");
    expect(input(page.html, "sendGapMs")).toEqual({ value: "0", number: true });
    expect(input(page.html, "typingMs")).toEqual({ value: "0", number: true });

    const saved = await submit(viewer, `/sessions/${session.slug}/settings`, {
      readReceipts: "on",
      sendGapMs: "2500",
      typingMs: "1200",
    });
    const after = await follow(viewer, saved);
    expect(flashOf(after.html)).toBe("Settings saved");
    expect(await settingsOf()).toMatchObject({ readReceipts: true, sendGapMs: 2500, typingMs: 1200 });
    expect(input(after.html, "sendGapMs").value).toBe("2500");
    expect(input(after.html, "typingMs").value).toBe("1200");

    const bad = await submit(viewer, `/sessions/${session.slug}/settings`, {
      sendGapMs: "90000",
      typingMs: "500",
    });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.html, "sendGapMs")).toMatch(/60000|60,000|too big/i);
    expect(input(bad.html, "sendGapMs").value).toBe("90000");
    expect(await settingsOf()).toMatchObject({ sendGapMs: 2500, typingMs: 1200 });

    // An emptied field turns pacing off.
    const cleared = await submit(viewer, `/sessions/${session.slug}/settings`, {
      sendGapMs: "",
      typingMs: "",
    });
    expect(flashOf((await follow(viewer, cleared)).html)).toBe("Settings saved");
    expect(await settingsOf()).toMatchObject({ sendGapMs: 0, typingMs: 0 });
  });
});
