/**
 * WhatsApp groups: reading, joining and leaving (routes.ts) and changing one group (admin.ts).
 *
 * This index is what the rest of the code may import from here.
 */
export { GroupParamsSchema, GroupSchema } from "./schemas";
