/**
 * One app-state change (archive, mute, pin, star, labels) as WhatsApp answers it. WhatsApp refuses a
 * patch inside its answer (`<sync><collection name type="error"><error code text/>`): 409 when another
 * device moved the collection on between Baileys' resync and its upload, 400 for one it cannot verify.
 * Baileys (7.0.0-rc14, `appPatch`) ignores that answer, reports success and keeps the refused patch in
 * its local state, so every later patch would be refused too. Here the answer is read off the socket:
 * a refusal fails the operation, and the collection's local state is dropped so the next change
 * resyncs it from WhatsApp first.
 */
import type { BinaryNode, WASocket } from "@whiskeysockets/baileys";
import { OperationError } from "../protocol/seam.ts";

export type AppStateSocket = Pick<WASocket, "ws" | "authState">;

interface Refusal {
  collection: string;
  code: string;
  text: string;
}

const children = (node: BinaryNode | undefined, tag: string): BinaryNode[] =>
  Array.isArray(node?.content) ? node.content.filter((child) => child.tag === tag) : [];

/** The collections an iq answer refuses (none for anything else). */
function refusalsIn(frame: unknown): Refusal[] {
  const node = frame as BinaryNode;
  if (node?.tag !== "iq" || node.attrs?.type !== "result") return [];
  return children(node, "sync").flatMap((sync) =>
    children(sync, "collection")
      .filter((collection) => collection.attrs.type === "error")
      .map((collection) => {
        const error = children(collection, "error")[0];
        return {
          collection: collection.attrs.name ?? "",
          code: error?.attrs.code ?? "",
          text: error?.attrs.text ?? "",
        };
      }),
  );
}

export async function appStateChange(sock: AppStateSocket, change: () => Promise<void>): Promise<void> {
  const refusals: Refusal[] = [];
  const onFrame = (frame: unknown) => refusals.push(...refusalsIn(frame));
  sock.ws.on("frame", onFrame);
  try {
    await change();
  } finally {
    sock.ws.off("frame", onFrame);
  }
  const [refusal] = refusals;
  if (!refusal) return;
  await sock.authState.keys.set({
    "app-state-sync-version": Object.fromEntries(refusals.map(({ collection }) => [collection, null])),
  });
  const status = refusal.code === "409" ? 409 : 400;
  const why =
    status === 409 ? "another device changed it meanwhile; try again" : `${refusal.code} ${refusal.text}`;
  throw new OperationError(status, `WhatsApp refused the change to ${refusal.collection}: ${why}`);
}
