/**
 * Whether the WhatsApp socket is showing a QR, and a way to wait for one: Baileys can only request
 * a pairing code once the socket is up, which the first QR proves.
 */
export class QrGate {
  private showing = false;
  private waiters: Array<(showing: boolean) => void> = [];

  /** Records the QR state and wakes everyone waiting (with false when the QR went away). */
  set(showing: boolean): void {
    this.showing = showing;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter(showing);
  }

  /** True as soon as a QR shows; false if it does not within `timeoutMs` or the socket closes. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.showing) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      const done = (showing: boolean) => {
        clearTimeout(timer);
        resolve(showing);
      };
      this.waiters.push(done);
    });
  }
}
