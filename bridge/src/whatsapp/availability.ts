/**
 * The account's availability to everyone, as the session's `alwaysOnline` asks for it (the edge sends
 * the `availability` operation on every connect and when the setting changes). Baileys sends
 * `<presence type="available|unavailable" name=…>` only once it knows the account's push name
 * (`creds.me.name`: from pairing for business accounts, app-state sync, or the account's own messages)
 * and silently drops the request before, as WhatsApp wants the name with it (whatsmeow refuses too).
 * So the wanted state is remembered and sent again once the name arrives. Loaded only by whatsapp.ts.
 */
export class Availability {
  private wanted: boolean | null = null;
  /** The last request went out with the name known, so Baileys really sent it. */
  private delivered = false;

  constructor(
    private readonly send: (online: boolean) => Promise<void>,
    private readonly nameKnown: () => boolean,
  ) {}

  /** Called as the `availability` operation is performed (which sends it once itself). */
  want(online: boolean): void {
    this.wanted = online;
    this.delivered = this.nameKnown();
  }

  /** After each creds update: if the name just became known, the wanted state goes out now. */
  credsChanged(onError: (error: unknown) => void): void {
    if (this.wanted === null || this.delivered || !this.nameKnown()) return;
    this.delivered = true;
    this.send(this.wanted).catch(onError);
  }
}
