import type { SessionContext } from "./context";
import type { MessageResource } from "./message-view";

/** Bot commands and keyword auto-replies for a live message (placeholder until implemented). */
export async function reactToLiveMessage(_ctx: SessionContext, _message: MessageResource): Promise<void> {}
