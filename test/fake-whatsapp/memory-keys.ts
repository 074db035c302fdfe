/** Signal keys kept in a Map (`<type>:<id>`), for the fake's parties and for test clients of Baileys. */
import type { SignalDataSet, SignalDataTypeMap, SignalKeyStore } from "@whiskeysockets/baileys";

export function memoryKeyStore(stored: Map<string, unknown> = new Map()): SignalKeyStore {
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = stored.get(`${type}:${id}`);
        if (value !== undefined) found[id] = value as SignalDataTypeMap[T];
      }
      return found;
    },
    async set(data: SignalDataSet) {
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) stored.delete(`${type}:${id}`);
          else stored.set(`${type}:${id}`, value);
        }
      }
    },
  };
}
