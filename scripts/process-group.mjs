// Process groups on POSIX: a child spawned with `detached: true` leads its own group, so one signal
// reaches it and everything it started (wrangler's workerd, tsx's node). Used by `npm start` and the
// benchmarks, which must never leave a process behind.

/** True while any process of the group still exists (zombies included). */
export function groupIsAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to the whole group; a group that is already gone is not an error. */
export function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
