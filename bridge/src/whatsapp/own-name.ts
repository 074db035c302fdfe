/**
 * The account's own name as the edge last heard it. Baileys keeps it in `creds.me.name` and updates it
 * from the push-name app-state setting (`setting_pushName`, changed on the phone or echoed from this
 * device's own `updateProfileName`) and from the account's own messages. Each change after the open
 * is reported once; before the open, `connected` carries it. Loaded only by whatsapp.ts.
 */
import type { AuthenticationCreds } from "@whiskeysockets/baileys";
import type { Me } from "../protocol/link.ts";

export function meOf(creds: AuthenticationCreds): Me {
  const name = creds.me?.name ?? creds.me?.notify ?? creds.me?.verifiedName;
  return { id: creds.me?.id ?? "", ...(name ? { name: name.slice(0, 256) } : {}) };
}

export class OwnName {
  /** Undefined until the socket is open: the open itself reports the name. */
  private reported: { name: string | undefined } | undefined;

  constructor(private readonly report: (me: Me) => void) {}

  opened(me: Me): void {
    this.reported = { name: me.name };
  }

  /** After each creds update. */
  credsChanged(me: Me): void {
    if (!this.reported || this.reported.name === me.name) return;
    this.reported = { name: me.name };
    this.report(me);
  }
}
